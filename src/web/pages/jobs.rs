//! `/jobs`, `/jobs/NAME`: schedules in words, next runs, and how runs
//! ended, with what their commits showed (the model's words never count)
//! — `hearth jobs` and `hearth jobs show NAME`, line for line.

use maud::{html, Markup};

use super::{in_link, stamp, Frame};
use crate::home::Home;
use crate::jobs::overview::{late_grace, overview, JobView};
use crate::jobs::JobProblem;

/// The jobs as `hearth jobs` reads them: the late grace is the tick's
/// timeout and a minute, as `status` gives it.
fn read(frame: &Frame, home: &Home) -> (Vec<JobView>, Vec<JobProblem>, Vec<String>) {
    let config = crate::config::Config::load(&home.config_path()).ok();
    overview(home, frame.now, late_grace(config.as_ref()))
}

/// `/jobs`: each job's schedule in words, its next run, whether it is
/// late, and its last outcome; each linked to its page.
pub fn jobs(frame: &Frame, home: &Home) -> Markup {
    let (views, problems, notes) = read(frame, home);
    let body = html! {
        @if views.is_empty() && problems.is_empty() { p { "No job (jobs/NAME.toml)." } }
        @if !views.is_empty() {
            table {
                tr class="head" { th { "job" } th { "when" } th { "next" } th { "last" } }
                @for v in &views {
                    tr {
                        td { a href=(frame.to(&format!("/jobs/{}", in_link(&v.job.name)))) { (v.job.name) } }
                        td {
                            (v.job.when())
                            @if let Some(trouble) = v.trouble() { br; span class="attention" { (trouble) } }
                        }
                        td { @if let Some(next) = v.next { (stamp(next)) } @else { "never" } }
                        td { @if let Some(last) = &v.last { (last.outcome.as_str()) } @else { "no run yet" } }
                    }
                }
            }
        }
        @for problem in &problems { p class="trouble" { (problem.to_string()) } }
        @for note in &notes { p class="attention" { (note) } }
    };
    frame.page("jobs", body)
}

/// `/jobs/NAME`: one job — its schedule, what it asks and expects, every
/// run as `hearth jobs show` tells it, each linked to its tick — and,
/// under `acts`, "Run now" on the file the page showed (`None`: no such
/// usable job).
pub fn job(frame: &Frame, home: &Home, name: &str, acts: bool) -> Option<Markup> {
    let (views, _, _) = read(frame, home);
    let v = views.into_iter().find(|v| v.job.name == name)?;
    let job = &v.job;
    let body = html! {
        p { (job.when()) " (" code { (job.file) } ")" @if let Some(next) = v.next { "; next " (stamp(next)) } }
        @if let Some(trouble) = v.trouble() { p class="attention" { (trouble) } }
        @if acts {
            form method="post" action=(frame.to(&format!("/jobs/{}/run", in_link(&job.name)))) {
                input type="hidden" name="digest" value=(job.digest);
                button type="submit" { "Run now" }
                " " small { "(the supervisor takes it at its next look, after a tick that is running)" }
            }
        }
        h2 { "Asks" }
        pre { code { (job.prompt.trim_end()) } }
        @if !job.check.is_empty() { p { "Checks first: " code { (job.check.join(" ")) } } }
        @if !job.expect.is_empty() {
            p {
                "Done means: "
                @if let Some(wrote) = &job.expect.wrote { "a file under " code { (wrote) } " changed; " }
                @if job.expect.sent { "a letter to you in the outbox; " }
                @if job.expect.proposal { "a proposal made; " }
                "as its commit shows."
            }
        }
        h2 { "Runs" }
        @if v.history.is_empty() { p { "No run yet." } }
        table {
            @for run in v.runs_shown().rev().take(50) {
                tr {
                    td { @if let Some(tick) = run.tick { a href=(frame.to(&format!("/ticks/{tick}"))) { "tick " (tick) } } }
                    td { (run.describe()) }
                }
            }
        }
    };
    Some(frame.page(&format!("job {}", job.name), body))
}
