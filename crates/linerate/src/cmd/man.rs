//! `linerate man`: the man pages (roff) generated from the clap definitions: `linerate(1)`, and
//! one page per subcommand (`linerate-calc(1)`, `linerate-calc-rate(1)`, …) that the top page
//! refers to.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};

/// Arguments of `linerate man`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  linerate man | man -l -\n  linerate man calc rate\n  \
    linerate man --dir /usr/local/share/man/man1"
)]
pub struct Args {
    /// The page of a subcommand, e.g. `calc` or `calc rate` (default: the top page, linerate(1))
    #[arg(value_name = "COMMAND")]
    command: Vec<String>,
    /// Write every page (linerate.1, linerate-calc.1, linerate-calc-rate.1, …) into this
    /// directory instead of printing one
    #[arg(long, value_name = "DIR", conflicts_with = "command")]
    dir: Option<PathBuf>,
}

/// `root` is the whole command tree (`Cli::command()`), passed in so this module needs no
/// knowledge of the CLI above it.
pub fn run(args: Args, root: clap::Command) -> anyhow::Result<ExitCode> {
    let root = built_command(root);
    if let Some(dir) = &args.dir {
        write_all(&root, dir)?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut command = &root;
    let mut path = String::from("linerate");
    for name in &args.command {
        path.push(' ');
        path.push_str(name);
        command = match command.find_subcommand(name) {
            Some(sub) => sub,
            None => bail!(
                "no man page for `{path}`: no such command (try `linerate man --dir DIR` for every page)"
            ),
        };
    }
    crate::output::print_text(&render(command)?)?;
    Ok(ExitCode::SUCCESS)
}

/// The whole command tree, built so that subcommands carry their full names (`linerate-calc`
/// as the page title, `linerate calc` in the synopsis). No `help` subcommand: it has no page.
fn built_command(root: clap::Command) -> clap::Command {
    let mut command = root.disable_help_subcommand(true);
    command.build();
    command
}

/// A page whose footer names the program (`linerate 0.1.0`), not the subcommand.
fn page(command: &clap::Command) -> clap_mangen::Man {
    clap_mangen::Man::new(command.clone()).source(format!("linerate {}", env!("CARGO_PKG_VERSION")))
}

fn render(command: &clap::Command) -> anyhow::Result<String> {
    let mut out = Vec::new();
    page(command).render(&mut out)?;
    String::from_utf8(out).context("the man page is not UTF-8")
}

/// Writes one page per command, each through a temporary file renamed into place, so a reader
/// never sees half a page.
fn write_all(command: &clap::Command, dir: &Path) -> anyhow::Result<()> {
    let page = page(command);
    let path = dir.join(page.get_filename());
    let mut out = Vec::new();
    page.render(&mut out)
        .and_then(|()| linerate_sys::atomic_write(&path, &out))
        .with_context(|| format!("cannot write {}", path.display()))?;
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        write_all(sub, dir)?;
    }
    Ok(())
}
