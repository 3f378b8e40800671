//! `hearth web [--listen ADDR | unix:PATH] [--host NAME]… [--allow-act]
//! [--homes DIR]`:
//! the operator's page, read-only unless `--allow-act`. Over TCP it needs
//! HEARTH_WEB_TOKEN (the login page asks for it; scripts send it as a
//! bearer token).

use std::path::Path;

use hearth::door::Listen;
use hearth::web::homes::Homes;
use hearth::web::{self, WebOptions};

use super::{CommandError, Env, Exit};

#[derive(clap::Args)]
pub struct Args {
    /// Where to serve: ADDR (e.g. 127.0.0.1:8780; needs HEARTH_WEB_TOKEN,
    /// since any account on the host and any page in your browser reach a
    /// loopback port), or unix:PATH, a socket only this account can use
    /// (mode 0600; reach it with `ssh -L 8780:PATH host`).
    #[arg(long, value_name = "ADDR|unix:PATH", default_value = "127.0.0.1:8780")]
    listen: Listen,
    /// A name the page is reached by through a proxy (agent.example):
    /// requests addressed to any other name are refused.
    #[arg(long = "host", value_name = "NAME")]
    hosts: Vec<String>,
    /// The proxy in front serves https: session cookies are marked Secure.
    #[arg(long)]
    behind_https: bool,
    /// Let the page decide: accept or reject a proposal, approve or decline
    /// a request, acknowledge an incident, run a job now (each on the
    /// version it showed, as your commit). Without it the page only reads.
    #[arg(long)]
    allow_act: bool,
    /// Serve every home under DIR (hosts of hearth@NAME): an index of
    /// them at /, each home's pages under /h/NAME/.
    #[arg(long, value_name = "DIR", conflicts_with = "home")]
    homes: Option<std::path::PathBuf>,
}

pub fn run(env: &Env, flag: Option<&Path>, args: Args) -> Result<Exit, CommandError> {
    let homes = match &args.homes {
        Some(dir) if !dir.is_dir() => {
            return Err(CommandError::new(
                anyhow::anyhow!("{}: not a directory", dir.display()),
                "give --homes the directory that holds the homes (/var/lib/hearth)".to_string(),
            ))
        }
        Some(dir) => Homes::Many(std::path::absolute(dir)?),
        None => Homes::One(env.open_home(flag)?),
    };
    let token = env
        .vars()
        .get(web::TOKEN_VARIABLE)
        .filter(|t| !t.is_empty())
        .cloned();
    let options = WebOptions {
        listen: args.listen,
        token,
        hosts: args.hosts,
        secure_cookies: args.behind_https,
        allow_act: args.allow_act,
        environment: env.vars().clone(),
        program: std::env::current_exe().ok(),
    };
    tracing::info!("serving the page of {homes:?}");
    web::serve(homes, env.clock, options, |at| {
        // Where it listens (a port of 0 is the system's choice).
        println!("hearth: the page is at {at}");
    })
    .map_err(|e| {
        let hint = e.hint();
        CommandError::new(e, hint)
    })?;
    Ok(Exit::Success)
}
