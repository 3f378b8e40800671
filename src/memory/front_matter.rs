//! YAML front matter: the `---` block at the top of a memory file.
//!
//! Keys hearth reads: `title` (string), `tags` (a list, or one string of
//! comma-separated tags, since editors write both), `core` and `must_read`
//! (booleans). Other keys are kept in the file and ignored here. Every error
//! carries the line in the file it is about, so the operator can jump to it.

use yaml_rust2::{Yaml, YamlLoader};

/// What the front matter says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FrontMatter {
    /// `title:`, when given.
    pub title: Option<String>,
    /// `tags:`.
    pub tags: Vec<String>,
    /// `core: true`: loaded in full every tick.
    pub core: bool,
    /// `must_read: true`: the brake requires reading it.
    pub must_read: bool,
}

/// A front matter problem at a 1-based line of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The line, 1-based.
    pub line: usize,
    /// What is wrong, and how to write it instead.
    pub message: String,
}

/// A file split into its front matter and its body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split<'a> {
    /// The raw YAML between the fences, when there is front matter.
    pub yaml: Option<&'a str>,
    /// The text after the front matter.
    pub body: &'a str,
    /// 1-based line where the body starts.
    pub body_line: usize,
}

/// Splits `text` at its front matter fences. A file that opens a `---`
/// block and never closes it is an error at line 1.
pub fn split(text: &str) -> Result<Split<'_>, Problem> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(first_end) = text.find('\n') else {
        return Ok(no_front_matter(text));
    };
    if text[..first_end].trim_end() != "---" {
        return Ok(no_front_matter(text));
    }
    let inner_start = first_end + 1;
    let mut offset = inner_start;
    for (line, raw) in (2..).zip(text[inner_start..].split_inclusive('\n')) {
        let trimmed = raw.trim_end();
        if trimmed == "---" || trimmed == "..." {
            return Ok(Split {
                yaml: Some(&text[inner_start..offset]),
                body: &text[offset + raw.len()..],
                body_line: line + 1,
            });
        }
        offset += raw.len();
    }
    Err(Problem {
        line: 1,
        message: "front matter opened with `---` is never closed (add a `---` line after it)"
            .into(),
    })
}

fn no_front_matter(text: &str) -> Split<'_> {
    Split {
        yaml: None,
        body: text,
        body_line: 1,
    }
}

/// Parses the YAML of a front matter block (`yaml` starts at line 2 of the
/// file).
pub fn parse(yaml: &str) -> Result<FrontMatter, Problem> {
    let docs = YamlLoader::load_from_str(yaml).map_err(|e| Problem {
        line: e.marker().line() + 1,
        message: format!("front matter is not valid YAML: {}", e.info()),
    })?;
    let root = match docs.into_iter().next() {
        None | Some(Yaml::Null) => return Ok(FrontMatter::default()),
        Some(Yaml::Hash(hash)) => hash,
        Some(_) => {
            return Err(Problem {
                line: 2,
                message: "front matter must be `key: value` lines".into(),
            })
        }
    };
    let mut front = FrontMatter::default();
    for (key, value) in root {
        let Some(key) = key.as_str() else { continue };
        let wrong = |expected: &str| Problem {
            line: key_line(yaml, key),
            message: format!("`{key}` must be {expected}, not {}", describe(&value)),
        };
        match key {
            "title" => {
                front.title = match &value {
                    Yaml::String(s) => Some(s.trim().to_string()),
                    Yaml::Integer(i) => Some(i.to_string()),
                    Yaml::Real(r) => Some(r.clone()),
                    Yaml::Null => None,
                    _ => return Err(wrong("a string")),
                }
            }
            "tags" => front.tags = tags(yaml, &value)?,
            "core" | "must_read" => {
                let flag = match value {
                    Yaml::Boolean(b) => b,
                    Yaml::Null => false,
                    _ => return Err(wrong("true or false")),
                };
                if key == "core" {
                    front.core = flag;
                } else {
                    front.must_read = flag;
                }
            }
            _ => {}
        }
    }
    Ok(front)
}

/// `tags:` as a list of strings or one comma-separated string.
fn tags(yaml: &str, value: &Yaml) -> Result<Vec<String>, Problem> {
    let problem = |message: String| Problem {
        line: key_line(yaml, "tags"),
        message,
    };
    match value {
        Yaml::String(s) => Ok(s
            .split(',')
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_string)
            .collect()),
        Yaml::Array(items) => {
            let mut tags = Vec::new();
            for item in items {
                match item {
                    Yaml::String(s) if !s.trim().is_empty() => tags.push(s.trim().to_string()),
                    Yaml::String(_) | Yaml::Null => {}
                    other => {
                        let what = describe(other);
                        return Err(problem(format!("`tags` must hold strings, not {what}")));
                    }
                }
            }
            Ok(tags)
        }
        Yaml::Null => Ok(Vec::new()),
        other => Err(problem(format!(
            "`tags` must be a list or a comma-separated string, not {}",
            describe(other)
        ))),
    }
}

/// The file line where `key:` is written (the block starts at line 2).
fn key_line(yaml: &str, key: &str) -> usize {
    yaml.lines()
        .position(|l| {
            l.strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with(':'))
        })
        .map(|i| i + 2)
        .unwrap_or(2)
}

fn describe(value: &Yaml) -> String {
    match value {
        Yaml::String(s) => format!("the string {s:?}"),
        Yaml::Integer(i) => format!("the number {i}"),
        Yaml::Real(r) => format!("the number {r}"),
        Yaml::Boolean(b) => format!("{b}"),
        Yaml::Array(_) => "a list".into(),
        Yaml::Hash(_) => "a mapping".into(),
        _ => "an empty value".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn front(text: &str) -> Result<FrontMatter, Problem> {
        let split = split(text)?;
        parse(split.yaml.unwrap())
    }

    #[test]
    fn list_and_comma_string_tags_mean_the_same() {
        let a = front("---\ntags: [identity, facet:identity]\n---\nbody\n").unwrap();
        let b = front("---\ntags: identity, facet:identity\n---\nbody\n").unwrap();
        let c = front("---\ntags:\n  - identity\n  - facet:identity\n---\n").unwrap();
        assert_eq!(a.tags, ["identity", "facet:identity"]);
        assert_eq!(a, b);
        assert_eq!(a, c);
    }

    #[test]
    fn all_keys_and_unknown_keys() {
        let f = front("---\ntitle: Rules\ncore: true\nmust_read: true\nauthor: me\n---\n").unwrap();
        assert_eq!(f.title.as_deref(), Some("Rules"));
        assert!(f.core && f.must_read);
    }

    #[test]
    fn the_body_starts_after_the_closing_fence() {
        let s = split("---\ntitle: x\n---\n# Heading\ntext\n").unwrap();
        assert_eq!(s.body, "# Heading\ntext\n");
        assert_eq!(s.body_line, 4);
        let none = split("# Just a heading\n").unwrap();
        assert_eq!(none.yaml, None);
        assert_eq!(none.body_line, 1);
        let crlf = split("---\r\ntitle: x\r\n---\r\nbody\r\n").unwrap();
        assert_eq!(crlf.body, "body\r\n");
    }

    #[test]
    fn an_unclosed_fence_is_line_1() {
        let err = split("---\ntitle: x\nno end\n").unwrap_err();
        assert_eq!(err.line, 1);
        assert!(err.message.contains("never closed"));
    }

    #[test]
    fn bad_yaml_names_its_line_in_the_file() {
        let err = front("---\ntitle: ok\ntags: [a, b\ncore: true\n---\n").unwrap_err();
        assert!((3..=5).contains(&err.line), "{err:?}");
        assert!(err.message.contains("not valid YAML"), "{err:?}");
        let err = front("---\ntitle: ok\n  bad: indent: here\n---\n").unwrap_err();
        assert!((2..=3).contains(&err.line), "{err:?}");
    }

    #[test]
    fn wrong_types_name_the_key_and_its_line() {
        let err = front("---\ntitle: ok\ncore: maybe\n---\n").unwrap_err();
        assert_eq!(err.line, 3);
        assert!(
            err.message.contains("`core` must be true or false"),
            "{err:?}"
        );
        let err = front("---\ntags: {a: 1}\n---\n").unwrap_err();
        assert_eq!(err.line, 2);
        let err = front("---\n- just\n- a list\n---\n").unwrap_err();
        assert!(err.message.contains("key: value"));
    }

    #[test]
    fn empty_front_matter_is_fine() {
        assert_eq!(front("---\n---\nbody").unwrap(), FrontMatter::default());
    }
}
