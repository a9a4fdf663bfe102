//! The command line: one subcommand per step of the method (know the ceiling, inspect, tune,
//! measure, reproduce, prove). Each subcommand's arguments live beside its code in `cmd/`.

use std::process::ExitCode;

use clap::{CommandFactory as _, Parser, Subcommand};

use crate::cmd;

/// Get hosts, routers and tunnels to line rate, and prove it.
#[derive(Debug, Parser)]
#[command(
    name = "linerate",
    version,
    max_term_width = 100,
    propagate_version = true,
    after_help = root_after_help(),
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// The top page's closing text: the unit rule, the exit codes, examples.
fn root_after_help() -> String {
    format!(
        "{}\n\n{}\n\n{}",
        linerate_units::RULES,
        "Exit status: 0 success; 1 a finding or difference you asked to fail on; 2 usage, \
         input or I/O error; 130 after SIGINT (Ctrl-C), 143 after SIGTERM.",
        "Examples:\n  linerate calc bdp --rate 1G --rtt 80ms\n  linerate lab run\n  \
         linerate compare --experiment window-buffers\n  linerate client 198.18.0.2 -t 10s"
    )
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Know the ceiling: line rate, frames/s, bus bandwidth, BDP, tunnel overhead
    Calc(cmd::calc::Args),
    /// Summarise and compare data sets (a drop-in for FreeBSD's ministat)
    Stat(cmd::stat::Args),
    /// Check a sysctl.conf, sysctl.d drop-in, loader.conf or `sysctl -a` dump
    Lint(cmd::lint::Args),
    /// Generate (and on Linux or FreeBSD apply or roll back) a tuning profile derived from the path
    Tune(cmd::tune::Args),
    /// Judge the live host's (or a snapshot's) settings and hardware for a role and a path
    Audit(cmd::audit::Args),
    /// Show NICs, bus, queues and offloads; --watch shows live per-queue rates
    Nic(cmd::nic::Args),
    /// Serve throughput and latency tests (iperf3-compatible, many clients at once)
    Server(cmd::server::Args),
    /// Run a throughput, packet-rate or latency test against a linerate or iperf3 server
    Client(cmd::client::Args),
    /// Join a measurement mesh: serve tests, run scheduled tests to peers, expose /metrics
    Agent(cmd::agent::Args),
    /// Send raw Ethernet/IPv4/UDP frames from packet rings (Linux, CAP_NET_RAW)
    Gen(cmd::r#gen::Args),
    /// RFC 2544 throughput of a real DUT between tester ports (Linux, CAP_NET_RAW)
    Rfc2544(Box<cmd::rfc2544::Args>),
    /// Build network-namespace test beds and run experiments on them
    Lab(cmd::lab::Args),
    /// List stored runs
    History(cmd::history::Args),
    /// Show one stored run
    Show(cmd::show::Args),
    /// Compare stored runs at a stated confidence
    Compare(cmd::compare::Args),
    /// List stored experiments (name, status, runs per variant), or remove one
    Experiments(cmd::experiments::Args),
    /// Sample where the CPU time goes (every CPU or one process): top functions, folded stacks, flame graph
    Profile(cmd::profile::Args),
    /// Import iperf3 JSON results into the store
    Import(cmd::import::Args),
    /// Write a self-contained HTML report with charts
    Report(cmd::report::Args),
    /// Response-time distributions from web-server access logs
    Logdist(cmd::logdist::Args),
    /// Print a shell completion script
    Completions(cmd::completions::Args),
    /// Print the man page (roff)
    Man(cmd::man::Args),
}

/// Dispatches to the subcommand.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Calc(args) => cmd::calc::run(args),
        Command::Stat(args) => cmd::stat::run(args),
        Command::Lint(args) => cmd::lint::run(args),
        Command::Tune(args) => cmd::tune::run(args),
        Command::Audit(args) => cmd::audit::run(args),
        Command::Nic(args) => cmd::nic::run(args),
        Command::Server(args) => cmd::server::run(args),
        Command::Client(args) => cmd::client::run(args),
        Command::Agent(args) => cmd::agent::run(args),
        Command::Gen(args) => cmd::r#gen::run(args),
        Command::Rfc2544(args) => cmd::rfc2544::run(*args),
        Command::Lab(args) => cmd::lab::run(args),
        Command::History(args) => cmd::history::run(args),
        Command::Show(args) => cmd::show::run(args),
        Command::Compare(args) => cmd::compare::run(args),
        Command::Experiments(args) => cmd::experiments::run(args),
        Command::Profile(args) => cmd::profile::run(args),
        Command::Import(args) => cmd::import::run(args),
        Command::Report(args) => cmd::report::run(args),
        Command::Logdist(args) => cmd::logdist::run(args),
        Command::Completions(args) => cmd::completions::run(args, Cli::command()),
        Command::Man(args) => cmd::man::run(args, Cli::command()),
    }
}

#[cfg(test)]
mod conventions;
