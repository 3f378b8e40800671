//! The `hearth` executable: parse the command line, read the environment
//! once, run one command, map its error to an exit code. Everything else is
//! in the library.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
