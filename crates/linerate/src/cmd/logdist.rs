//! `linerate logdist`.

use std::process::ExitCode;

/// Arguments of `linerate logdist`.
#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    super::not_built("logdist", "linerate logdist")
}
