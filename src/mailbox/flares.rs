//! Flares: hearth's own messages to the operator, in `outbox/` with
//! `kind: flare`. Listing, read marks (`state/flares_read.json`, committed,
//! never rewound by a heal) and the `[flares] exec` hook. The agent's own
//! letters (`kind: message`) are listed and marked read the same way, for
//! `hearth outbox`; their marks live in the same file, keyed by file name.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::cause::Cause;
use super::MailboxError;
use crate::home::Home;
use crate::json_file::{self, JsonFile};
use crate::memory::front_matter;

/// How long a `[flares] exec` command may run.
pub const EXEC_TIMEOUT: Duration = Duration::from_secs(30);

/// One flare, or one of the agent's letters, as listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Flare {
    /// The file name without `.md`: what `--ack` takes.
    pub id: String,
    /// Where it is, relative to the home.
    pub path: String,
    /// Its kind (`budget`, `heal`, `panic`, `gap`…); empty for a letter.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub flare: String,
    /// The inbox message a letter answers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub in_reply_to: Option<String>,
    /// Its body (a letter's; flares are read with `cat`).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub body: String,
    /// When it was posted, as its front matter says.
    pub created: String,
    /// Its subject line.
    pub subject: String,
    /// The tick it is about, when there is one.
    pub tick: Option<u64>,
    /// Whether the operator marked it read.
    pub read: bool,
    /// What it asks the operator to decide, when it says (`proposal: 3`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub about: Option<super::outbox::About>,
}

impl Flare {
    /// What it is about (a letter's is [`Cause::Unknown`] with no word).
    pub fn cause(&self) -> Cause {
        Cause::parse(&self.flare)
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct ReadMarks {
    read: BTreeSet<String>,
}

fn marks_path(home: &Home) -> std::path::PathBuf {
    home.flares_read_path()
}

impl JsonFile for ReadMarks {
    const VERSION: u32 = 1;
}

/// Which flares are read; none, if the file is missing or broken (then a
/// flare shows as unread again, which loses nothing, and the log says why).
fn read_marks(home: &Home) -> ReadMarks {
    json_file::load(&marks_path(home))
        .unwrap_or_else(|e| {
            tracing::warn!("{e}; showing every flare as unread");
            None
        })
        .unwrap_or_default()
}

/// The file names of the flares in `outbox/`, from the directory listing
/// alone (flares are posted as `<time>-flare-<kind>.md`): cheap enough to
/// run after every tick however large the outbox grows.
pub fn names(home: &Home) -> Vec<String> {
    std::fs::read_dir(home.outbox_dir())
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.contains("-flare-") && n.ends_with(".md") && !n.starts_with('.'))
        .collect()
}

/// What to list from `outbox/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which {
    /// hearth's flares.
    Flares,
    /// The agent's letters (`send`).
    Letters,
}

/// Every flare in `outbox/`, newest first.
pub fn list(home: &Home) -> Vec<Flare> {
    list_of(home, Which::Flares)
}

/// The flares the operator has not marked read, newest first.
pub fn unread(home: &Home) -> Vec<Flare> {
    list(home).into_iter().filter(|f| !f.read).collect()
}

/// Every flare or every letter in `outbox/`, newest first.
pub fn list_of(home: &Home, which: Which) -> Vec<Flare> {
    let marks = read_marks(home);
    // A flare's name says it is one (`<time>-flare-<kind>.md`), so flares
    // are listed without opening the agent's letters, however many.
    let named_as_wanted = |name: &str| which == Which::Letters || name.contains("-flare-");
    let mut flares: Vec<Flare> = std::fs::read_dir(home.outbox_dir())
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_str().is_some_and(named_as_wanted))
        .filter_map(|e| parse(home, &e.path(), &marks, which))
        .collect();
    flares.sort_by(|a, b| b.id.cmp(&a.id));
    flares
}

fn parse(home: &Home, path: &Path, marks: &ReadMarks, which: Which) -> Option<Flare> {
    let name = path.file_name()?.to_str()?;
    let id = name.strip_suffix(".md")?.to_string();
    let text = std::fs::read_to_string(path).ok()?;
    let split = front_matter::split(&text).ok()?;
    let docs = yaml_rust2::YamlLoader::load_from_str(split.yaml?).ok()?;
    let doc = docs.first()?;
    let wanted = match which {
        Which::Flares => "flare",
        Which::Letters => "message",
    };
    if doc["kind"].as_str() != Some(wanted) {
        return None;
    }
    Some(Flare {
        in_reply_to: doc["in_reply_to"].as_str().map(str::to_string),
        body: match which {
            Which::Flares => String::new(),
            Which::Letters => split.body.trim().to_string(),
        },
        read: marks.read.contains(&id),
        path: home.relative(path),
        flare: doc["flare"].as_str().unwrap_or("").to_string(),
        created: doc["created"].as_str().unwrap_or("").to_string(),
        subject: doc["subject"].as_str().unwrap_or("").to_string(),
        tick: doc["tick"].as_i64().map(|t| t as u64),
        about: super::outbox::About::of_front_matter(doc),
        id,
    })
}

/// Marks flares read: the given ids, or every flare when `ids` is empty.
/// Returns the ids newly marked; unknown ids are an error naming them.
pub fn ack(home: &Home, ids: &[String]) -> Result<Vec<String>, AckError> {
    ack_of(home, Which::Flares, ids)
}

/// [`ack`] for flares or for the agent's letters.
pub fn ack_of(home: &Home, which: Which, ids: &[String]) -> Result<Vec<String>, AckError> {
    let all = list_of(home, which);
    let wanted: Vec<String> = if ids.is_empty() {
        all.iter().map(|f| f.id.clone()).collect()
    } else {
        let mut wanted = Vec::new();
        let mut unknown = Vec::new();
        for id in ids {
            match resolve(&all, id) {
                Resolved::One(full) => wanted.push(full),
                Resolved::None => unknown.push(id.clone()),
                Resolved::Many(candidates) => {
                    return Err(AckError::Ambiguous {
                        prefix: id.clone(),
                        candidates,
                    })
                }
            }
        }
        if !unknown.is_empty() {
            return Err(AckError::Unknown(unknown));
        }
        wanted
    };
    let mut marks = read_marks(home);
    let newly: Vec<String> = wanted
        .into_iter()
        .filter(|id| marks.read.insert(id.clone()))
        .collect();
    json_file::save(&marks_path(home), &marks).map_err(MailboxError::from)?;
    Ok(newly)
}

/// Marks `ids` read as they are, without listing `outbox/` (the thread
/// knows the letters it showed); returns those newly marked.
pub fn mark_read(home: &Home, ids: &[String]) -> Result<Vec<String>, MailboxError> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let mut marks = read_marks(home);
    let newly: Vec<String> = ids
        .iter()
        .filter(|id| marks.read.insert((*id).clone()))
        .cloned()
        .collect();
    json_file::save(&marks_path(home), &marks)?;
    Ok(newly)
}

/// The ids of every flare and letter the operator marked read.
pub fn read_ids(home: &Home) -> BTreeSet<String> {
    read_marks(home).read
}

/// The flare (or letter) `id` names (whole, or a unique start of one),
/// with its body as written.
pub fn show(home: &Home, which: Which, id: &str) -> Result<(Flare, String), AckError> {
    let all = list_of(home, which);
    let full = match resolve(&all, id) {
        Resolved::One(full) => full,
        Resolved::None => return Err(AckError::Unknown(vec![id.to_string()])),
        Resolved::Many(candidates) => {
            return Err(AckError::Ambiguous {
                prefix: id.to_string(),
                candidates,
            })
        }
    };
    let flare = all
        .into_iter()
        .find(|f| f.id == full)
        .ok_or_else(|| AckError::Unknown(vec![id.to_string()]))?;
    let body = body_of(home, &flare);
    Ok((flare, body))
}

/// A flare's text after its front matter (a file that cannot be read:
/// empty; one without front matter: whole).
pub fn body_of(home: &Home, flare: &Flare) -> String {
    let text = std::fs::read_to_string(home.path(&flare.path)).unwrap_or_default();
    front_matter::split(&text)
        .map(|s| s.body.trim().to_string())
        .unwrap_or(text)
}

/// What an id given on the command line names.
enum Resolved {
    One(String),
    None,
    Many(Vec<String>),
}

/// `id` as a whole id, or as the prefix of exactly one (as git takes a
/// commit's): the date-stamped ids are long to type.
fn resolve(all: &[Flare], id: &str) -> Resolved {
    if all.iter().any(|f| f.id == id) {
        return Resolved::One(id.to_string());
    }
    let matching: Vec<String> = all
        .iter()
        .filter(|f| !id.is_empty() && f.id.starts_with(id))
        .map(|f| f.id.clone())
        .collect();
    match matching.len() {
        0 => Resolved::None,
        1 => Resolved::One(matching.into_iter().next().unwrap_or_default()),
        _ => Resolved::Many(matching),
    }
}

/// Why flares could not be marked read.
#[derive(Debug, thiserror::Error)]
pub enum AckError {
    /// Nothing listed has these ids.
    #[error("nothing in outbox/ has the id {}", .0.join(", "))]
    Unknown(Vec<String>),
    /// A prefix that more than one id starts with.
    #[error("{prefix:?} is the start of {} ids ({}); give more of one", candidates.len(), candidates.join(", "))]
    Ambiguous {
        /// What was given.
        prefix: String,
        /// The ids it starts.
        candidates: Vec<String>,
    },
    /// The marks could not be written.
    #[error(transparent)]
    Mailbox(#[from] MailboxError),
}

/// Why `[flares] exec` does not run.
#[derive(Debug, thiserror::Error)]
enum ExecRefused {
    /// `[flares]`'s sandbox keys do not hold.
    #[error("[flares] {0}")]
    Keys(#[from] crate::jail::KeysRefused),
    /// The sandbox cannot be set up here.
    #[error("[flares] exec does not run: {0}; {hint}", hint = .0.hint())]
    Jail(#[from] crate::jail::Unavailable),
}

/// `[flares] exec` for the flare at `flare_path`, in its sandbox (or not,
/// as `[flares] sandbox` says) with only the environment it is given; or
/// why it cannot run.
fn exec_command(
    home: &Path,
    flares: &crate::config::FlaresConfig,
    environment: &std::collections::BTreeMap<String, String>,
    flare_path: &Path,
) -> Result<Command, ExecRefused> {
    let argv = [
        "/bin/sh".to_string(),
        "-c".to_string(),
        format!("{} \"$1\"", flares.exec),
        "hearth-flare".to_string(),
        flare_path.display().to_string(),
    ];
    let keys = crate::jail::Keys {
        sandbox: flares.sandbox.as_deref(),
        network: flares.network,
        write: &flares.write,
        read: &flares.read,
    };
    let confinement = crate::jail::Confinement::from_keys(home, "flares", &keys)?;
    let mut shell = confinement.command(&argv, home)?;
    crate::process::confine_env(&mut shell, environment, &flares.env);
    Ok(shell)
}

/// Runs `[flares] exec` with the flare's path, and `stdin` (the flare's
/// notice as JSON) on its standard input, in the background: it never
/// blocks the supervisor, is killed past [`EXEC_TIMEOUT`], and a failure is
/// logged.
/// It gets only [`crate::process::ALWAYS_PASSED`] and the variables
/// `[flares] env` names, from `environment`.
///
/// It runs in the tool sandbox of `home` (`crate::jail`) with what
/// `[flares]` grants (`network`, `write`), unless `sandbox = "none"`; a
/// sandbox that cannot be set up is logged and nothing runs.
pub fn announce(
    home: &Path,
    flares: &crate::config::FlaresConfig,
    environment: &std::collections::BTreeMap<String, String>,
    flare_path: &Path,
    stdin: &str,
) {
    let exec = flares.exec.as_str();
    if exec.trim().is_empty() {
        return;
    }
    let mut shell = match exec_command(home, flares, environment, flare_path) {
        Ok(shell) => shell,
        Err(why) => {
            tracing::warn!("{why}");
            return;
        }
    };
    let spawned = shell
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match spawned {
        Ok(child) => child,
        Err(e) => {
            tracing::warn!("[flares] exec {exec:?} could not start: {e}");
            return;
        }
    };
    let shown = flare_path.display().to_string();
    let exec = exec.to_string();
    let input = stdin.to_string();
    let feeder = child.stdin.take();
    std::thread::spawn(move || {
        // A command that does not read its input is no failure.
        if let Some(mut pipe) = feeder {
            use std::io::Write as _;
            let _ = pipe.write_all(input.as_bytes());
        }
        let start = Instant::now();
        loop {
            match child.try_wait() {
                Ok(Some(status)) if status.success() => return,
                Ok(Some(status)) => {
                    let mut err = String::new();
                    if let Some(mut stderr) = child.stderr.take() {
                        use std::io::Read;
                        let _ = stderr.read_to_string(&mut err);
                    }
                    tracing::warn!(
                        "[flares] exec {exec:?} failed for {shown} ({status}): {}",
                        err.trim()
                    );
                    return;
                }
                Ok(None) if start.elapsed() > EXEC_TIMEOUT => {
                    let _ = child.kill();
                    let _ = child.wait();
                    tracing::warn!("[flares] exec {exec:?} timed out for {shown}; killed");
                    return;
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(100)),
                Err(e) => {
                    tracing::warn!("[flares] exec {exec:?}: {e}");
                    return;
                }
            }
        }
    });
}
