//! `hearth.toml` parsing and checks, on text.

use super::*;

fn parse(text: &str) -> Result<Config, ConfigError> {
    Config::parse(Path::new("home/hearth.toml"), text)
}

#[test]
fn push_settings_parse() {
    let config = parse("[git]\npush = true\nremote = \"backup\"\npush_flare_min = 5\n").unwrap();
    assert!(config.git.push);
    assert_eq!(
        (config.git.remote.as_str(), config.git.push_flare_min),
        ("backup", 5)
    );
}

#[test]
fn peers_and_collaborations_parse_and_are_checked() {
    let config = parse(
        "[peers]\nbob = \"/var/lib/hearth/bob\"\n\
         [collaborations]\nworkdirs = [\"/srv/w1\"]\nmax_rounds = 4\n",
    )
    .unwrap();
    assert_eq!(
        config.peers["bob"],
        collab::PeerAt::Path(PathBuf::from("/var/lib/hearth/bob"))
    );
    assert_eq!(config.collaborations.max_rounds, 4);
    let remote = parse(
        "[peers]\nalice = \"git://host/srv/git/alice.git\"\nfetch_every_s = 10\nfetch_flare_min = 5\n",
    )
    .unwrap();
    assert_eq!(
        (remote.peers.fetch_every_s, remote.peers.fetch_flare_min),
        (10, 5)
    );
    assert_eq!(remote.peers.len(), 1, "settings are not peers");
    let ssh =
        parse("[peers]\nalice = \"ssh://me@host:2222/srv/git/alice.git\"\nfetch_timeout_s = 7\n")
            .unwrap();
    assert_eq!(ssh.peers.fetch_timeout_s, 7);
    assert_eq!(
        ssh.peers["alice"],
        collab::PeerAt::Url("ssh://me@host:2222/srv/git/alice.git".into())
    );
    let err = parse("[peers]\nfetch_flare_mins = 5\n")
        .unwrap_err()
        .to_string();
    assert!(err.contains("not a setting"), "{err}");
    assert_eq!(
        remote.peers["alice"],
        collab::PeerAt::Url("git://host/srv/git/alice.git".into())
    );
    assert!(config.collaborations.allows(Path::new("/srv/w1")));
    assert!(!config.collaborations.allows(Path::new("/srv/w2")));
    for (text, says) in [
        ("[peers]\nBob = \"/h\"\n", "a peer's name"),
        ("[peers]\nbob = \"h/bob\"\n", "absolute path"),
        (
            "[peers]\nalice = \"/var/lib/hearth/alice-prod\"\n",
            "its home directory's name, \"alice-prod\"; write it as alice-prod = ",
        ),
        (
            "[collaborations]\nworkdirs = [\"w1\"]\n",
            "not an absolute path",
        ),
        ("[collaborations]\nmax_rounds = 0\n", "at least 1"),
        (
            "[peers]\nalice = \"http://host/srv/git/alice.git\"\n",
            "reached by ssh://, https://, git:// or file://",
        ),
        (
            "[peers]\nfetch_timeout_s = \"soon\"\n",
            "fetch_timeout_s: a whole number",
        ),
        (
            "[peers]\nalice = \"git://host/srv/git/alice-prod.git\"\n",
            "its repository's name, \"alice-prod\"",
        ),
    ] {
        let err = parse(text).unwrap_err().to_string();
        assert!(err.contains(says), "{text}: {err}");
    }
}

#[test]
fn empty_file_is_all_defaults() {
    let config = parse("").unwrap();
    assert_eq!(config, Config::default());
    assert_eq!(config.tick.interval_s, 900);
    assert_eq!(config.model.provider, ProviderKind::Offline);
    assert_eq!(config.boot.identity_tags, ["identity", "facet:identity"]);
}

#[test]
fn the_shipped_example_parses_to_the_defaults() {
    let text = include_str!("../../supervisor/hearth.toml");
    assert_eq!(parse(text).unwrap(), Config::default());
}

#[test]
fn unknown_key_names_the_key_file_and_line() {
    let err = parse("[tick]\nintreval_s = 5\n").unwrap_err().to_string();
    assert!(err.contains("home/hearth.toml:2:"), "{err}");
    assert!(err.contains("intreval_s"), "{err}");
}

#[test]
fn unknown_section_is_an_error() {
    let err = parse("[modle]\nprovider = \"offline\"\n").unwrap_err();
    assert!(err.to_string().contains("modle"), "{err}");
}

#[test]
fn prices_are_a_map_of_models() {
    let config = parse(
        "[budget.prices.\"claude-sonnet-4-5\"]\ninput_per_mtok = 3.0\noutput_per_mtok = 15.0\n",
    )
    .unwrap();
    assert_eq!(
        config.budget.prices["claude-sonnet-4-5"].output_per_mtok,
        15.0
    );
}

#[test]
fn malformed_toml_reports_the_line() {
    let err = parse("[tick]\ninterval_s = \n").unwrap_err().to_string();
    assert!(err.starts_with("home/hearth.toml:2:"), "{err}");
}

#[test]
fn zero_timeout_is_refused() {
    let err = parse("[tick]\ntimeout_s = 0\n").unwrap_err().to_string();
    assert!(err.contains("timeout_s"), "{err}");
}

#[test]
fn a_value_hearth_cannot_use_is_named_with_its_line() {
    let text = "# my agent\n[model]\nmodel = \"x\"\n\n[tick]\ninterval_s = 60\n  timeout_s = 0\n";
    let err = parse(text).unwrap_err().to_string();
    assert_eq!(
        err,
        "home/hearth.toml:7: [tick] timeout_s must be at least 1"
    );
    // The same key under another table is not it; a dotted key at the top is.
    let err = parse("[model]\ntimeout_s = 5\n[tick]\ntimeout_s = 0\n")
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("home/hearth.toml:4: "), "{err}");
    let err = parse("[tick]\ninterval_s = 0\n").unwrap_err().to_string();
    assert_eq!(
        err,
        "home/hearth.toml:2: [tick] interval_s must be at least 1"
    );
    let err = parse("healer.streak = 0\n").unwrap_err().to_string();
    assert!(
        err.starts_with("home/hearth.toml:1: [healer] streak"),
        "{err}"
    );
    let err = parse("[peers]\n\"Bob\" = \"/h\"\n")
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("home/hearth.toml:2: "), "{err}");
}

#[test]
fn a_duplicate_table_is_named_as_a_table() {
    let err = Config::parse(
        Path::new("hearth.toml"),
        "[tick]\ninterval_s = 60\n[tick]\nmax_turns = 3\n",
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("hearth.toml:3") && err.contains("duplicate table `[tick]`"),
        "{err}"
    );
}

#[test]
fn a_duplicate_key_is_named_with_its_line() {
    let err = Config::parse(
        Path::new("hearth.toml"),
        "[tick]\ninterval_s = 5\ninterval_s = 6\n",
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("hearth.toml:3") && err.contains("duplicate key `interval_s`"),
        "{err}"
    );
}
