//! `hearth outbox [--json] [--all]` and `hearth outbox --ack [ID…|--all]`:
//! what the agent sent the operator (DESIGN 11), newest first, unread by
//! default, marked read like flares.

use std::path::Path;

use hearth::mailbox::flares::Which;

use super::flares::run_for;
pub use super::flares::Args;
use super::{CommandError, Env, Exit};

pub fn run(env: &Env, flag: Option<&Path>, args: Args) -> Result<Exit, CommandError> {
    run_for(env, flag, args, Which::Letters)
}
