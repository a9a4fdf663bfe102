//! `linerate show`.

use std::process::ExitCode;

/// Arguments of `linerate show`.
#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    super::not_built("show", "Results store")
}
