//! One trial on a `router` lab: `linerate gen --receive` is started on `recv`'s interface (in
//! `recv`'s namespace) and waited for until its packet socket is open, then `linerate gen`
//! offers the load from `gen` to the DUT's MAC for the trial's duration; after a short drain the
//! receiver is stopped (SIGINT: it prints what it counted). Both print JSON (`linerate.gen/1`,
//! `linerate.gen-receive/1`); a trial is the frames sent against the distinct signed frames
//! received, with the receiver's one-way latency percentiles.
//!
//! The generator's ceiling is measured the same way into a sink: the DUT with forwarding off
//! (`net.ipv4.ip_forward = 0` in its namespace for the measurement, restored afterwards, also on
//! failure and, after a kill, at the lab's next use: [`super::forwarding`]), counted at the
//! DUT's ingress interface.

use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::forwarding::{self, ForwardingOff, Restored};
use crate::child::wait_bounded;
use crate::netns::Netns;
use crate::state::{LabState, StateDir};
use crate::topology::Topology;
use crate::{LabError, control};

/// Time left for frames in flight to arrive before the receiver is stopped.
const DRAIN: Duration = Duration::from_millis(250);

/// Where a trial's frames go: the lab's nodes, interfaces and addresses.
#[derive(Debug, Clone)]
pub struct LabPath {
    /// The `linerate` binary run in the nodes.
    pub binary: PathBuf,
    /// `gen`'s namespace and interface (toward the DUT).
    pub gen_netns: String,
    /// `gen`'s interface.
    pub gen_dev: String,
    /// `gen`'s address.
    pub src_ip: Ipv4Addr,
    /// The DUT's interface toward `gen`, and its MAC (the frames' destination).
    pub dut_netns: String,
    /// The DUT's ingress interface.
    pub dut_dev: String,
    /// Its MAC.
    pub dut_mac: String,
    /// `recv`'s namespace, interface and address (the frames' IP destination).
    pub recv_netns: String,
    /// `recv`'s interface.
    pub recv_dev: String,
    /// `recv`'s address.
    pub dst_ip: Ipv4Addr,
    /// Sending threads of the generator.
    pub threads: u16,
    /// The marker that holds the DUT's `ip_forward` while the ceiling is measured
    /// ([`forwarding`]).
    pub forwarding_marker: PathBuf,
    /// What resolving the path repaired: `ip_forward` put back in the DUT after an
    /// interrupted ceiling measurement (for the caller to say so).
    pub restored: Option<Restored>,
}

fn node<'a>(lab: &'a LabState, name: &str) -> Result<&'a crate::state::NodeState, LabError> {
    lab.nodes
        .iter()
        .find(|n| n.name == name)
        .ok_or_else(|| LabError::NoSuchNode {
            lab: lab.name.clone(),
            node: name.to_owned(),
            nodes: lab
                .nodes
                .iter()
                .map(|n| n.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        })
}

fn address(a: &str, what: &str) -> Result<Ipv4Addr, LabError> {
    a.split('/')
        .next()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| LabError::Io {
            what: format!("{what}: {a:?} is not an IPv4 address"),
            source: std::io::Error::from(std::io::ErrorKind::InvalidData),
        })
}

impl LabPath {
    /// The path through a `router` lab (gen → dut → recv); other topologies are refused.
    /// Like [`LabPath::through`], it first repairs what an interrupted run left.
    pub fn of(
        dir: &StateDir,
        lab: &LabState,
        binary: PathBuf,
        threads: u16,
    ) -> Result<LabPath, LabError> {
        if lab.topology != Topology::Router {
            return Err(LabError::Io {
                what: format!(
                    "lab {} is a {} lab: RFC 2544 throughput needs a device under test, a router \
                     lab (linerate lab up {} --topology router)",
                    lab.name, lab.topology, lab.name
                ),
                source: std::io::Error::from(std::io::ErrorKind::Unsupported),
            });
        }
        LabPath::through(dir, lab, binary, threads)
    }

    /// The path from `gen` to `recv` of any lab without a tunnel: through the DUT in a router
    /// lab (frames to the DUT's MAC), straight to `recv` in a pair (then the "DUT" fields name
    /// `recv`). `dir` holds the lab's state: a marker there left by a ceiling measurement that
    /// was killed has its `ip_forward` written back to the DUT (and is removed) before the path
    /// is used for traffic; [`LabPath::restored`] says so.
    pub fn through(
        dir: &StateDir,
        lab: &LabState,
        binary: PathBuf,
        threads: u16,
    ) -> Result<LabPath, LabError> {
        if lab.tunnel.is_some() {
            return Err(LabError::Io {
                what: format!(
                    "lab {} has a tunnel: the frame generator sends plain Ethernet frames to the \
                     next hop, not into the tunnel (use generator = \"socket\" for a tunnel's \
                     packet rate)",
                    lab.name
                ),
                source: std::io::Error::from(std::io::ErrorKind::Unsupported),
            });
        }
        let g = node(lab, "gen")?;
        let r = node(lab, "recv")?;
        let hop = if lab.topology == Topology::Router {
            node(lab, "dut")?
        } else {
            r
        };
        let gi = g.interfaces.first();
        let ri = r.interfaces.first();
        let hi = gi.and_then(|gi| hop.interfaces.iter().find(|i| i.link == gi.link));
        let (Some(gi), Some(hi), Some(ri)) = (gi, hi, ri) else {
            return Err(LabError::Io {
                what: format!("lab {}: its state names no gen–recv path", lab.name),
                source: std::io::Error::from(std::io::ErrorKind::InvalidData),
            });
        };
        let mut path = LabPath {
            binary,
            gen_netns: control::node_netns(lab, "gen")?.to_owned(),
            gen_dev: gi.name.clone(),
            src_ip: address(&gi.address, "gen's address")?,
            dut_netns: control::node_netns(lab, &hop.name)?.to_owned(),
            dut_dev: hi.name.clone(),
            dut_mac: hi.mac.clone(),
            recv_netns: control::node_netns(lab, "recv")?.to_owned(),
            recv_dev: ri.name.clone(),
            dst_ip: address(&ri.address, "recv's address")?,
            threads,
            forwarding_marker: forwarding::marker_path(dir, &lab.name),
            restored: None,
        };
        path.restored = forwarding::restore_interrupted(&path)?;
        Ok(path)
    }
}

/// One-way latency percentiles of a trial, microseconds.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Latency {
    /// Smallest.
    pub min: f64,
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Largest.
    pub max: f64,
}

/// What one trial counted.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Counted {
    /// Frames the generator sent.
    pub sent: u64,
    /// The generator's own time, seconds.
    pub seconds: f64,
    /// Distinct signed frames the receiver counted.
    pub received: u64,
    /// Frames the receive ring dropped (the counter's loss, not the DUT's).
    pub ring_drops: u64,
    /// One-way latency, when frames arrived.
    pub latency: Option<Latency>,
}

/// Where the counter listens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counter {
    /// `recv`'s interface: what the DUT forwarded.
    Recv,
    /// The DUT's ingress interface (the sink measurement).
    DutIngress,
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> LabError {
    LabError::io(what.into())
}

/// Lines of the namespace's `/proc/net/packet` (one header plus one per packet socket).
fn packet_sockets(pid: Option<u32>) -> usize {
    let path = match pid {
        Some(p) => format!("/proc/{p}/net/packet"),
        // The calling thread's namespace (/proc/self would be the main thread's).
        None => "/proc/thread-self/net/packet".to_owned(),
    };
    std::fs::read_to_string(path).map_or(0, |t| t.lines().count())
}

/// Spawns `cmd` from a thread where the stop signals are not blocked, so the child (which
/// inherits the mask) can be stopped with SIGINT even when the caller blocks them, as the
/// experiment runner does.
fn spawn_with_stop_signals(mut cmd: Command) -> std::io::Result<Child> {
    std::thread::scope(|s| {
        s.spawn(move || {
            linerate_sys::signal::unblock(&linerate_sys::signal::STOP_SIGNALS)?;
            cmd.spawn()
        })
        .join()
        .unwrap_or_else(|_| Err(std::io::Error::other("spawning thread panicked")))
    })
}

/// `program` in namespace `ns` through `ip netns exec`, which also mounts the namespace's own
/// /sys (where `linerate gen` reads the interface's MAC and counters); the process keeps its
/// pid (ip execs the program).
fn in_netns(ns: &str, program: &std::path::Path) -> Command {
    let mut cmd = Command::new("ip");
    cmd.args(["netns", "exec", ns]).arg(program);
    cmd
}

/// Runs one trial: `frame` as `linerate gen --frame` takes it, `pps` frames/s (`None`: as fast
/// as the generator goes), for `secs` seconds.
pub fn run(
    path: &LabPath,
    frame: &str,
    pps: Option<f64>,
    secs: f64,
    counter: Counter,
    interrupted: &dyn Fn() -> bool,
) -> Result<Counted, LabError> {
    let (count_ns, count_dev) = match counter {
        Counter::Recv => (&path.recv_netns, &path.recv_dev),
        Counter::DutIngress => (&path.dut_netns, &path.dut_dev),
    };
    let count_ns_name = count_ns.as_str();
    let count_ns = Netns::open(count_ns)?;
    let limit = secs + 60.0;
    let before = count_ns.run(|| Ok(packet_sockets(None)))?;
    let mut receiver = {
        let mut cmd = in_netns(count_ns_name, &path.binary);
        cmd.args(["gen", "--receive", "--json", "--dev", count_dev])
            .args(["-t", &format!("{limit:.0}s")])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        spawn_with_stop_signals(cmd)
            .map_err(io(format!("start {} gen --receive", path.binary.display())))?
    };
    let result = (|| {
        // Wait (bounded) until the receiver's packet socket is open in its namespace.
        let started = Instant::now();
        // The child is `ip` until it has entered the namespace and exec'd linerate: count
        // sockets only once it is in the counter's namespace.
        let target = crate::netns::identity(count_ns_name).map(|(_, ino)| ino);
        let ready = |pid: u32| {
            let inside = std::fs::metadata(format!("/proc/{pid}/ns/net"))
                .ok()
                .map(|m| std::os::unix::fs::MetadataExt::ino(&m));
            target.is_some() && inside == target && packet_sockets(Some(pid)) > before
        };
        while !ready(receiver.id()) {
            if let Some(status) = receiver.try_wait().map_err(io("wait for gen --receive"))? {
                return Err(LabError::Io {
                    what: format!("gen --receive ended before counting ({status})"),
                    source: std::io::Error::other("receiver failed"),
                });
            }
            if started.elapsed() > Duration::from_secs(20) || interrupted() {
                return Err(LabError::Io {
                    what: "gen --receive opened no packet socket in 20 s".into(),
                    source: std::io::Error::from(std::io::ErrorKind::TimedOut),
                });
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        // The ring is mapped and bound right after the socket is made.
        std::thread::sleep(Duration::from_millis(100));
        let rate = pps.map_or("max".to_owned(), |p| format!("{:.0}pps", p.max(1.0)));
        let mut sender = {
            in_netns(&path.gen_netns, &path.binary)
                .args(["gen", "--json", "--dev", &path.gen_dev])
                .args(["--src-ip", &path.src_ip.to_string()])
                .args(["--dst-ip", &path.dst_ip.to_string()])
                .args([
                    "--dst-mac",
                    &path.dut_mac,
                    "--frame",
                    frame,
                    "--rate",
                    &rate,
                ])
                .args(["--threads", &path.threads.to_string()])
                .args(["-t", &format!("{secs}s")])
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .map_err(io(format!("start {} gen", path.binary.display())))?
        };
        let sent = finish(
            &mut sender,
            Duration::from_secs_f64(secs * 2.0 + 10.0),
            interrupted,
            "gen",
        )?;
        std::thread::sleep(DRAIN);
        Ok(sent)
    })();
    // Stop the receiver whatever happened: it prints what it counted.
    let _ = linerate_sys::process::kill(receiver.id(), linerate_sys::signal::Signal::SIGINT);
    let received = finish(
        &mut receiver,
        Duration::from_secs(10),
        &|| false,
        "gen --receive",
    );
    let sent = result?;
    let received = received?;
    let num = |v: &Value, k: &str| v[k].as_u64().unwrap_or(0);
    let lat = &received["latency_us"];
    let latency = lat.is_object().then(|| {
        let f = |k: &str| lat[k].as_f64().unwrap_or(0.0);
        Latency {
            min: f("min"),
            p50: f("p50"),
            p90: f("p90"),
            p99: f("p99"),
            max: f("max"),
        }
    });
    Ok(Counted {
        sent: num(&sent, "sent_frames"),
        seconds: sent["seconds"].as_f64().unwrap_or(secs),
        received: num(&received, "received_frames"),
        ring_drops: num(&received, "ring_drops"),
        latency,
    })
}

/// Waits (bounded) for a `linerate gen` child and reads its JSON document; exit 130 (stopped
/// by SIGINT after printing) counts as done.
fn finish(
    child: &mut Child,
    limit: Duration,
    interrupted: &dyn Fn() -> bool,
    what: &str,
) -> Result<Value, LabError> {
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        let mut err = Vec::new();
        if let Some(s) = stdout.as_mut() {
            let _ = std::io::Read::read_to_end(s, &mut out);
        }
        if let Some(s) = stderr.as_mut() {
            let _ = std::io::Read::read_to_end(s, &mut err);
        }
        (out, err)
    });
    let status = wait_bounded(child, limit, interrupted)?;
    let (out, err) = reader.join().unwrap_or_default();
    if !status.success() && status.code() != Some(130) {
        return Err(LabError::Io {
            what: format!(
                "linerate {what} failed ({status}): {}",
                String::from_utf8_lossy(&err).trim()
            ),
            source: std::io::Error::other("load generator failed"),
        });
    }
    serde_json::from_slice(&out).map_err(|e| LabError::Io {
        what: format!("linerate {what} printed no JSON document: {e}"),
        source: std::io::Error::from(std::io::ErrorKind::InvalidData),
    })
}

/// A search trial at `load` frames/s: [`run`], with what the load offered. A generator that
/// fell short of the load (under 98 % of its frames sent) did not offer it; on a shared machine
/// that may be a passing stall, so the trial is run once more, and when it falls short again
/// the frames it did not send count as offered (and lost), so a load the generator cannot make
/// is never called forwarded. Returns the last trial, the frames offered, and whether the
/// generator fell short.
pub fn offered(
    path: &LabPath,
    frame: &str,
    load: f64,
    secs: f64,
    interrupted: &dyn Fn() -> bool,
) -> Result<(Counted, u64, bool), LabError> {
    let mut attempts = 0;
    loop {
        let c = run(path, frame, Some(load), secs, Counter::Recv, interrupted)?;
        attempts += 1;
        let intended = (load * c.seconds.max(secs * 0.5)).round() as u64;
        if (c.sent as f64) >= intended as f64 * 0.98 {
            let sent = c.sent;
            return Ok((c, sent, false));
        }
        if attempts >= 2 || interrupted() {
            return Ok((c, intended, true));
        }
    }
}

/// The generator alone: as fast as it goes for `secs` into the DUT with forwarding off,
/// counted at the DUT's ingress. Returns the trial (received/seconds is the ceiling).
pub fn generator_ceiling(
    path: &LabPath,
    frame: &str,
    secs: f64,
    interrupted: &dyn Fn() -> bool,
) -> Result<Counted, LabError> {
    let dut = Netns::open(&path.dut_netns)?;
    let _off = ForwardingOff::new(&dut, &path.forwarding_marker)?;
    run(path, frame, None, secs, Counter::DutIngress, interrupted)
}

/// A few frames through the DUT before measuring, so that its neighbour entry for `recv` is
/// resolved (the first frames would otherwise wait for ARP, or be lost, in a zero-loss trial).
pub fn warm_up(
    path: &LabPath,
    frame: &str,
    interrupted: &dyn Fn() -> bool,
) -> Result<(), LabError> {
    let c = run(path, frame, Some(1000.0), 0.3, Counter::Recv, interrupted)?;
    if c.received == 0 {
        return Err(LabError::Io {
            what: format!(
                "no frame sent from gen ({}) reached recv ({}) through the DUT: is forwarding on \
                 and the path open?",
                path.src_ip, path.dst_ip
            ),
            source: std::io::Error::from(std::io::ErrorKind::NotConnected),
        });
    }
    Ok(())
}
