//! `linerate lab`: network-namespace test beds with emulated links.

mod record;
mod render;
mod rfc2544;
mod run_hosts;
mod tunnel;
mod verdict;

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use linerate_lab::firewall::Firewall;
use linerate_lab::impair::RateLayer;
use linerate_lab::spec::{OnOff, Targeted};
use linerate_lab::topology::Topology;
use linerate_lab::{EmulatorChoice, LabName, LabSpec, LinkOptions, NodeSysctl, StateDir};
use linerate_units::{BitRate, Duration, Percent};

use crate::output;

/// Arguments of `linerate lab`.
#[derive(Debug, clap::Args)]
#[command(after_help = LAB_HELP)]
pub struct Args {
    /// Directory of lab state files [env: LINERATE_LAB_STATE_DIR; default: /run/linerate/lab]
    #[arg(long, global = true, value_name = "DIR")]
    state_dir: Option<PathBuf>,
    #[command(subcommand)]
    command: LabCommand,
}

const LAB_HELP: &str = "\
Topologies: pair = gen 198.18.0.1 -- l0 -- recv 198.18.0.2; router = gen 198.18.0.1 -- l0 -- \
198.18.0.254 dut 198.19.0.254 -- l1 -- recv 198.19.0.1. Namespaces and interfaces are named \
lr-NAME-*. Link flags take [TARGET=]VALUE: no target = every link and direction; l0 = one link; \
l0:fwd / l0:rev = one direction (fwd goes toward recv).

Examples:
  linerate lab up demo --topology router --rate 1G --delay 20ms
  linerate lab exec demo gen -- ping -c 3 198.19.0.1
  linerate lab rfc2544 demo --frame 64,imix
  linerate lab down demo
  linerate lab run";

#[derive(Debug, clap::Subcommand)]
enum LabCommand {
    /// Build a lab
    #[command(
        after_help = "Examples:\n  linerate lab up demo --rate 1G --delay 20ms\n  \
        linerate lab up demo --topology router --rate 1G --delay 20ms --loss l1:fwd=0.1%\n  \
        linerate lab up demo --emulator userspace --jitter 1ms --sysctl recv:net.ipv4.tcp_rmem='4096 131072 33554432'\n  \
        linerate lab up demo --rate 100M --rate-layer l2\n  \
        linerate lab up demo --tunnel wireguard\n  \
        linerate lab up demo --topology router --tunnel openvpn --tunnel-opt cipher=AES-128-GCM --tunnel-opt tun-mtu=9000"
    )]
    Up(Box<UpArgs>),
    /// Remove a lab and everything in it (works after crashes too)
    #[command(after_help = "Examples:\n  linerate lab down demo\n  linerate lab down demo --json")]
    Down(DownArgs),
    /// List labs, one per line, name first
    #[command(after_help = "Examples:\n  linerate lab list\n  linerate lab list --json")]
    List(ListArgs),
    /// Show a lab: nodes, addresses, links, emulator and its counters
    #[command(after_help = "Examples:\n  linerate lab show demo\n  linerate lab show demo --json")]
    Show(ShowArgs),
    /// Run a command inside a node: lab exec NAME NODE -- CMD [ARGS...]
    #[command(
        after_help = "Examples:\n  linerate lab exec demo recv -- iperf3 -s -D\n  \
        linerate lab exec demo gen -- ping -c 3 198.18.0.2"
    )]
    Exec(ExecArgs),
    /// Set sysctls inside a node (per-namespace keys only), read back
    #[command(after_help = "Examples:\n  \
        linerate lab set demo recv net.ipv4.tcp_rmem=\"4096 131072 33554432\"\n  \
        linerate lab set demo gen net.ipv4.tcp_congestion_control=bbr --json")]
    Set(SetArgs),
    /// Apply a firewall variant (nftables) on a node: none, stateless:N, stateful, file:PATH
    #[command(
        after_help = "Examples:\n  linerate lab firewall demo stateless:1000\n  \
        linerate lab firewall demo stateful --node dut\n  linerate lab firewall demo none"
    )]
    Firewall(FirewallArgs),
    /// Validate an experiment file (TOML) against this host and print its plan
    #[command(
        after_help = "Examples:\n  linerate lab check examples/lab/window-buffers.toml\n  \
        linerate lab check examples/lab/rmem-sweep.toml --json"
    )]
    Check(CheckArgs),
    /// Run an experiment: variants interleaved and repeated, each run on a fresh lab
    #[command(
        after_help = "Every run is stored as it ends, in an experiment marked running; \
        it is marked complete after the last run. Ctrl-C or SIGTERM stops the experiment (the run \
        under way does not count) and removes the lab: the summary so far is printed, the runs \
        made are kept marked interrupted (compare refuses them unless --allow-incomplete; \
        `linerate experiments --remove ID` drops them) and the exit status is 130 (143 after \
        SIGTERM).\n\n\
        Examples:\n  linerate lab run\n  \
        linerate lab run examples/lab/rmem-sweep.toml --repeat 3 --html sweep.html\n  \
        linerate lab run examples/lab/window-buffers.toml -t 2s --no-store --json\n  \
        linerate lab run examples/lab/router-firewall.toml --pps-generator socket"
    )]
    Run(RunArgs),
    /// RFC 2544 throughput of a router lab's DUT: NDR and PDR per frame size by an
    /// MLRsearch-style search, latency at 10/50/90 % of NDR
    Rfc2544(Box<rfc2544::Args>),
    /// Run the userspace link emulator (started by `lab up`)
    #[command(hide = true)]
    Emulate(EmulateArgs),
}

fn parse_name(s: &str) -> Result<LabName, String> {
    s.parse::<LabName>().map_err(|e| e.to_string())
}

/// `[TARGET=]RATE` with the rate's unit written out.
fn targeted_rate(s: &str) -> Result<Targeted<BitRate>, String> {
    Targeted::parse_with(s, BitRate::parse_with_unit)
}

/// `[TARGET=]DURATION` with the duration's unit written out.
fn targeted_duration(s: &str) -> Result<Targeted<Duration>, String> {
    Targeted::parse_with(s, Duration::parse_with_unit)
}

#[derive(Debug, clap::Args)]
struct UpArgs {
    /// Lab name: 1-8 lower-case letters/digits, starting with a letter
    #[arg(value_parser = parse_name)]
    name: LabName,
    /// Test bed: pair (gen, recv) or router (gen, dut, recv)
    #[arg(long, default_value = "pair")]
    topology: Topology,
    /// MTU of a link's interfaces, [LINK=]BYTES (default 1500)
    #[arg(long, value_name = "[LINK=]BYTES")]
    mtu: Vec<Targeted<u32>>,
    /// Segmentation/checksum offloads (TSO, GSO, GRO, SG, tx checksum) on the nodes' interfaces
    /// [default: off on emulated links (per-frame emulation), on elsewhere]
    #[arg(long, value_name = "[LINK=]on|off")]
    offloads: Vec<Targeted<OnOff>>,
    /// Emulated link rate, e.g. 1G; counted at L1 like real Ethernet (see --rate-layer)
    #[arg(long, value_name = "[TARGET=]RATE", value_parser = targeted_rate, allow_hyphen_values = true)]
    rate: Vec<Targeted<BitRate>>,
    /// One-way delay, e.g. 20ms
    #[arg(long, value_name = "[TARGET=]DURATION", value_parser = targeted_duration, allow_hyphen_values = true)]
    delay: Vec<Targeted<Duration>>,
    /// Uniform jitter around the delay, e.g. 1ms (frames keep their order unless --reorder)
    #[arg(long, value_name = "[TARGET=]DURATION", value_parser = targeted_duration, allow_hyphen_values = true)]
    jitter: Vec<Targeted<Duration>>,
    /// Random (Bernoulli) loss, e.g. 0.1%
    #[arg(long, value_name = "[TARGET=]PERCENT", allow_hyphen_values = true)]
    loss: Vec<Targeted<Percent>>,
    /// Frames held per direction before tail drop (default: 2 x BDP, at least 1000)
    #[arg(long, value_name = "[TARGET=]FRAMES")]
    limit: Vec<Targeted<u32>>,
    /// Let jitter reorder frames
    #[arg(long)]
    reorder: bool,
    /// What --rate counts on every link. l1 (the wire, as `calc rate` counts): each frame +
    /// 4 B FCS, padded to 64 B, + 8 B preamble/SFD + 12 B inter-frame gap, so 1G carries what
    /// real 1 Gbit/s Ethernet carries (941 Mbit/s of TCP at MTU 1500); kernel netem gets
    /// `rate RATE 24` (netem does not pad short frames). l2: frames as the kernel holds them
    /// (header + payload, no FCS), as tbf and plain netem count
    #[arg(long, value_name = "l1|l2", default_value = "l1")]
    rate_layer: RateLayer,
    /// Link emulator: kernel netem if present (auto), kernel, or linerate's userspace emulator
    #[arg(long, default_value = "auto")]
    emulator: EmulatorChoice,
    /// Per-node sysctl applied after bring-up, NODE:KEY=VALUE (repeatable)
    #[arg(long, value_name = "NODE:KEY=VALUE")]
    sysctl: Vec<NodeSysctl>,
    /// A tunnel between gen and recv over the links (openvpn or wireguard); the tunnel
    /// addresses are gen 198.19.128.1, recv 198.19.128.2
    #[arg(long, value_name = "KIND")]
    tunnel: Option<String>,
    /// Tunnel option KEY=VALUE (repeatable). openvpn: cipher, auth, proto (udp|tcp), tun-mtu,
    /// fragment, mssfix, sndbuf, rcvbuf, txqueuelen, dco (auto|off); wireguard: mtu, implementation
    /// (auto|kernel|userspace)
    #[arg(long, value_name = "KEY=VALUE", requires = "tunnel")]
    tunnel_opt: Vec<String>,
    /// Print the lab as JSON (schema linerate.lab/1)
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
struct DownArgs {
    /// Lab name
    #[arg(value_parser = parse_name)]
    name: LabName,
    /// Print what was removed as JSON (schema linerate.lab-down/1)
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
struct ListArgs {
    /// Print JSON (schema linerate.lab-list/1)
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
struct ShowArgs {
    /// Lab name
    #[arg(value_parser = parse_name)]
    name: LabName,
    /// Print JSON (schema linerate.lab/1, with emulator counters)
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
struct ExecArgs {
    /// Lab name
    #[arg(value_parser = parse_name)]
    name: LabName,
    /// Node: gen, recv (and dut in the router topology)
    node: String,
    /// The command and its arguments (after --)
    #[arg(last = true, required = true, value_name = "CMD")]
    command: Vec<OsString>,
}

#[derive(Debug, clap::Args)]
struct SetArgs {
    /// Lab name
    #[arg(value_parser = parse_name)]
    name: LabName,
    /// Node: gen, recv (and dut in the router topology)
    node: String,
    /// KEY=VALUE assignments, e.g. net.ipv4.tcp_rmem="4096 131072 33554432"
    #[arg(required = true, value_name = "KEY=VALUE")]
    assignments: Vec<String>,
    /// Print JSON (schema linerate.lab-sysctl/1)
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
struct FirewallArgs {
    /// Lab name
    #[arg(value_parser = parse_name)]
    name: LabName,
    /// none | stateless:N (N non-matching rules, then accept) | stateful (conntrack) | file:PATH
    variant: Firewall,
    /// Node to filter on [default: dut, or recv in a pair]
    #[arg(long)]
    node: Option<String>,
    /// Print JSON (schema linerate.lab-firewall/1)
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
struct CheckArgs {
    /// The experiment file (see examples/lab/*.toml)
    file: PathBuf,
    /// Print the validated experiment and its run order as JSON (schema linerate.lab-experiment/1)
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
struct RunArgs {
    /// The experiment file [default: the embedded short window-buffers experiment]
    file: Option<PathBuf>,
    /// Repetitions per variant (overrides the file)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    repeat: Option<u32>,
    /// Duration of every run (overrides the file), e.g. 2s
    #[arg(short = 't', long, value_name = "DURATION", allow_hyphen_values = true)]
    duration: Option<Duration>,
    /// Results and errors only: no progress on the terminal, no closing hints
    #[arg(short, long)]
    quiet: bool,
    /// Lab name to use (default: the file's lab_name, or x + pid digits)
    #[arg(long, value_parser = parse_name)]
    lab_name: Option<LabName>,
    /// Print the results as JSON (schema linerate.lab-run/1)
    #[arg(long)]
    json: bool,
    /// Also write a self-contained HTML report of the experiment (from the stored runs)
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// The load generator: linerate's own traffic engine, or iperf3 (Debian package iperf3;
    /// it cannot do rr)
    #[arg(long, value_enum, default_value = "linerate")]
    load: LoadTool,
    /// What sends pps workloads (overrides the file's workload.generator): frames (linerate
    /// gen's raw frames, counted by gen --receive; the default) or socket (UDP sockets, the
    /// traffic engine's --mode pps)
    #[arg(long, value_name = "GENERATOR")]
    pps_generator: Option<linerate_lab::experiment::PpsGenerator>,
    /// Profile every run (every CPU sampled while the workload runs) and store the folded
    /// stacks with it: `linerate compare --experiment` then shows which functions' share of
    /// the CPU changed, with a confidence from the repetitions
    #[arg(long)]
    profile: bool,
    /// Samples per second on each CPU with --profile
    #[arg(
        long,
        value_name = "HZ",
        default_value_t = 99,
        requires = "profile",
        value_parser = clap::value_parser!(u64).range(1..=10000)
    )]
    profile_frequency: u64,
    #[command(flatten)]
    store: crate::cmd::history::db::StoreRunArgs,
}

/// Which program generates an experiment's traffic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum LoadTool {
    /// `linerate server` / `linerate client` (this binary)
    Linerate,
    /// `iperf3 -s` / `iperf3 -c`
    Iperf3,
}

#[derive(Debug, clap::Args)]
struct EmulateArgs {
    /// Emulator configuration (JSON)
    #[arg(long)]
    config: String,
}

/// Runs `linerate lab`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let dir = StateDir::resolve(args.state_dir);
    match args.command {
        LabCommand::Up(a) => up(&dir, *a),
        LabCommand::Down(a) => {
            let report = linerate_lab::down(&dir, &a.name)?;
            if a.json {
                output::print_json(&render::down_json(&report))?;
            } else {
                output::print_text(&render::down_text(&report))?;
            }
            Ok(ExitCode::SUCCESS)
        }
        LabCommand::List(a) => {
            let labs = dir.list()?;
            if a.json {
                output::print_json(&render::list_json(&labs))?;
            } else {
                output::print_text(&render::list_text(&labs))?;
            }
            Ok(ExitCode::SUCCESS)
        }
        LabCommand::Show(a) => {
            let state = linerate_lab::control::load(&dir, &a.name)?;
            let stats = linerate_lab::control::emulator_stats(&state);
            if a.json {
                output::print_json(&render::show_json(&state, &stats))?;
            } else {
                output::print_text(&render::show_text(&state, &stats))?;
            }
            Ok(ExitCode::SUCCESS)
        }
        LabCommand::Exec(a) => {
            let state = linerate_lab::control::load(&dir, &a.name)?;
            Err(linerate_lab::control::exec(&state, &a.node, &a.command).into())
        }
        LabCommand::Set(a) => {
            let assignments = a
                .assignments
                .iter()
                .map(|s| {
                    NodeSysctl::parse_assignment(&a.node, s)
                        .map_err(|e| anyhow::anyhow!("lab set: {e}"))
                })
                .collect::<anyhow::Result<Vec<_>>>()?;
            let writes = linerate_lab::control::set(&dir, &a.name, &a.node, &assignments)?;
            if a.json {
                output::print_json(&render::set_json(&a.name, &writes))?;
            } else {
                output::print_text(&render::set_text(&writes))?;
            }
            Ok(ExitCode::SUCCESS)
        }
        LabCommand::Firewall(a) => {
            let applied =
                linerate_lab::control::set_firewall(&dir, &a.name, a.node.as_deref(), &a.variant)?;
            if a.json {
                output::print_json(&serde_json::json!({
                    "schema": "linerate.lab-firewall/1",
                    "lab": a.name.as_str(),
                    "node": applied.node,
                    "variant": applied.variant,
                    "rules": applied.rules,
                }))?;
            } else {
                let rules = applied
                    .rules
                    .map_or(String::new(), |r| format!(" ({r} rules per packet)"));
                output::print_text(&format!(
                    "{}: firewall {}{rules}\n",
                    applied.node, applied.variant
                ))?;
            }
            Ok(ExitCode::SUCCESS)
        }
        LabCommand::Check(a) => {
            let exp = linerate_lab::experiment::load(&a.file, &linerate_lab::experiment::LiveHost)?;
            let order = linerate_lab::experiment::schedule::interleaved(
                exp.variants.len(),
                exp.repetitions,
            );
            if a.json {
                output::print_json(&serde_json::json!({
                    "schema": "linerate.lab-experiment/1",
                    "experiment": exp,
                    "order": order,
                }))?;
            } else {
                output::print_text(&render::experiment_text(&exp))?;
            }
            Ok(ExitCode::SUCCESS)
        }
        LabCommand::Run(a) => run_experiment(&dir, a),
        LabCommand::Rfc2544(a) => rfc2544::run(&dir, *a),
        LabCommand::Emulate(a) => {
            let cfg: linerate_lab::emulator::EmulatorConfig = serde_json::from_str(&a.config)
                .context("lab emulate: --config is not a valid emulator configuration")?;
            linerate_lab::emulator::run(&cfg, std::io::stdout())?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn up(dir: &StateDir, a: UpArgs) -> anyhow::Result<ExitCode> {
    let opts = LinkOptions {
        mtu: a.mtu,
        offloads: a.offloads,
        rate: a.rate,
        delay: a.delay,
        jitter: a.jitter,
        loss: a.loss,
        limit: a.limit,
        reorder: a.reorder,
        rate_layer: a.rate_layer,
    };
    let mut spec = LabSpec::new(a.name, a.topology, &opts, a.emulator, a.sysctl)?;
    if let Some(kind) = &a.tunnel {
        spec.tunnel = Some(
            linerate_lab::tunnel::TunnelSpec::parse(kind, &a.tunnel_opt)
                .map_err(|e| anyhow::anyhow!("--tunnel {kind}: {e}"))?,
        );
    }
    let exe = std::env::current_exe()
        .context("locate the linerate executable (for the link emulator)")?;
    let report = linerate_lab::up(
        &spec,
        &linerate_lab::UpOptions {
            state_dir: dir.clone(),
            emulator_exe: exe,
        },
    )?;
    if a.json {
        output::print_json(&render::up_json(&report))?;
    } else {
        let mut text = render::show_text(&report.state, &[]);
        for w in &report.sysctls {
            text.push_str(&format!(
                "  sysctl {}: {} = {} (was {})\n",
                w.node, w.key, w.after, w.before
            ));
        }
        output::print_text(&text)?;
    }
    let _ = std::io::stdout().flush();
    Ok(ExitCode::SUCCESS)
}

/// The experiment `lab run` runs without a file: window-buffers in a short form (3 rounds of
/// 4-second runs, about a minute).
const EMBEDDED_EXPERIMENT: &str = include_str!("../../../../examples/lab/window-buffers.toml");

/// The confidence level of `lab run`'s verdicts.
const LAB_CONFIDENCE: linerate_stats::Confidence = linerate_stats::Confidence::P95;

fn run_experiment(dir: &StateDir, a: RunArgs) -> anyhow::Result<ExitCode> {
    use linerate_lab::experiment;
    let host = experiment::LiveHost;
    let mut exp = match &a.file {
        Some(f) => experiment::load(f, &host)?,
        None => {
            let mut e = experiment::parse(
                EMBEDDED_EXPERIMENT,
                std::path::Path::new("(embedded) window-buffers.toml"),
                &host,
            )?;
            e.repetitions = 3;
            for v in &mut e.variants {
                v.workload.duration = Duration::from_secs(4);
            }
            e
        }
    };
    if let Some(n) = a.repeat {
        exp.repetitions = n;
    }
    if let Some(d) = a.duration {
        if d == Duration::ZERO || d > Duration::from_secs(3600) {
            anyhow::bail!("--duration {d}: must be more than 0 and at most 1 hour");
        }
        for v in &mut exp.variants {
            if let Some(first) = v.workload.initial_trial.filter(|&t| t > d) {
                anyhow::bail!(
                    "--duration {d} is shorter than the file's workload.initial_trial {first} \
                     (the rfc2544 search's first trials)"
                );
            }
            v.workload.duration = d;
        }
    }
    if let Some(name) = a.lab_name.clone() {
        for v in &mut exp.variants {
            v.spec.name = name.clone();
        }
        exp.lab_name = name;
    }
    if let Some(g) = a.pps_generator {
        for v in &mut exp.variants {
            if v.workload.mode == experiment::WorkloadMode::Pps {
                v.workload.generator = Some(g);
            }
        }
    }
    if a.html.is_some() && a.store.no_store {
        anyhow::bail!("--html FILE is drawn from the stored runs: drop --no-store");
    }
    let exe = std::env::current_exe()
        .context("locate the linerate executable (for the link emulator)")?;
    let opts = linerate_lab::UpOptions {
        state_dir: dir.clone(),
        emulator_exe: exe,
    };
    let tty = !a.quiet && std::io::IsTerminal::is_terminal(&std::io::stderr());
    // On a terminal: a bar over all runs (with elapsed time, ticking while a run is under way)
    // and one line per finished run above it; piped: quiet.
    let bar = tty.then(|| {
        let total = u64::from(exp.repetitions) * exp.variants.len() as u64;
        let pb = indicatif::ProgressBar::new(total);
        pb.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} runs {msg}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        pb.enable_steady_tick(std::time::Duration::from_millis(200));
        pb
    });
    // On real hosts: every host checked (and what an earlier run left rolled back) before
    // anything is stored or changed.
    let mut hosts_bed = match &exp.hosts {
        Some(h) => Some(run_hosts::prepare(h, &exp, &a)?),
        None => None,
    };
    // The experiment is in the store (running) before its first run: its identity comes
    // from there, and a killed runner leaves it reading as incomplete.
    let mut recorder = match &hosts_bed {
        Some(bed) => run_hosts::begin(&a.store, &exp, bed)?,
        None => record::begin(&a.store, &exp)?,
    };
    let engine;
    let plain: &dyn linerate_lab::runner::Load = match a.load {
        LoadTool::Linerate => {
            engine = linerate_lab::runner::Engine {
                binary: std::env::current_exe().context("cannot find the linerate binary")?,
                state_dir: dir.clone(),
            };
            &engine
        }
        LoadTool::Iperf3 => &linerate_lab::runner::Iperf3,
    };
    let profiled = if a.profile {
        Some(linerate_lab::profiled::Profiled::new(
            plain,
            a.profile_frequency,
            &|w: &str| crate::output::warn(w),
        )?)
    } else {
        None
    };
    let load: &dyn linerate_lab::runner::Load = match &profiled {
        Some(p) => p,
        None => plain,
    };
    let mut progress = |r: &linerate_lab::runner::RunRecord, i: usize, n: usize| {
        // Each run is stored as it ends, so an interrupted experiment keeps what it measured.
        let profile = profiled
            .as_ref()
            .and_then(|p| Some(record::profile(&p.take()?, p.frequency())));
        match profile.transpose() {
            Ok(profile) => {
                recorder.record(r, profile);
            }
            Err(e) => crate::output::warn(&format!("{e:#}")),
        }
        if let Some(pb) = &bar {
            let what = match (&r.measure, &r.error) {
                (Some(m), _) => render::quantity(m.value, m.unit),
                (None, Some(e)) => format!("failed: {e}"),
                (None, None) => "failed".to_owned(),
            };
            pb.set_length(n as u64);
            pb.set_position(i as u64);
            pb.println(format!("[{i}/{n}] {}: {what}", r.variant));
        }
    };
    let result = match hosts_bed.as_mut() {
        Some(bed) => {
            linerate_lab::runner::run_on(&exp, bed, "linerate", LAB_CONFIDENCE, &mut progress)
        }
        None => linerate_lab::runner::run(&exp, &opts, load, LAB_CONFIDENCE, &mut progress),
    };
    if let Some(pb) = &bar {
        pb.finish_and_clear();
    }
    let result = match result {
        Ok(r) => r,
        Err(e) => {
            // Stopped before its last run: what was stored stays, marked so.
            let _ = recorder.finish(linerate_store::ExperimentStatus::Interrupted);
            return Err(match recorder.experiment().map(|e| e.id.as_str()) {
                Some(id) => anyhow::Error::new(e).context(format!(
                    "lab run: experiment {id} stopped after {} stored run(s), marked interrupted",
                    recorder.stored
                )),
                None => e.into(),
            });
        }
    };
    let interrupted = result.interrupted.map(crate::stop::from_number);
    recorder.finish(if interrupted.is_some() {
        linerate_store::ExperimentStatus::Interrupted
    } else {
        linerate_store::ExperimentStatus::Complete
    })?;
    if a.json {
        let mut doc = serde_json::to_value(&result)?;
        doc["stored_as"] = serde_json::json!(recorder.experiment().map(|e| e.id.as_str()));
        if let Some(bed) = &hosts_bed {
            doc["hosts"] = serde_json::to_value(&bed.facts)?;
        }
        output::print_json(&doc)?;
    } else {
        output::print_text(&render::run_text(&exp, &result))?;
        if let Some(bed) = &hosts_bed {
            output::print_text(&run_hosts::facts_text(bed))?;
        }
    }
    if let Some(e) = recorder.error.take() {
        return Err(anyhow::Error::new(e).context(format!(
            "lab run: {} run(s) were stored before the results store failed",
            recorder.stored
        )));
    }
    if let Some(sig) = interrupted {
        let planned = exp.variants.len() * exp.repetitions as usize;
        eprint!(
            "linerate: {}",
            record::interrupted(
                &recorder,
                crate::stop::name(sig),
                result.runs.len(),
                planned
            )
        );
        return Ok(crate::stop::exit_code(sig));
    }
    if a.json || a.quiet {
        if let Some(id) = recorder.experiment().map(|e| e.id.as_str()) {
            eprintln!(
                "linerate: stored {} run(s) as experiment {id}",
                recorder.stored
            );
        }
    } else {
        output::print_text(&format!("\n{}", record::closing(&recorder)))?;
    }
    let experiment_id = recorder
        .experiment()
        .map(|e| e.id.as_str())
        .unwrap_or_default()
        .to_owned();
    if let Some(html) = &a.html {
        // Rendered in-process, exactly as `linerate report --experiment ID -o FILE` does.
        super::report::experiment_html(a.store.db.clone(), &experiment_id, html)
            .with_context(|| format!("--html {}", html.display()))?;
        eprintln!("wrote {}", html.display());
    }
    Ok(ExitCode::SUCCESS)
}
