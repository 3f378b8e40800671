//! `hearth completions SHELL` and `hearth completions man [--dir DIR]`:
//! shell completions and the man pages (one per command with `--dir`), generated from the same definitions as
//! the parser, so they never disagree with it.

use clap::CommandFactory;

use super::{Cli, CommandError, Exit};

#[derive(clap::Args)]
pub struct Args {
    /// bash, zsh, fish, elvish, powershell; or `man` for the man page (roff).
    #[arg(value_name = "SHELL|man")]
    target: String,
    /// With `man`: write one page per command into DIR (`hearth.1`,
    /// `hearth-ask.1`, `hearth-run.1`…) instead of the main page to stdout.
    #[arg(long, value_name = "DIR")]
    dir: Option<std::path::PathBuf>,
}

pub fn run(args: Args) -> Result<Exit, CommandError> {
    let mut command = Cli::command();
    let mut out = Vec::new();
    if args.target == "man" {
        if let Some(dir) = &args.dir {
            std::fs::create_dir_all(dir)?;
            clap_mangen::generate_to(command, dir)?;
            return Ok(Exit::Success);
        }
        clap_mangen::Man::new(command).render(&mut out)?;
    } else if args.dir.is_some() {
        return Err(CommandError::usage(
            "--dir is for the man pages",
            "hearth completions man --dir ~/.local/share/man/man1",
        ));
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
