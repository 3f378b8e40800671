//! Process groups: a tick and an operator tool each run in their own group,
//! so everything they started dies with them in one `kill(-pgid)`.

/// Sends `signal` to the process group `pgid` (a child started with
/// `process_group(0)`, whose group id is its pid).
pub fn signal_group(pgid: i32, signal: i32) {
    if pgid <= 1 {
        return;
    }
    // SAFETY: kill(2) with a negative pid signals a process group; callers
    // pass the group of a child they started with process_group(0).
    #[allow(unsafe_code)] // the three unsafe blocks of hearth; see SAFETY
    unsafe {
        libc::kill(-pgid, signal);
    }
}
