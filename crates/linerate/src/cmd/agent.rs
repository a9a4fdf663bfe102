//! `linerate agent --config mesh.toml`: one node of a measurement mesh (the engine is
//! `linerate-agent`). Here: the flags, `--check`'s summary, the signals (SIGINT and SIGTERM
//! stop, SIGHUP reloads), and the sink that stores every result and prints the agent's log.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Context as _;
use linerate_agent::{Config, Event};
use linerate_sys::signal::{self, Signal};

use crate::cmd::history::db::StoreRunArgs;

/// Arguments of `linerate agent`.
#[derive(Debug, clap::Args)]
#[command(after_help = "The configuration (TOML):

  listen = \"198.18.0.1:5201\"      # this agent's test server
  metrics = \"198.18.0.1:9201\"     # Prometheus /metrics
  [[peer]]
  host = \"198.18.0.2\"             # port 5201 unless host:port; or dns = \"NAME\" (every A/AAAA)
  [[peer]]
  srv = \"_tests._tcp.mesh.example\" # every server of an SRV record set, on its port
  [[test]]
  mode = \"tcp\"                    # tcp | udp (rate = \"10M\") | rr
  every = \"5s\"
  duration = \"1s\"

SIGHUP reloads it (a bad file is reported and the old configuration kept); SIGINT or SIGTERM
stops the agent (exit 130 or 143). contrib/fleet/ has a Prometheus configuration with alerting
rules, a Grafana dashboard, a Kubernetes DaemonSet and a systemd unit.

Examples:
  linerate agent --config mesh.toml
  linerate agent --config mesh.toml --check
  linerate agent --config mesh.toml --db /var/lib/linerate/agent.db")]
pub struct Args {
    /// The mesh configuration (TOML)
    #[arg(long, value_name = "FILE")]
    config: PathBuf,
    /// Check the configuration, print what it schedules, and exit
    #[arg(long)]
    check: bool,
    /// Where every result is stored (every one is, unless --no-store)
    #[command(flatten)]
    store: StoreRunArgs,
}

fn say(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "linerate agent: {line}");
}

/// Where the agent's results and log go: the results database, and stderr.
struct Terminal {
    store: StoreRunArgs,
    /// A store that fails is reported once, and the agent goes on.
    store_warned: AtomicBool,
}

impl linerate_agent::Sink for Terminal {
    fn result(&self, document: &linerate_iperf3::Document) {
        if let Err(e) =
            crate::cmd::history::db::store_measured_run(&self.store, document, None, None)
        {
            if !self.store_warned.swap(true, Ordering::Relaxed) {
                say(&format!("warning: results are not stored: {e:#}"));
            }
        }
    }

    fn event(&self, event: &Event<'_>) {
        say(&event.to_string());
    }
}

/// `--check`: what the configuration schedules, with the peers it names now.
fn check_text(args: &Args, cfg: &Config) -> String {
    let targets = cfg.targets(&mut |name, e| {
        say(&format!("warning: {name} does not resolve now ({e})"));
    });
    let mut text = format!(
        "{}: valid. Serves tests on {}, metrics on http://{}/metrics; {} peer(s) now, {} test(s):\n",
        args.config.display(),
        cfg.listen,
        cfg.metrics,
        targets.len(),
        cfg.tests.len()
    );
    for t in &cfg.tests {
        text.push_str(&format!(
            "  {} for {:?} every {:?}{}\n",
            t.mode.name(),
            t.duration,
            t.every,
            if t.mode.is_throughput() {
                ", each direction"
            } else {
                ""
            }
        ));
    }
    text
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let cfg = linerate_agent::load(&args.config)?;
    if args.check {
        crate::output::print_text(&check_text(&args, &cfg))?;
        return Ok(ExitCode::SUCCESS);
    }
    let stop = crate::stop::Stop::install()?;
    let hup = Arc::new(AtomicBool::new(false));
    signal::set_flag_on(&[Signal::SIGHUP], &hup).context("installing the SIGHUP handler")?;
    let sink = Arc::new(Terminal {
        store: args.store.clone(),
        store_warned: AtomicBool::new(false),
    });
    linerate_agent::run(&args.config, cfg, stop.flag(), &hup, sink)?;
    Ok(stop
        .signal()
        .map_or(ExitCode::SUCCESS, crate::stop::exit_code))
}
