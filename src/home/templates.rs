//! The files of a new home, embedded in the binary from the project's
//! top-level `memory/`, `state/`, `tools/`, `jobs/` and `supervisor/hearth.toml`, so
//! `hearth init` needs nothing but the executable.

/// (path inside the home, contents)
pub const FILES: &[(&str, &str)] = &[
    ("memory/prompt.md", include_str!("../../memory/prompt.md")),
    (
        "memory/identity.md",
        include_str!("../../memory/identity.md"),
    ),
    (
        "memory/core/values.md",
        include_str!("../../memory/core/values.md"),
    ),
    (
        "memory/journal/README.md",
        include_str!("../../memory/journal/README.md"),
    ),
    ("state/README.md", include_str!("../../state/README.md")),
    ("tools/README.md", include_str!("../../tools/README.md")),
    ("jobs/README.md", include_str!("../../jobs/README.md")),
];

/// The reference configuration, every value at its default.
pub const REFERENCE_CONFIG: &str = include_str!("../../supervisor/hearth.toml");

/// Editor droppings and hearth's runtime directory never enter history.
/// (`4913` is the file vim creates to test that a directory is writable.)
pub const GITIGNORE: &str = "\
# hearth's runtime files: index, locks, status (a rebuildable cache)
/.hearth/
# editor temp files
*.swp
*.swo
*.swx
*~
.#*
4913
";

/// The home's `hearth.toml`: the reference with every setting commented
/// out, so the home runs on defaults and shows the operator every knob.
pub fn commented_config() -> String {
    let mut out = String::new();
    for line in REFERENCE_CONFIG.lines() {
        let trimmed = line.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            out.push_str(line);
        } else {
            out.push_str("# ");
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use std::path::Path;

    #[test]
    fn the_commented_config_is_the_zero_configuration() {
        let text = commented_config();
        let parsed: toml::Table = toml::from_str(&text).unwrap();
        assert!(parsed.is_empty(), "every setting is commented out");
        let config = Config::parse(Path::new("hearth.toml"), &text).unwrap();
        assert_eq!(config, Config::default());
    }
}
