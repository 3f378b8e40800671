//! `hearth completions SHELL` and `hearth completions man`: shell
//! completions and the man page, generated from the same definitions as
//! the parser, so they never disagree with it.

use clap::CommandFactory;

use super::{Cli, CommandError, Exit};

#[derive(clap::Args)]
pub struct Args {
    /// bash, zsh, fish, elvish, powershell; or `man` for the man page (roff).
    #[arg(value_name = "SHELL|man")]
    target: String,
}

pub fn run(args: Args) -> Result<Exit, CommandError> {
    let mut command = Cli::command();
    let mut out = Vec::new();
    if args.target == "man" {
        clap_mangen::Man::new(command).render(&mut out)?;
    } else {
        let shell: clap_complete::Shell = args.target.parse().map_err(|_| {
            CommandError::usage(
                &format!("no completions for {:?}", args.target),
                "name one of bash, zsh, fish, elvish, powershell, or `man` for the man page",
            )
        })?;
        clap_complete::generate(shell, &mut command, "hearth", &mut out);
    }
    std::io::Write::write_all(&mut std::io::stdout().lock(), &out)?;
    Ok(Exit::Success)
}
