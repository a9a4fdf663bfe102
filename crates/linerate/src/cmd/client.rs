//! `linerate client`: one test against a linerate or iperf3 server.

pub mod auth;
mod cost;
mod human;
pub mod limit;
mod modes;
mod tos;
pub mod udp_limit;

use std::io::Write;
use std::net::IpAddr;
use std::process::ExitCode;

use linerate_iperf3::stream::Event as StreamEvent;
use linerate_sys::signal::Signal;
use linerate_traffic::config::{Family, Mode, SocketOptions};
use linerate_traffic::iperf3_json;
use linerate_traffic::{ClientConfig, Event, Protocol};
use linerate_units::{BitRate, ByteSize, Duration};

/// Arguments of `linerate client` (iperf3's client flags where iperf3 has one).
#[derive(Debug, clap::Args)]
#[command(
    group = clap::ArgGroup::new("server").required(true).args(["host", "connect"]),
    after_help = "Talks iperf3's protocol: works against `iperf3 -s` and `linerate server`. \
Sizes and rates follow linerate's unit rules: -l 128KiB (not 128K) for iperf3's 131072 bytes. \
Ctrl-C (SIGINT) or SIGTERM ends the test early: the summary so far is printed and the run is \
stored marked partial; the exit status is 130 (143 after SIGTERM).

Examples:
  linerate client 198.18.0.2 -t 10 -P 4
  linerate client -c 198.18.0.2 -R -O 2s
  linerate client 198.18.0.2 -u -b 500M -l 1400 --bidir
  linerate client 198.18.0.2 --mode rr --rr-size 64/1KiB --json
  IPERF3_PASSWORD=secret linerate client 198.18.0.2 --username mario --rsa-public-key-path pub.pem
  IPERF3_PASSWORD=secret linerate client 198.18.0.2 --username mario --rsa-public-key-path pub.pem \\
      --use-pkcs1-padding          # against an iperf3 server before 3.17 (Debian 12's 3.12)"
)]
pub struct Args {
    /// Server host name or address
    #[arg(value_name = "HOST")]
    pub host: Option<String>,
    /// The server, as iperf3 takes it (`-c HOST`); the same as HOST
    #[arg(
        short = 'c',
        long = "client",
        value_name = "HOST",
        conflicts_with = "host"
    )]
    pub connect: Option<String>,
    /// Where the run is stored (every run is, unless --no-store)
    #[command(flatten)]
    pub store: crate::cmd::history::db::StoreRunArgs,
    /// Server port
    #[arg(short, long, default_value_t = 5201)]
    pub port: u16,
    /// UDP instead of TCP
    #[arg(short, long)]
    pub udp: bool,
    /// Test length (a bare number is seconds, as iperf3's -t)
    #[arg(
        short = 't',
        long = "duration",
        alias = "time",
        value_name = "DURATION",
        default_value = "10s",
        allow_hyphen_values = true
    )]
    pub duration: Duration,
    /// Bytes to send instead of a time (e.g. 1GB, 100MiB)
    #[arg(
        short = 'n',
        long = "bytes",
        value_name = "SIZE",
        allow_hyphen_values = true
    )]
    pub bytes: Option<ByteSize>,
    /// Blocks (writes of -l bytes) to send instead of a time
    #[arg(short = 'k', long = "blockcount", value_name = "N")]
    pub blocks: Option<u64>,
    /// Parallel streams (per direction)
    #[arg(short = 'P', long, default_value_t = 1, value_name = "N")]
    pub parallel: u32,
    /// The server sends, the client receives
    #[arg(short = 'R', long, conflicts_with = "bidir")]
    pub reverse: bool,
    /// Both sides send at once
    #[arg(long)]
    pub bidir: bool,
    /// Write size (TCP, default 128KiB) or datagram payload (UDP, default 1448)
    #[arg(
        short = 'l',
        long = "length",
        value_name = "SIZE",
        allow_hyphen_values = true
    )]
    pub len: Option<ByteSize>,
    /// Target rate per stream (UDP default 1M, as iperf3; 0 = unlimited)
    #[arg(
        short = 'b',
        long = "bitrate",
        value_name = "RATE",
        allow_hyphen_values = true
    )]
    pub bitrate: Option<BitRate>,
    /// Socket buffer size (SO_SNDBUF and SO_RCVBUF)
    #[arg(
        short = 'w',
        long = "window",
        value_name = "SIZE",
        allow_hyphen_values = true
    )]
    pub window: Option<ByteSize>,
    /// TCP maximum segment size
    #[arg(short = 'M', long = "set-mss", value_name = "BYTES")]
    pub mss: Option<u32>,
    /// TCP congestion control algorithm (e.g. cubic, bbr)
    #[arg(short = 'C', long = "congestion", value_name = "ALGO")]
    pub congestion: Option<String>,
    /// Leave out the first DURATION (slow start) from the results
    #[arg(
        short = 'O',
        long = "omit",
        value_name = "DURATION",
        default_value = "0",
        allow_hyphen_values = true
    )]
    pub omit: Duration,
    /// Time between interval reports (0 = none)
    #[arg(
        short = 'i',
        long = "interval",
        value_name = "DURATION",
        default_value = "1s",
        allow_hyphen_values = true
    )]
    pub interval: Duration,
    /// IP TOS byte (decimal, 0x hex or 0o octal)
    #[arg(short = 'S', long, value_name = "TOS", value_parser = tos::parse_tos, conflicts_with = "dscp")]
    pub tos: Option<u8>,
    /// DSCP code point: a number 0-63 or a name (EF, AF41, CS1, …)
    #[arg(long, value_name = "DSCP", value_parser = tos::parse_dscp)]
    pub dscp: Option<u8>,
    /// Disable Nagle's algorithm (TCP_NODELAY) on data streams
    #[arg(short = 'N', long = "no-delay")]
    pub no_delay: bool,
    /// Local address to bind
    #[arg(short = 'B', long, value_name = "ADDR")]
    pub bind: Option<IpAddr>,
    /// Bind the sockets to a network device (SO_BINDTODEVICE)
    #[arg(long, value_name = "DEV")]
    pub bind_dev: Option<String>,
    /// IPv4 only
    #[arg(short = '4', long = "version4", conflicts_with = "v6")]
    pub v4: bool,
    /// IPv6 only
    #[arg(short = '6', long = "version6")]
    pub v6: bool,
    /// Test mode: stream (iperf3-compatible); pps, rr, crr need a linerate server
    #[arg(long, value_enum, default_value = "stream")]
    pub mode: ModeArg,
    /// Ask the server for its own report
    #[arg(long)]
    pub get_server_output: bool,
    #[command(flatten)]
    pub auth: auth::AuthArgs,
    /// Timeout for connecting and for each handshake step (a unit is required: iperf3 reads a
    /// bare number here as milliseconds)
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = Duration::parse_with_unit, allow_hyphen_values = true)]
    pub connect_timeout: Duration,
    /// Print iperf3's JSON schema (plus a `linerate` object) at the end
    #[arg(short = 'J', long, conflicts_with = "json_stream")]
    pub json: bool,
    /// Print one JSON event per line as the test runs (iperf3's --json-stream)
    #[arg(long)]
    pub json_stream: bool,
    /// How often each TCP stream's TCP_INFO is sampled for the evidence of what limited the
    /// rate (in the --json document's linerate.evidence), on both sides when the server is
    /// linerate; 0 turns sampling off
    #[arg(long, value_name = "HZ", default_value_t = linerate_traffic::config::DEFAULT_EVIDENCE_HZ,
          value_parser = clap::value_parser!(u32).range(0..=i64::from(linerate_traffic::config::MAX_EVIDENCE_HZ)))]
    pub evidence_hz: u32,
    /// The path's bottleneck rate (`1G`), for the limit block: the ceiling a TCP test is
    /// judged against and the buffers that reach it are sized for
    #[arg(long, value_name = "RATE", value_parser = crate::cmd::calc::positive_rate, allow_hyphen_values = true)]
    pub path_rate: Option<linerate_units::BitRate>,
    /// pps/rr/crr options and --affinity
    #[command(flatten)]
    pub modes: modes::ModeArgs,
}

/// `--mode` values.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ModeArg {
    /// Bulk TCP or UDP streams
    Stream,
    /// Small UDP datagrams at the highest packet rate
    Pps,
    /// TCP/UDP request/response
    Rr,
    /// TCP connect/request/response
    Crr,
}

impl Args {
    /// The server: HOST or `-c HOST` (clap requires exactly one).
    fn server(&self) -> &str {
        self.host
            .as_deref()
            .or(self.connect.as_deref())
            .unwrap_or_default()
    }

    fn config(&self) -> anyhow::Result<ClientConfig> {
        if self.parallel == 0 || self.parallel > 128 {
            anyhow::bail!("-P {}: expected 1 to 128 streams", self.parallel);
        }
        if self.duration.as_std().is_zero() && self.bytes.is_none() && self.blocks.is_none() {
            anyhow::bail!("-t 0: give a test length, or -n/-k to send a fixed amount");
        }
        Ok(ClientConfig {
            host: self.server().to_owned(),
            port: self.port,
            family: if self.v4 {
                Family::V4
            } else if self.v6 {
                Family::V6
            } else {
                Family::Any
            },
            bind: self.bind,
            protocol: if self.udp {
                Protocol::Udp
            } else {
                Protocol::Tcp
            },
            mode: match self.mode {
                ModeArg::Stream => Mode::Stream,
                ModeArg::Pps => Mode::Pps,
                ModeArg::Rr => Mode::Rr,
                ModeArg::Crr => Mode::Crr,
            },
            duration: self.duration.as_std(),
            bytes: self.bytes,
            blocks: self.blocks,
            parallel: self.parallel,
            reverse: self.reverse,
            bidir: self.bidir,
            len: self.len,
            bitrate: self.bitrate,
            omit: self.omit.as_std(),
            interval: self.interval.as_std(),
            sock: SocketOptions {
                window: self.window,
                mss: self.mss,
                congestion: self.congestion.clone(),
                tos: self.tos.or(self.dscp.map(|d| d << 2)),
                bind_dev: self.bind_dev.clone(),
                nodelay: self.no_delay,
            },
            get_server_output: self.get_server_output,
            connect_timeout: self.connect_timeout.as_std(),
            modes: Default::default(),
            authtoken: self.auth.authtoken()?,
            evidence_hz: self.evidence_hz,
        })
    }
}

/// Writes one `--json-stream` line.
fn emit(line: &StreamEvent<'_>) {
    let Ok(line) = serde_json::to_string(line) else {
        return;
    };
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut cfg = args.config()?;
    args.modes.apply(&mut cfg);
    let stop = crate::stop::Stop::install()?;
    let mut human = human::Renderer::new(&cfg);
    let mut mode_human = modes::ModeRenderer::new(&cfg);
    let result = {
        let mut sink = |ev: Event<'_>| {
            if args.json_stream {
                match ev {
                    Event::Start(s) => emit(&StreamEvent::Start(&iperf3_json::start(s))),
                    Event::Interval(iv) => emit(&StreamEvent::Interval(&iperf3_json::interval(iv))),
                }
            } else if !args.json && !mode_human.event(ev) {
                human.event(ev);
            }
        };
        linerate_traffic::run_client(&cfg, stop.flag(), &mut sink)
    };
    let result = match result {
        Ok(r) => r,
        Err(linerate_traffic::TrafficError::Interrupted) if stop.requested() => {
            let sig = stop.signal().unwrap_or(Signal::SIGINT);
            eprintln!(
                "linerate: {} before any data moved: nothing to report or store",
                crate::stop::name(sig)
            );
            return Ok(crate::stop::exit_code(sig));
        }
        Err(e) => {
            if args.json || args.json_stream {
                let err = serde_json::json!({"schema": linerate_traffic::result::SCHEMA, "error": e.to_string()});
                if args.json_stream {
                    emit(&StreamEvent::Error(&e.to_string()));
                } else {
                    crate::output::print_json(&err)?;
                }
            }
            return Err(
                anyhow::Error::new(e).context(format!("client to {}:{}", cfg.host, cfg.port))
            );
        }
    };
    let mut document = iperf3_json::document(&result);
    // A stop signal ended the test early: the results so far, marked partial everywhere.
    let interrupted = stop.signal();
    if let (Some(sig), Some(l)) = (interrupted, document.linerate.as_mut()) {
        l.interrupted = Some(crate::stop::name(sig).to_owned());
    }
    let snapshot = linerate_probe::HostSnapshot::capture(&linerate_probe::ProbeRoots::live());
    let udp_limit = linerate_explain::udp::explain(&document);
    let tcp_limit = limit::explain(&document, args.path_rate, &snapshot);
    if let Some(l) = document.linerate.as_mut() {
        l.udp_limit.clone_from(&udp_limit);
        l.limit.clone_from(&tcp_limit);
    }
    if args.json_stream {
        emit(&StreamEvent::End(&document.end));
    } else if args.json {
        crate::output::print_json(&document)?;
    } else {
        let text = modes::summary(&result, || human.summary(&result));
        let cost = document.linerate.as_ref().and_then(|l| l.cost.as_ref());
        crate::output::print_text(&cost::with_cost(text, cost))?;
        if let Some(l) = &udp_limit {
            crate::output::print_text(&udp_limit::render(l))?;
        }
        if let Some(l) = &tcp_limit {
            crate::output::print_text(&limit::render(l))?;
        }
    }
    if let Some(sig) = interrupted {
        eprintln!(
            "linerate: {} ended the test early: the summary covers the {:.1} s it ran{}",
            crate::stop::name(sig),
            result.intervals.last().map_or(0.0, |iv| iv.end),
            if args.store.no_store {
                ""
            } else {
                "; the run is stored marked partial"
            }
        );
    }
    store_run(&args, &document, snapshot)?;
    Ok(interrupted.map_or(ExitCode::SUCCESS, crate::stop::exit_code))
}

/// Keeps the run in the results store (with this host's snapshot) and says under which id.
/// A store that cannot be written is a warning: the measurement itself was printed above.
fn store_run(
    args: &Args,
    document: &linerate_iperf3::Document,
    host: linerate_probe::HostSnapshot,
) -> anyhow::Result<()> {
    if args.store.no_store {
        return Ok(());
    }
    let host = serde_json::to_value(host).ok();
    match crate::cmd::history::db::store_measured_run(&args.store, document, host, None) {
        Ok(Some(id)) if args.json || args.json_stream => eprintln!("linerate: stored as run {id}"),
        Ok(Some(id)) => crate::output::print_text(&format!("stored as run {id}\n"))?,
        Ok(None) => {}
        Err(e) => eprintln!(
            "linerate: warning: the run was not stored ({e:#}); --no-store skips the store"
        ),
    }
    Ok(())
}
