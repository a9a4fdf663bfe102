//! `linerate import`.

use std::process::ExitCode;

/// Arguments of `linerate import`.
#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    super::not_built("import", "Results store")
}
