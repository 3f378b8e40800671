//! `[peers]` and `[collaborations]` (DESIGN 14): the other homes on this
//! host, and where collaborations may work.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::Invalid;

/// `[peers]`: name = "/path/to/their/home" (on this host, read in place)
/// or name = "ssh://host/srv/git/their-home.git" (on another, fetched into a
/// mirror of this home's own), read only either way; and, beside the
/// names (which never hold `_`), how peers on other hosts are fetched.
/// It reads as the map of names (`peers["bob"]`, `peers.iter()`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Peers {
    names: BTreeMap<String, PeerAt>,
    /// `fetch_every_s`: how often each peer on another host is fetched.
    pub fetch_every_s: u64,
    /// `fetch_flare_min`: after how long of failed fetches one flare says
    /// so (once a failing spell).
    pub fetch_flare_min: u64,
    /// `fetch_timeout_s`: a fetch that has not finished after this long is
    /// stopped and counts as failed (a remote that accepts and hangs).
    pub fetch_timeout_s: u64,
}

impl Default for Peers {
    fn default() -> Self {
        Peers {
            names: BTreeMap::new(),
            fetch_every_s: 30,
            fetch_flare_min: 60,
            fetch_timeout_s: 120,
        }
    }
}

impl std::ops::Deref for Peers {
    type Target = BTreeMap<String, PeerAt>;
    fn deref(&self) -> &Self::Target {
        &self.names
    }
}

impl<const N: usize> From<[(String, PeerAt); N]> for Peers {
    fn from(names: [(String, PeerAt); N]) -> Peers {
        Peers {
            names: names.into(),
            ..Peers::default()
        }
    }
}

impl Serialize for Peers {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(self.names.len() + 3))?;
        for (name, at) in &self.names {
            map.serialize_entry(name, at)?;
        }
        map.serialize_entry("fetch_every_s", &self.fetch_every_s)?;
        map.serialize_entry("fetch_flare_min", &self.fetch_flare_min)?;
        map.serialize_entry("fetch_timeout_s", &self.fetch_timeout_s)?;
        map.end()
    }
}

impl<'de> Deserialize<'de> for Peers {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Peers, D::Error> {
        use serde::de::Error;
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum PeersEntry {
            At(PeerAt),
            Number(u64),
        }
        let mut peers = Peers::default();
        for (key, entry) in BTreeMap::<String, PeersEntry>::deserialize(d)? {
            match (key.as_str(), entry) {
                ("fetch_every_s", PeersEntry::Number(n)) => peers.fetch_every_s = n.max(1),
                ("fetch_flare_min", PeersEntry::Number(n)) => peers.fetch_flare_min = n,
                ("fetch_timeout_s", PeersEntry::Number(n)) => peers.fetch_timeout_s = n.max(1),
                ("fetch_every_s" | "fetch_flare_min" | "fetch_timeout_s", _) => {
                    return Err(D::Error::custom(format!(
                        "[peers] {key}: a whole number (of seconds, or minutes for \
                         fetch_flare_min), e.g. {key} = 60"
                    )))
                }
                (setting, _) if setting.contains('_') => {
                    return Err(D::Error::custom(format!(
                        "[peers] {setting}: not a setting (fetch_every_s, fetch_flare_min, \
                         fetch_timeout_s are; a peer's name has no `_`)"
                    )))
                }
                (_, PeersEntry::At(at)) => {
                    peers.names.insert(key, at);
                }
                (name, PeersEntry::Number(_)) => {
                    return Err(D::Error::custom(format!(
                        "[peers] {name}: give the peer's home as a path or a git:// URL, in quotes"
                    )))
                }
            }
        }
        Ok(peers)
    }
}

/// Where a peer's home is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PeerAt {
    /// A home on this host, read in place.
    Path(PathBuf),
    /// A repository its `[git] push` publishes to, fetched from here.
    Url(String),
}

/// The URL schemes a peer is fetched over (by the `git` command, with the
/// host's ssh setup and credentials from the environment). Plain `http://`
/// is left out: a password would cross the network in the clear.
pub const FETCHED_SCHEMES: [&str; 4] = ["ssh://", "https://", "git://", "file://"];

impl PeerAt {
    /// The home on this host, for a peer read in place.
    pub fn path(&self) -> Option<&Path> {
        match self {
            PeerAt::Path(path) => Some(path),
            PeerAt::Url(_) => None,
        }
    }

    /// The peer's name as its location gives it: its home directory's, or
    /// its repository's (without `.git`).
    fn own_name(&self) -> String {
        let last = match self {
            PeerAt::Path(path) => path
                .file_name()
                .map(|d| d.to_string_lossy().into_owned())
                .unwrap_or_default(),
            PeerAt::Url(url) => {
                let last = url.trim_end_matches('/').rsplit('/').next().unwrap_or("");
                last.strip_suffix(".git").unwrap_or(last).to_string()
            }
        };
        name_for(&last)
    }
}

impl std::fmt::Display for PeerAt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PeerAt::Path(path) => write!(f, "{}", path.display()),
            PeerAt::Url(url) => f.write_str(&super::secret_url::masked(url)),
        }
    }
}

impl Serialize for PeerAt {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for PeerAt {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<PeerAt, D::Error> {
        let text = String::deserialize(d)?;
        Ok(if text.contains("://") {
            PeerAt::Url(text)
        } else {
            PeerAt::Path(PathBuf::from(text))
        })
    }
}

/// `[collaborations]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CollaborationsConfig {
    /// The directories a collaboration may work in (absolute); the agent
    /// cannot change this list.
    pub workdirs: Vec<PathBuf>,
    /// Rounds one collaboration may take before its handoffs are refused.
    pub max_rounds: u32,
    /// Whether a peer may found a collaboration here on its own word.
    pub founding: FoundingPolicy,
}

/// `[collaborations] founding`: who says yes to a collaboration a peer
/// founds here. Each costs ticks and model calls, so by default a peer's
/// word is a request the operator approves.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FoundingPolicy {
    /// The first handoff of a collaboration new here waits as a request
    /// (`hearth proposals`), at most one new one a day from each peer.
    #[default]
    Ask,
    /// Taken at once, as any handoff.
    Open,
}

impl FoundingPolicy {
    /// As `hearth.toml` and status say it.
    pub fn as_str(self) -> &'static str {
        match self {
            FoundingPolicy::Ask => "ask",
            FoundingPolicy::Open => "open",
        }
    }
}

impl Default for CollaborationsConfig {
    fn default() -> Self {
        CollaborationsConfig {
            workdirs: Vec::new(),
            max_rounds: 12,
            founding: FoundingPolicy::Ask,
        }
    }
}

impl CollaborationsConfig {
    /// Whether `dir` is one of the allowed workdirs (compared as written,
    /// and resolved when both exist, so `/srv/w1/` and a symlink to it
    /// count too).
    pub fn allows(&self, dir: &std::path::Path) -> bool {
        let resolved = dir.canonicalize().ok();
        self.workdirs.iter().any(|w| {
            w.components().eq(dir.components())
                || resolved
                    .as_ref()
                    .is_some_and(|r| w.canonicalize().is_ok_and(|w| &w == r))
        })
    }
}

/// A name hearth puts in paths and commands (a peer, a collaboration's
/// slug): lowercase letters, digits and single inner dashes, at most 64.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// The name a text suggests under [`valid_name`]'s rule: "Design X, v2"
/// → "design-x-v2" (empty when it has no letters or digits). An agent's
/// name among its peers is this of its home directory's name.
pub fn name_for(text: &str) -> String {
    let mut name = String::new();
    for c in text.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() {
            name.push(c);
        } else if !name.is_empty() && !name.ends_with('-') {
            name.push('-');
        }
        if name.len() >= 64 {
            break;
        }
    }
    name.trim_end_matches('-').to_string()
}

/// What is wrong with `[peers]` and `[collaborations]`, if anything.
pub(crate) fn validate(
    peers: &Peers,
    collaborations: &CollaborationsConfig,
) -> Result<(), Invalid> {
    for (name, at) in peers.iter() {
        if !valid_name(name) {
            return Err(Invalid::at(
                "peers",
                name,
                format!(
                    "[peers] {name:?}: a peer's name is lowercase letters, digits and dashes \
                     (its hearth@NAME instance name, e.g. bob = \"/var/lib/hearth/bob\")"
                ),
            ));
        }
        match at {
            PeerAt::Path(path) if !path.is_absolute() => {
                return Err(Invalid::at(
                    "peers",
                    name,
                    format!(
                        "[peers] {name} = {:?}: give the peer's home as an absolute path, or \
                         the URL its pushes reach (ssh://host/srv/git/NAME.git)",
                        path.display()
                    ),
                ));
            }
            PeerAt::Url(url) if super::secret_url::carries_secret(url) => {
                use super::secret_url::{PASSWORD_VARIABLE, USERNAME_VARIABLE};
                return Err(Invalid::at(
                    "peers",
                    name,
                    format!(
                        "[peers] {name} = \"{at}\": a password or token in a URL would be \
                         repeated wherever the URL is shown (status, the log, flares that are \
                         committed and pushed) and on git's command line; write the URL \
                         without it and give it to hearth in its environment: \
                         {USERNAME_VARIABLE}=NAME and {PASSWORD_VARIABLE}=SECRET (under \
                         systemd, in an EnvironmentFile= only hearth's user can read)"
                    ),
                ));
            }
            PeerAt::Url(url) if !FETCHED_SCHEMES.iter().any(|s| url.starts_with(s)) => {
                return Err(Invalid::at(
                    "peers",
                    name,
                    format!(
                        "[peers] {name} = \"{at}\": a peer on another host is reached by \
                         ssh://, https://, git:// or file:// (e.g. \
                         {name} = \"ssh://host/srv/git/{name}.git\"); scp's host:path \
                         form is written ssh://host/path"
                    ),
                ));
            }
            _ => {}
        }
        // The peer calls itself by its home directory's name: handoffs are
        // addressed, and rounds recorded, under that name on both sides.
        let own = at.own_name();
        if own != *name {
            return Err(Invalid::at(
                "peers",
                name,
                format!(
                    "[peers] {name} = \"{at}\": that agent's name is its {}'s name, {own:?}; \
                     write it as {own} = \"{at}\"",
                    match at {
                        PeerAt::Path(_) => "home directory",
                        PeerAt::Url(_) => "repository",
                    }
                ),
            ));
        }
    }
    for dir in &collaborations.workdirs {
        if !dir.is_absolute() {
            return Err(Invalid::at(
                "collaborations",
                "workdirs",
                format!(
                    "[collaborations] workdirs: {:?} is not an absolute path",
                    dir.display()
                ),
            ));
        }
    }
    if collaborations.max_rounds == 0 {
        return Err(Invalid::at(
            "collaborations",
            "max_rounds",
            "[collaborations] max_rounds must be at least 1",
        ));
    }
    Ok(())
}
