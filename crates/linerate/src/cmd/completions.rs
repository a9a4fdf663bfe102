//! `linerate completions SHELL`: completion scripts generated from the clap definitions.

use std::process::ExitCode;

use clap_complete::Shell;

/// Arguments of `linerate completions`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  linerate completions bash > /etc/bash_completion.d/linerate\n  \
    linerate completions zsh > ~/.zfunc/_linerate\n  \
    linerate completions fish > ~/.config/fish/completions/linerate.fish"
)]
pub struct Args {
    /// The shell to generate completions for
    #[arg(value_enum)]
    pub shell: Shell,
}

/// `command` is the whole command tree (`Cli::command()`).
pub fn run(args: Args, mut command: clap::Command) -> anyhow::Result<ExitCode> {
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut command, "linerate", &mut out);
    crate::output::print_text(&String::from_utf8_lossy(&out))?;
    Ok(ExitCode::SUCCESS)
}
