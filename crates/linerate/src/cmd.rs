//! One module per subcommand: its clap arguments and its `run`.

use std::process::ExitCode;

use crate::cli::{Cli, Command};

pub mod audit;
pub mod calc;
pub mod client;
pub mod compare;
pub mod completions;
pub mod history;
pub mod import;
#[cfg(target_os = "linux")]
pub mod lab;
#[cfg(not(target_os = "linux"))]
#[path = "cmd/lab_unsupported.rs"]
pub mod lab;
pub mod lint;
pub mod logdist;
pub mod man;
pub mod nic;
pub mod report;
pub mod server;
pub mod show;
pub mod stat;
pub mod tune;

/// Dispatches to the subcommand.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Calc(args) => calc::run(args),
        Command::Stat(args) => stat::run(args),
        Command::Lint(args) => lint::run(args),
        Command::Tune(args) => tune::run(args),
        Command::Audit(args) => audit::run(args),
        Command::Nic(args) => nic::run(args),
        Command::Server(args) => server::run(args),
        Command::Client(args) => client::run(args),
        Command::Lab(args) => lab::run(args),
        Command::History(args) => history::run(args),
        Command::Show(args) => show::run(args),
        Command::Compare(args) => compare::run(args),
        Command::Import(args) => import::run(args),
        Command::Report(args) => report::run(args),
        Command::Logdist(args) => logdist::run(args),
        Command::Completions(args) => completions::run(args),
        Command::Man(args) => man::run(args),
    }
}
