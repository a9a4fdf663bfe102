//! `linerate stat`.

use std::process::ExitCode;

/// Arguments of `linerate stat`.
#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    super::not_built("stat", "Foundation")
}
