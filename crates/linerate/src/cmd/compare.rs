//! `linerate compare RUN RUN… [--experiment ID]`.

pub mod analysis;
pub mod verdicts;

use std::process::ExitCode;

/// Arguments of `linerate compare`.
#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    super::not_built("compare", "Results store")
}
