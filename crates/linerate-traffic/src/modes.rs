//! The linerate-only test modes (`pps`, `rr`, `crr`) and `--affinity`, joined to part 1's
//! machinery at a few points:
//!
//! - their options travel in the extension key ([`ModeOptions`] inside [`Extension`]);
//! - each data stream carries a [`Work`] in its [`StreamSpec`](crate::flow::StreamSpec): the
//!   stream's thread hands it to the mode's worker when it is not plain bulk transfer;
//! - the client turns the run into a [`ModeResult`] ([`result::build`]), which `--json` puts
//!   in the `linerate` object.
//!
//! This module decides (checks, the work of each stream, the server's crr listener); the
//! workers are [`crate::pps`] and [`crate::rr`], the options [`crate::config`].
//!
//! Streams of these modes still count into their counters: bytes, and for datagrams and
//! transactions the `packets`/`lost`/`out_of_order`/`duplicates` counters, so interval
//! sampling, the results exchange and the idle watchdog work unchanged.

pub mod result;

use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;

use crate::config::{ClientConfig, Mode, Protocol, ZeroCopy};
use crate::datagram::{MIN_PAYLOAD, PpsSpec};
use crate::error::TrafficError;
use crate::protocol::{Cookie, Extension, TestParams};

pub use crate::config::{ClientModeOptions, ModeOptions, RrSize};
pub use crate::flow::{Work, WorkKind, WorkReport};
pub use crate::result::ModeResult;

/// Largest request or response of a TCP transaction.
pub const MAX_RR_TCP: u64 = 1024 * 1024;
/// Largest request or response of a UDP transaction (one datagram).
pub const MAX_RR_UDP: u64 = 65_507;

/// Checks the client's mode options before anything is sent.
pub fn check_client(cfg: &ClientConfig) -> Result<(), TrafficError> {
    let bad = |m: String| Err(TrafficError::BadParams(m));
    let o = &cfg.modes.shared;
    let mode = cfg.mode;
    if o.no_gso && mode != Mode::Pps {
        return bad("--no-gso needs --mode pps".to_owned());
    }
    if o.no_gro && mode != Mode::Pps {
        return bad("--no-gro needs --mode pps".to_owned());
    }
    if o.busy_poll_us.is_some() && mode != Mode::Pps {
        return bad("--busy-poll needs --mode pps".to_owned());
    }
    if o.imix && mode != Mode::Pps {
        return bad("--imix needs --mode pps".to_owned());
    }
    if o.zerocopy.is_some_and(|z| z != ZeroCopy::Off)
        && (mode != Mode::Stream || cfg.protocol != Protocol::Tcp)
    {
        return bad("--zerocopy is for TCP streams (--mode stream, without -u)".to_owned());
    }
    if o.rr_size.is_some() && !matches!(mode, Mode::Rr | Mode::Crr) {
        return bad("--rr-size needs --mode rr or crr".to_owned());
    }
    match mode {
        Mode::Stream => Ok(()),
        Mode::Pps => {
            if cfg.protocol != Protocol::Udp {
                return bad("--mode pps sends UDP datagrams; it cannot run over TCP".to_owned());
            }
            match cfg.len {
                Some(l) if !o.imix && l.bytes() < MIN_PAYLOAD as u64 => bad(format!(
                    "-l {} is below the {}-byte minimum of --mode pps (18 bytes of UDP payload \
                     make a 64-byte Ethernet frame)",
                    l.bytes(),
                    MIN_PAYLOAD
                )),
                Some(_) if o.imix => bad("--imix chooses the sizes itself; drop -l".to_owned()),
                _ => Ok(()),
            }
        }
        Mode::Rr | Mode::Crr => {
            if cfg.reverse || cfg.bidir {
                return bad(format!(
                    "--mode {} has no direction: drop -R/--bidir",
                    mode.name()
                ));
            }
            if mode == Mode::Crr && cfg.protocol == Protocol::Udp {
                return bad("--mode crr opens TCP connections; use --mode rr with -u".to_owned());
            }
            rr_size_ok(o.rr_size.unwrap_or_default(), cfg.protocol).map_err(TrafficError::BadParams)
        }
    }
}

fn rr_size_ok(size: RrSize, protocol: Protocol) -> Result<(), String> {
    let max = match protocol {
        Protocol::Tcp => MAX_RR_TCP,
        Protocol::Udp => MAX_RR_UDP,
    };
    for (what, v) in [("request", size.request), ("response", size.response)] {
        if !(1..=max).contains(&v) {
            return Err(format!(
                "--rr-size {size}: the {what} must be 1 to {max} bytes over {}",
                protocol.iperf3_name()
            ));
        }
    }
    Ok(())
}

/// The zero-copy paths of `cfg`'s TCP streams: what `--zerocopy` said, else `Auto` for TCP
/// streams on Linux (send from an in-memory file: no copy into the socket; measured 1.5×
/// the throughput at 0.64× the sender's CPU per GB on loopback, bench/zerocopy-results.md),
/// else `Off`.
pub fn zerocopy(cfg: &ClientConfig) -> ZeroCopy {
    let tcp_stream = cfg.mode == Mode::Stream && cfg.protocol == Protocol::Tcp;
    match cfg.modes.shared.zerocopy {
        Some(z) => z,
        None if tcp_stream && cfg!(target_os = "linux") => ZeroCopy::Auto,
        None => ZeroCopy::Off,
    }
}

/// The extension key the client sends.
pub fn extension(cfg: &ClientConfig) -> Extension {
    let mut e = Extension::new(cfg.mode);
    e.options = cfg.modes.shared.clone();
    // The server's streams follow the client's choice, said explicitly (`off` included).
    if cfg.mode == Mode::Stream && cfg.protocol == Protocol::Tcp {
        e.options.zerocopy = Some(zerocopy(cfg));
    }
    if matches!(cfg.mode, Mode::Rr | Mode::Crr) && e.options.rr_size.is_none() {
        e.options.rr_size = Some(RrSize::default());
    }
    e
}

/// The server's check of a client's mode: `Err` is the refusal sent back.
pub fn check_server(p: &TestParams) -> Result<(), String> {
    let Some(ext) = &p.extension else {
        return Ok(());
    };
    let o = &ext.options;
    if o.zerocopy.is_some_and(|z| z != ZeroCopy::Off)
        && (ext.mode != Mode::Stream || p.protocol != Protocol::Tcp)
    {
        return Err("--zerocopy needs TCP streams".to_owned());
    }
    match ext.mode {
        Mode::Stream => {}
        Mode::Pps => {
            if p.protocol != Protocol::Udp {
                return Err("--mode pps needs UDP".to_owned());
            }
            if !o.imix && p.len < MIN_PAYLOAD as u64 {
                return Err(format!(
                    "--mode pps needs datagrams of at least {} bytes",
                    MIN_PAYLOAD
                ));
            }
        }
        Mode::Rr | Mode::Crr => {
            if p.reverse || p.bidirectional {
                return Err(format!("--mode {} has no direction", ext.mode.name()));
            }
            if ext.mode == Mode::Crr && p.protocol != Protocol::Tcp {
                return Err("--mode crr needs TCP".to_owned());
            }
            rr_size_ok(o.rr_size.unwrap_or_default(), p.protocol)?;
        }
    }
    if let Some(cpus) = &o.server_cpus {
        let allowed = crate::affinity::allowed_cpus();
        if let Some(c) = cpus.0.iter().find(|c| !allowed.contains(c)) {
            return Err(format!(
                "--affinity: CPU {c} is not available on the server (it may use {allowed:?})"
            ));
        }
    }
    Ok(())
}

/// How the server's log names the client and its mode.
pub fn describe(p: &TestParams) -> String {
    match &p.extension {
        None => String::new(),
        Some(e) if e.mode == Mode::Stream => ", linerate client".to_owned(),
        Some(e) => format!(", linerate client, --mode {}", e.mode.name()),
    }
}

/// What the server sets up for a test's mode before the streams (the crr listener).
#[derive(Debug, Default)]
pub struct ServerSide {
    listener: Option<Arc<TcpListener>>,
}

impl ServerSide {
    /// Binds the crr transaction listener on the control connection's local address.
    pub fn prepare(p: &TestParams, local: Option<SocketAddr>) -> Result<ServerSide, TrafficError> {
        let crr = p.extension.as_ref().is_some_and(|e| e.mode == Mode::Crr);
        if !crr {
            return Ok(ServerSide::default());
        }
        let ip = local.map_or(std::net::IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED), |a| {
            a.ip()
        });
        let l = TcpListener::bind(SocketAddr::new(ip, 0)).map_err(|e| {
            TrafficError::socket(format!("binding the crr transaction port on {ip}"), e)
        })?;
        Ok(ServerSide {
            listener: Some(Arc::new(l)),
        })
    }

    /// The crr transaction port, announced in the hello.
    pub fn data_port(&self) -> Option<u16> {
        self.listener
            .as_ref()
            .and_then(|l| l.local_addr().ok())
            .map(|a| a.port())
    }

    /// The work of the server's stream `index`.
    pub fn work(&self, p: &TestParams, cookie: &Cookie, index: usize) -> Work {
        let Some(ext) = &p.extension else {
            return Work::default();
        };
        let o = &ext.options;
        let size = o.rr_size.unwrap_or_default();
        let kind = match ext.mode {
            Mode::Stream => WorkKind::Stream,
            Mode::Pps => WorkKind::Pps(PpsSpec {
                gso: !o.no_gso,
                gro: !o.no_gro,
                busy_poll_us: o.busy_poll_us.unwrap_or(0),
                ..PpsSpec::new(p.len as usize, o.imix, cookie)
            }),
            Mode::Rr => WorkKind::Rr(size),
            Mode::Crr => match &self.listener {
                Some(l) => WorkKind::CrrServer {
                    listener: Arc::clone(l),
                    size,
                },
                None => WorkKind::Stream,
            },
        };
        Work {
            kind,
            cpu: o.server_cpus.as_ref().and_then(|c| c.for_worker(index)),
            zerocopy: o.zerocopy.unwrap_or_default(),
            report: Arc::default(),
        }
    }
}

/// The work of the client's stream `index`; `crr_port` comes from the server's hello.
pub fn client_work(
    cfg: &ClientConfig,
    p: &TestParams,
    cookie: &Cookie,
    index: usize,
    server: SocketAddr,
    crr_port: Option<u16>,
) -> Result<Work, TrafficError> {
    let o = &cfg.modes.shared;
    let size = o.rr_size.unwrap_or_default();
    let kind = match cfg.mode {
        Mode::Stream => WorkKind::Stream,
        Mode::Pps => WorkKind::Pps(PpsSpec {
            gso: !o.no_gso,
            gro: !o.no_gro,
            busy_poll_us: o.busy_poll_us.unwrap_or(0),
            ..PpsSpec::new(p.len as usize, o.imix, cookie)
        }),
        Mode::Rr => WorkKind::Rr(size),
        Mode::Crr => {
            let port = crr_port.ok_or_else(|| {
                TrafficError::BadJson("the server's hello names no crr transaction port".into())
            })?;
            WorkKind::CrrClient {
                addr: SocketAddr::new(server.ip(), port),
                size,
            }
        }
    };
    Ok(Work {
        kind,
        cpu: cfg
            .modes
            .client_cpus
            .as_ref()
            .and_then(|c| c.for_worker(index)),
        zerocopy: zerocopy(cfg),
        report: Arc::default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::affinity::CpuList;
    use linerate_units::ByteSize;

    #[test]
    fn rr_sizes_parse_with_units_and_reject_nonsense() {
        let s: RrSize = "1/1".parse().unwrap();
        assert_eq!((s.request, s.response), (1, 1));
        let s: RrSize = "64/1KiB".parse().unwrap();
        assert_eq!((s.request, s.response), (64, 1024));
        assert!("64".parse::<RrSize>().unwrap_err().contains("REQ/RESP"));
        assert!("0/1".parse::<RrSize>().unwrap_err().contains("at least 1"));
        assert!("x/1".parse::<RrSize>().unwrap_err().contains("\"x\""));
        assert!(rr_size_ok("1/70000".parse().unwrap(), Protocol::Udp).is_err());
        assert!(rr_size_ok("1/70000".parse().unwrap(), Protocol::Tcp).is_ok());
    }

    #[test]
    fn options_round_trip_in_the_extension_and_stay_out_when_default() {
        let mut e = Extension::new(Mode::Rr);
        assert!(serde_json::to_value(&e).unwrap().get("options").is_none());
        e.options.rr_size = Some("3/5".parse().unwrap());
        e.options.server_cpus = Some(CpuList(vec![1]));
        let v = serde_json::to_value(&e).unwrap();
        assert_eq!(v["options"]["rr_size"]["response"], 5);
        assert_eq!(Extension::from_json(&v).unwrap(), e);
    }

    #[test]
    fn client_checks_name_the_flag() {
        let mut cfg = ClientConfig {
            mode: Mode::Pps,
            ..ClientConfig::default()
        };
        let msg = check_client(&cfg).unwrap_err().to_string();
        assert!(msg.contains("UDP"), "{msg}");
        cfg.protocol = Protocol::Udp;
        cfg.len = Some(ByteSize::from_bytes(12));
        let msg = check_client(&cfg).unwrap_err().to_string();
        assert!(msg.contains("-l 12"), "{msg}");
        cfg.len = None;
        assert!(check_client(&cfg).is_ok());
        cfg.mode = Mode::Crr;
        assert!(check_client(&cfg).unwrap_err().to_string().contains("-u"));
        cfg.protocol = Protocol::Tcp;
        cfg.reverse = true;
        assert!(check_client(&cfg).unwrap_err().to_string().contains("-R"));
    }
}
