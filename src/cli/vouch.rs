//! `hearth vouch PLACE…`: the operator vouches for outside lines they have
//! read (`memory/notes/x.md:3-5`, or a whole file's outside lines). Their
//! words are the operator's from then on, wherever they are copied: an
//! exchange that reads them is not tainted, and `hearth audit` stops
//! naming them. The book is `state/vouched.json`, committed as yours.

use std::path::Path;

use hearth::config::Config;
use hearth::provenance::{vouch, vouching};
use hearth::repo::Identity;

use super::{CommandError, Env, Exit};

#[derive(clap::Args)]
pub struct Args {
    /// What you read and vouch for: PATH (its outside lines), PATH:N or PATH:N-M.
    #[arg(required = true)]
    places: Vec<String>,
}

pub fn run(env: &Env, flag: Option<&Path>, args: Args) -> Result<Exit, CommandError> {
    let home = env.open_home(flag)?;
    let config = Config::load(&home.config_path()).unwrap_or_else(|e| {
        tracing::warn!("{e}; committing as the default operator");
        Config::default()
    });
    let places = args
        .places
        .iter()
        .map(|p| vouching::parse_place(p))
        .collect::<Result<Vec<_>, _>>()?;
    let done = vouching::vouch(
        &home,
        &Identity::operator(&config.git),
        &places,
        env.clock.now(),
    )?;
    if done.vouched.is_empty() {
        outln!("nothing new to vouch for: no outside line there, or you already vouched for it");
        return Ok(Exit::Success);
    }
    for line in &done.vouched {
        outln!("vouched {line}");
    }
    outln!(
        "recorded in {} ({})",
        vouch::VOUCHED,
        done.commit
            .as_deref()
            .map_or("not committed: nothing changed", |c| &c[..c.len().min(7)])
    );
    Ok(Exit::Success)
}
