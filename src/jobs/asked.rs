//! A run asked for now, out of schedule (`hearth jobs run NAME`, the
//! page's "Run now"): a file named for the job under
//! `.hearth/job-requests/`, which the supervisor takes at its next look —
//! at once when it runs, at its start when it does not. One place writes
//! it, so the CLI and the page ask the same way.

use crate::home::layout::rel::JOB_REQUESTS;
use crate::home::Home;

/// The name a waker leaves among the run requests: hidden, so never taken
/// for a job's.
pub const WAKE: &str = ".wake";

/// Wakes a running supervisor for something it does at its next look (a
/// request approved from the page), as a run asked for does; best effort:
/// without it, the next tick's look takes it.
pub fn wake_supervisor(home: &Home) {
    let dir = home.path(JOB_REQUESTS);
    let _ = std::fs::create_dir_all(&dir);
    let _ = crate::atomic::write(&dir.join(WAKE), b"");
}

/// Asks for a run of `job` (a name [`super::load_all`] gave: a file's
/// stem, so never a path) as it is now: the request carries its file's
/// digest, and the supervisor runs it only while the file still has it
/// (a job changed between the operator's look and the run is not run).
pub fn ask_to_run(home: &Home, job: &super::Job) -> Result<(), crate::atomic::WriteError> {
    let dir = home.path(JOB_REQUESTS);
    if let Err(source) = std::fs::create_dir_all(&dir) {
        return Err(crate::atomic::WriteError { path: dir, source });
    }
    crate::atomic::write(&dir.join(&job.name), job.digest.as_bytes())
}

/// The digest a request at `path` was asked on; `None` for an empty one
/// (written before requests carried it: run as the file is).
pub fn asked_digest(path: &std::path::Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let digest = text.trim();
    (!digest.is_empty()).then(|| digest.to_string())
}
