//! `linerate server`: serve iperf3-compatible tests, many at once, within limits.

use std::io::Write;
use std::net::IpAddr;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use linerate_traffic::server::{AllowPrefix, FrameCounterAccess, Level, ServerLog};
use linerate_traffic::{Server, ServerConfig};
use linerate_units::Duration;

/// Arguments of `linerate server`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Any iperf3 client (or `linerate client`) can run tests against this \
server; unlike iperf3, several clients can test at the same time. Logs go to stderr. SIGINT or \
SIGTERM stops it cleanly (exit 130 or 143).

Examples:
  linerate server
  linerate server -p 5202 -B 198.18.0.2 --max-tests 4
  linerate server --one-off --idle-timeout 10s
  linerate server --max-pending-per-ip 16 --handshake-timeout 5s
  linerate server --server-bitrate-limit 1G/5 --max-duration 30s
  linerate server --allow 198.18.0.0/15 --allow 2001:db8::/32
  linerate server --rsa-private-key-path private.pem --authorized-users-path users.csv
  linerate server --rsa-private-key-path private.pem --authorized-users-path users.csv \\
      --use-pkcs1-padding          # for iperf3 clients before 3.17 (Debian 12's 3.12)
  linerate server --allow 198.18.0.0/15 --allow-frame-counter=eth2   # rfc2544 --rx-host

--allow-frame-counter lets a linerate client (`linerate rfc2544 --rx-host`) count `linerate \
gen`'s frames on this host's interfaces (all, or only those listed) through the control \
channel, after --allow and authentication like any test: the server opens a raw packet socket \
on request (needs root or CAP_NET_RAW, Linux). Without it such requests are refused."
)]
pub struct Args {
    /// Port for control and data (TCP and UDP)
    #[arg(short, long, default_value_t = 5201)]
    pub port: u16,
    /// Address to listen on (default: all, IPv6 and IPv4)
    #[arg(short = 'B', long, value_name = "ADDR")]
    pub bind: Option<IpAddr>,
    /// Serve one test, then exit
    #[arg(short = '1', long)]
    pub one_off: bool,
    /// Tests running at once; more clients get "busy" (iperf3's access denied)
    #[arg(long, default_value_t = 16, value_name = "N")]
    pub max_tests: usize,
    /// Tests from one address running at once; more get "busy"
    #[arg(long, default_value_t = 8, value_name = "N")]
    pub max_tests_per_ip: usize,
    /// Streams per test, both directions counted
    #[arg(long, default_value_t = 128, value_name = "N")]
    pub max_streams: u32,
    /// Longest test accepted
    #[arg(long, default_value = "1h", value_name = "DURATION", value_parser = Duration::parse_with_unit, allow_hyphen_values = true)]
    pub max_duration: Duration,
    /// Total rate of one test, all streams (iperf3's RATE[/SECONDS]): a test asking for more
    /// is refused, one averaging more over SECONDS (default 5) is ended
    #[arg(long, value_name = "RATE[/SECS]", value_parser = parse_rate_limit)]
    pub server_bitrate_limit: Option<(u64, std::time::Duration)>,
    /// Time a client gets for each handshake step
    #[arg(long, default_value = "10s", value_name = "DURATION", value_parser = Duration::parse_with_unit, allow_hyphen_values = true)]
    pub handshake_timeout: Duration,
    /// Connections still in their handshake at once; when full, the oldest is closed
    #[arg(long, default_value_t = 1024, value_name = "N")]
    pub max_pending: usize,
    /// Connections from one address still in their handshake at once; when full, that
    /// address's oldest is closed
    #[arg(long, default_value_t = 64, value_name = "N")]
    pub max_pending_per_ip: usize,
    /// A test that moves no data for this long is ended
    #[arg(long, default_value = "30s", value_name = "DURATION", value_parser = Duration::parse_with_unit, allow_hyphen_values = true)]
    pub idle_timeout: Duration,
    /// Only clients from this prefix may connect (repeatable; IPv4 or IPv6 CIDR, a bare
    /// address is one host); others are closed at once and logged
    #[arg(long, value_name = "PREFIX", value_parser = parse_allow)]
    pub allow: Vec<AllowPrefix>,
    /// RSA private key (PEM) to decrypt clients' credentials with (iperf3's authentication;
    /// needs --authorized-users-path)
    #[arg(long, value_name = "PATH")]
    pub rsa_private_key_path: Option<std::path::PathBuf>,
    /// Users allowed to test: lines `user,SHA256HEX` of `{user}password` (iperf3's format)
    #[arg(long, value_name = "PATH")]
    pub authorized_users_path: Option<std::path::PathBuf>,
    /// Largest difference in seconds between a client's credentials and the server's clock
    #[arg(long, value_name = "SECONDS", default_value_t = 10)]
    pub time_skew_threshold: u64,
    /// Expect credentials with PKCS#1 v1.5 padding instead of OAEP: what iperf3 clients before
    /// 3.17 (Debian 12's 3.12) send, and 3.17-3.19 clients given the same flag. Like iperf3
    /// 3.17+, the server reads one padding only, OAEP by default. Decrypted by OpenSSL with
    /// implicit rejection, so a bad padding is not told apart from bad credentials
    #[arg(long, requires = "rsa_private_key_path")]
    pub use_pkcs1_padding: bool,
    /// Bind data sockets to a network device (SO_BINDTODEVICE)
    #[arg(long, value_name = "DEV")]
    pub bind_dev: Option<String>,
    /// Let linerate clients count frames on this host's interfaces (all, or =IF,IF only): it
    /// opens a raw packet socket on request (Linux)
    #[arg(long, value_name = "IFACES", num_args = 0..=1, require_equals = true,
          default_missing_value = "", value_delimiter = ',')]
    pub allow_frame_counter: Option<Vec<String>>,
}

fn parse_allow(s: &str) -> Result<AllowPrefix, String> {
    s.parse()
}

/// `RATE[/SECONDS]` as iperf3's `--server-bitrate-limit` takes it (`100M`, `1G/10`); the
/// seconds may also carry a unit (`1G/10s`).
fn parse_rate_limit(s: &str) -> Result<(u64, std::time::Duration), String> {
    let (rate, secs) = s.split_once('/').unwrap_or((s, "5"));
    let rate: linerate_units::BitRate = rate
        .parse()
        .map_err(|e| format!("{rate:?}: {e} (expected a rate like 100M or 1Gbit/s)"))?;
    let interval = match secs.parse::<u64>() {
        Ok(n) => std::time::Duration::from_secs(n),
        Err(_) => Duration::parse_with_unit(secs)
            .map_err(|e| format!("{secs:?} after '/': {e} (expected seconds, like 5)"))?
            .as_std(),
    };
    if rate.bps() == 0 {
        return Err(format!("{s:?}: expected a rate above 0"));
    }
    if interval.is_zero() || interval > std::time::Duration::from_secs(3600) {
        return Err(format!(
            "{s:?}: the averaging interval must be more than 0 and at most 1 hour"
        ));
    }
    Ok((rate.bps(), interval))
}

fn log_line(rec: &ServerLog) -> String {
    let level = match rec.level {
        Level::Info => "",
        Level::Warn => "warning: ",
    };
    let mut who = String::new();
    if let Some(n) = rec.test {
        who.push_str(&format!("test {n} "));
    }
    if let Some(p) = rec.peer {
        who.push_str(&format!("{p} "));
    }
    let who = if who.is_empty() {
        String::new()
    } else {
        format!("[{}] ", who.trim_end())
    };
    format!("linerate server: {level}{who}{}\n", rec.message)
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    for (flag, n) in [
        ("--max-tests", args.max_tests),
        ("--max-streams", args.max_streams as usize),
        ("--max-tests-per-ip", args.max_tests_per_ip),
        ("--max-pending", args.max_pending),
        ("--max-pending-per-ip", args.max_pending_per_ip),
    ] {
        if n == 0 {
            anyhow::bail!("{flag} 0: expected at least 1");
        }
    }
    if args.max_pending > 65_536 {
        anyhow::bail!(
            "--max-pending {}: expected at most 65536 (each pending connection holds a descriptor)",
            args.max_pending
        );
    }
    let week = std::time::Duration::from_secs(7 * 86_400);
    for (flag, d) in [
        ("--max-duration", args.max_duration),
        ("--handshake-timeout", args.handshake_timeout),
        ("--idle-timeout", args.idle_timeout),
    ] {
        if d.as_std() > week || d.as_std().is_zero() {
            anyhow::bail!("{flag} {d}: expected more than 0 and at most 7 days");
        }
    }
    use linerate_traffic::protocol::auth;
    let padding = if args.use_pkcs1_padding {
        auth::Padding::Pkcs1
    } else {
        auth::Padding::Oaep
    };
    let auth = match (&args.rsa_private_key_path, &args.authorized_users_path) {
        (None, None) => None,
        (Some(k), Some(u)) => Some(Arc::new(auth::Authorizer::load(
            k,
            u,
            args.time_skew_threshold,
            padding,
        )?)),
        (Some(_), None) => anyhow::bail!("--rsa-private-key-path needs --authorized-users-path"),
        (None, Some(_)) => anyhow::bail!("--authorized-users-path needs --rsa-private-key-path"),
    };
    let cfg = ServerConfig {
        bind: args.bind,
        port: args.port,
        one_off: args.one_off,
        max_tests: args.max_tests,
        max_tests_per_ip: args.max_tests_per_ip,
        max_streams: args.max_streams,
        max_duration: args.max_duration.as_std(),
        bitrate_limit: args.server_bitrate_limit.map_or(0, |(r, _)| r),
        bitrate_limit_interval: args
            .server_bitrate_limit
            .map_or(std::time::Duration::from_secs(5), |(_, i)| i),
        handshake_timeout: args.handshake_timeout.as_std(),
        idle_timeout: args.idle_timeout.as_std(),
        max_pending: args.max_pending,
        max_pending_per_ip: args.max_pending_per_ip,
        refusal_log_interval: std::time::Duration::from_secs(10),
        allow: args.allow.clone(),
        auth,
        sock: linerate_traffic::config::SocketOptions {
            bind_dev: args.bind_dev.clone(),
            ..Default::default()
        },
        gate: None,
        frame_counter: FrameCounterAccess::from_flag(args.allow_frame_counter.as_deref())?,
    };
    let stop = crate::stop::Stop::install()?;
    let log: linerate_traffic::server::LogSink = Arc::new(|rec: ServerLog| {
        if rec.message.is_empty() {
            return; // a refusal counted, not printed (rate-limited)
        }
        let _ = std::io::stderr()
            .lock()
            .write_all(log_line(&rec).as_bytes());
    });
    let server = Server::bind(cfg, log).context("starting the server")?;
    server.serve(stop.flag()).context("serving")?;
    // Stopped by a signal (the tests under way ended cleanly): 130 or 143, as every command.
    Ok(stop
        .signal()
        .map_or(ExitCode::SUCCESS, crate::stop::exit_code))
}
