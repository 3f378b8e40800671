//! Markdown blocks, the units recall finds and cites: paragraphs, list runs
//! and code fences, each with its nearest heading as context and its exact
//! 1-based line range, so a citation `path:start-end` opens on the text.
//! Front matter is not a block (but its lines still count).

use crate::memory::front_matter;

/// A paragraph, list or section of a markdown file: what recall cites.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryBlock {
    /// First and last line, 1-based, inclusive.
    pub start: usize,
    /// Last line, 1-based, inclusive.
    pub end: usize,
    /// The nearest heading above, without its `#`s (empty when none).
    pub heading: String,
    /// The block's text.
    pub text: String,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum BlockKind {
    Paragraph,
    List,
}

/// Splits a markdown file into blocks.
pub fn split(text: &str) -> Vec<MemoryBlock> {
    let lines: Vec<&str> = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let first_body_line = match front_matter::split(text) {
        Ok(split) if split.yaml.is_some() => split.body_line,
        Err(_) => 1,
        Ok(_) => 1,
    };
    let mut blocks = Vec::new();
    let mut heading = String::new();
    let mut current: Option<(BlockKind, usize, Vec<&str>)> = None;
    let mut fence: Option<(usize, String, Vec<&str>)> = None;

    let flush = |current: &mut Option<(BlockKind, usize, Vec<&str>)>,
                 blocks: &mut Vec<MemoryBlock>,
                 heading: &str| {
        if let Some((_, start, body)) = current.take() {
            let text = body.join("\n").trim().to_string();
            if !text.is_empty() {
                blocks.push(MemoryBlock {
                    start,
                    end: start + body.len() - 1,
                    heading: heading.to_string(),
                    text,
                });
            }
        }
    };

    for (i, line) in lines.iter().enumerate() {
        let number = i + 1;
        if number < first_body_line {
            continue;
        }
        if let Some((start, marker, body)) = fence.as_mut() {
            body.push(line);
            if line.trim_start().starts_with(marker.as_str()) {
                blocks.push(MemoryBlock {
                    start: *start,
                    end: number,
                    heading: heading.clone(),
                    text: body.join("\n"),
                });
                fence = None;
            }
            continue;
        }
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            flush(&mut current, &mut blocks, &heading);
            let marker: String = trimmed
                .chars()
                .take_while(|c| *c == '`' || *c == '~')
                .collect();
            fence = Some((number, marker, vec![line]));
            continue;
        }
        if let Some(title) = heading_text(trimmed) {
            flush(&mut current, &mut blocks, &heading);
            heading = title;
            continue;
        }
        if trimmed.is_empty() {
            flush(&mut current, &mut blocks, &heading);
            continue;
        }
        let kind = if is_list_item(trimmed) {
            BlockKind::List
        } else {
            BlockKind::Paragraph
        };
        match current.as_mut() {
            // A list item continues a list; an indented line continues
            // whatever is open; anything else starts a new block.
            Some((open, _, body))
                if *open == kind || (line.starts_with([' ', '\t']) && *open == BlockKind::List) =>
            {
                body.push(line)
            }
            Some((BlockKind::Paragraph, _, body)) if kind == BlockKind::Paragraph => {
                body.push(line)
            }
            _ => {
                flush(&mut current, &mut blocks, &heading);
                current = Some((kind, number, vec![line]));
            }
        }
    }
    flush(&mut current, &mut blocks, &heading);
    if let Some((start, _, body)) = fence {
        // An unclosed fence runs to the end of the file.
        blocks.push(MemoryBlock {
            start,
            end: start + body.len() - 1,
            heading,
            text: body.join("\n"),
        });
    }
    blocks
}

fn heading_text(line: &str) -> Option<String> {
    let hashes = line.chars().take_while(|c| *c == '#').count();
    if (1..=6).contains(&hashes) && line[hashes..].starts_with(' ') {
        Some(
            line[hashes..]
                .trim()
                .trim_end_matches('#')
                .trim()
                .to_string(),
        )
    } else {
        None
    }
}

fn is_list_item(line: &str) -> bool {
    if line.starts_with("- ") || line.starts_with("* ") || line.starts_with("+ ") {
        return true;
    }
    let digits = line.chars().take_while(char::is_ascii_digit).count();
    digits > 0 && (line[digits..].starts_with(". ") || line[digits..].starts_with(") "))
}

/// The label a block opens with — `Ingrid: …`, `[D3:1] Caroline: …`,
/// `- **Owner:** …` — which says whom or what the block is about, as a
/// heading does for the blocks under it: one to three words (letters,
/// digits, `'`, `-`, `.`) before a colon that ends a word, after an
/// optional bracketed id and list or bold marker. `12:30`, `http://…`
/// and a sentence with a colon in it have none.
pub fn label(text: &str) -> Option<&str> {
    let mut rest = text.trim_start();
    if rest.starts_with('[') {
        let close = rest.find(']')?;
        rest = rest[close + 1..].trim_start();
    }
    for marker in ["- ", "* ", "+ "] {
        if let Some(r) = rest.strip_prefix(marker) {
            rest = r.trim_start();
        }
    }
    let rest = rest.trim_start_matches(['*', '_']);
    let colon = rest.get(..rest.len().min(48))?.find(':')?;
    let (label, after) = (
        rest[..colon].trim_end_matches(['*', '_']),
        &rest[colon + 1..],
    );
    let after = after.trim_start_matches(['*', '_']);
    if !(after.is_empty() || after.starts_with(char::is_whitespace)) {
        return None;
    }
    let words: Vec<&str> = label.split_whitespace().collect();
    let wordlike = |w: &&str| {
        w.chars().next().is_some_and(char::is_alphabetic)
            && w.chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '\'' | '’' | '-' | '.'))
    };
    (!words.is_empty() && words.len() <= 3 && words.iter().all(wordlike)).then_some(label)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spans(text: &str) -> Vec<(usize, usize, String)> {
        split(text)
            .into_iter()
            .map(|b| (b.start, b.end, b.heading))
            .collect()
    }

    #[test]
    fn a_block_that_opens_with_a_label_is_about_it() {
        assert_eq!(
            label("[D3:1] Caroline: I went to a group"),
            Some("Caroline")
        );
        assert_eq!(
            label("Ingrid Vale: keeper of the light"),
            Some("Ingrid Vale")
        );
        assert_eq!(label("- **Owner:** the operator"), Some("Owner"));
        assert_eq!(label("Met at 12:30 by the pier"), None);
        assert_eq!(label("see https://example.org: it"), None);
        assert_eq!(label("We met on Tuesday and she said: go"), None);
        assert_eq!(label("The plan is simple"), None);
    }

    #[test]
    fn paragraphs_lists_and_fences_with_headings() {
        let text = "# Music\n\nColtrane played\nthe saxophone.\n\n- one\n- two\n  more\n- three\n\n## Code\n```rust\nfn main() {}\n\n```\nafter\n";
        assert_eq!(
            spans(text),
            vec![
                (3, 4, "Music".into()),
                (6, 9, "Music".into()),
                (12, 15, "Code".into()),
                (16, 16, "Code".into()),
            ]
        );
        let blocks = split(text);
        assert_eq!(blocks[0].text, "Coltrane played\nthe saxophone.");
        assert!(
            blocks[2].text.contains("fn main() {}\n\n```"),
            "a fence keeps its blank lines"
        );
    }

    #[test]
    fn front_matter_is_not_a_block_but_its_lines_count() {
        let text = "---\ntitle: X\ntags: [a]\n---\nfirst paragraph\n";
        assert_eq!(spans(text), vec![(5, 5, String::new())]);
        assert!(split("---\ntitle: only\n---\n").is_empty());
    }

    #[test]
    fn crlf_line_endings_give_the_same_ranges() {
        let unix = "# H\n\npara one\nline two\n\n- a\n";
        let dos = unix.replace('\n', "\r\n");
        assert_eq!(spans(unix), spans(&dos));
        assert_eq!(split(&dos)[0].text, "para one\nline two");
    }

    #[test]
    fn a_list_after_a_paragraph_is_its_own_block() {
        assert_eq!(
            spans("Intro line\n- item\n- item\n"),
            vec![(1, 1, String::new()), (2, 3, String::new())]
        );
    }
}
