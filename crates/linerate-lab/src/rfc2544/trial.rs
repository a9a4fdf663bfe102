//! One trial on a lab: `linerate gen --receive` is started on the counting interface (in its
//! namespace) and waited for until its packet socket is open, then `linerate gen` offers the
//! load from `gen` to the next hop's MAC for the trial's duration; after a short drain the
//! receiver is stopped (SIGINT: it prints what it counted). Both print JSON documents typed by
//! `linerate_traffic::generator::document` (`linerate.gen/1`, `linerate.gen-receive/1`), read
//! back as those types: a field missing or of the wrong type is an error naming it. A trial is
//! the frames sent against the distinct signed frames received, with the receiver's one-way
//! latency percentiles.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use linerate_store::rfc2544::Latency;
use linerate_traffic::generator::document::{self, Received, Sent};

use super::bed::Counted;
use super::path::LabPath;
use crate::LabError;
use crate::child::wait_bounded;
use crate::netns::Netns;

/// Time left for frames in flight to arrive before the receiver is stopped.
const DRAIN: Duration = Duration::from_millis(250);

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
    let sent: Sent = read("linerate gen", &result?)?;
    let received: Received = read("linerate gen --receive", &received?)?;
    Ok(counted(&sent, &received))
}

/// A trial from the two documents.
fn counted(sent: &Sent, received: &Received) -> Counted {
    Counted {
        sent: sent.sent_frames,
        seconds: sent.seconds,
        received: received.received_frames,
        ring_drops: received.ring_drops,
        latency: received.latency_us.map(|l| Latency {
            min: l.min,
            p50: l.p50,
            p90: l.p90,
            p99: l.p99,
            max: l.max,
        }),
    }
}

/// Reads `program`'s JSON output as its document type; an error names the field that is
/// missing or of the wrong type.
fn read<T: DocumentType>(program: &str, out: &[u8]) -> Result<T, LabError> {
    if out.iter().all(u8::is_ascii_whitespace) {
        return Err(LabError::Io {
            what: format!("{program} printed no JSON document"),
            source: std::io::Error::from(std::io::ErrorKind::InvalidData),
        });
    }
    document::read(out).map_err(|source| LabError::Document {
        program: program.to_owned(),
        schema: T::SCHEMA,
        source,
    })
}

/// A document `linerate gen` prints, with its schema's name.
trait DocumentType: serde::de::DeserializeOwned {
    const SCHEMA: &'static str;
}

impl DocumentType for Sent {
    const SCHEMA: &'static str = document::SentSchema::TEXT;
}

impl DocumentType for Received {
    const SCHEMA: &'static str = document::ReceivedSchema::TEXT;
}

/// Waits (bounded) for a `linerate gen` child and takes what it printed; exit 130 (stopped by
/// SIGINT after printing) counts as done.
fn finish(
    child: &mut Child,
    limit: Duration,
    interrupted: &dyn Fn() -> bool,
    what: &str,
) -> Result<Vec<u8>, LabError> {
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
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use linerate_traffic::generator::document::{
        EngineUsed, IfCounters, ReceivedSchema, SentSchema, ThreadSent,
    };

    fn sent() -> Sent {
        Sent {
            schema: SentSchema,
            dev: "lr-x-gen0".into(),
            sent_frames: 20_000,
            sent_bytes: 1_280_000,
            seconds: 2.0,
            sent_pps: 10_000.0,
            sent_l2_bps: 5_120_000.0,
            engine: EngineUsed::Packet,
            engine_detail: "AF_PACKET".into(),
            engine_fallback: None,
            threads: vec![ThreadSent {
                thread: 0,
                sent_frames: 20_000,
                sent_bytes: 1_280_000,
                seconds: 2.0,
                sent_pps: 10_000.0,
                wrong_format: 0,
                pinned: true,
                cpu: Some(1),
                queue: None,
            }],
        }
    }

    fn received() -> Received {
        Received {
            schema: ReceivedSchema,
            dev: "lr-x-recv0".into(),
            seconds: 3.0,
            active_seconds: 2.0,
            received_frames: 19_990,
            received_bytes: 1_279_360,
            received_pps: 9995.0,
            received_l2_bps: 5_117_440.0,
            lost_frames: 10,
            loss_ratio: 0.0005,
            duplicate_frames: 0,
            reordered_frames: 0,
            streams: 1,
            other_frames: 0,
            latency_us: Some(document::Latency {
                min: 3.0,
                p50: 8.0,
                p90: 11.0,
                p99: 30.0,
                p999: 50.0,
                max: 60.0,
                mean: 9.0,
            }),
            clock_skew_frames: 0,
            ring_drops: 2,
            interface: IfCounters::default(),
        }
    }

    #[test]
    fn a_trial_is_what_the_two_documents_say() {
        let s = serde_json::to_vec(&sent()).expect("json");
        let r = serde_json::to_vec(&received()).expect("json");
        let c = counted(
            &read::<Sent>("linerate gen", &s).expect("sent"),
            &read::<Received>("linerate gen --receive", &r).expect("received"),
        );
        assert_eq!((c.sent, c.received, c.ring_drops), (20_000, 19_990, 2));
        assert_eq!(c.seconds, 2.0);
        assert_eq!(c.latency.map(|l| l.p50), Some(8.0));
    }

    #[test]
    fn a_renamed_field_in_the_generator_s_document_fails_the_trial_naming_it() {
        // What a generator whose output type renamed `sent_frames` prints: the lab's reading
        // fails and says which field, instead of counting 0 frames sent.
        let text = serde_json::to_string(&sent()).expect("json").replacen(
            "\"sent_frames\"",
            "\"frames_sent\"",
            1,
        );
        let err = read::<Sent>("linerate gen", text.as_bytes())
            .expect_err("a renamed field")
            .to_string();
        assert!(err.contains("`sent_frames`"), "{err}");
        assert!(err.contains("linerate.gen/1"), "{err}");
        // The receiver's, likewise, for a field of the wrong type.
        let text = serde_json::to_string(&received())
            .expect("json")
            .replace("\"received_frames\":19990", "\"received_frames\":\"19990\"");
        let err = read::<Received>("linerate gen --receive", text.as_bytes())
            .expect_err("a string")
            .to_string();
        assert!(err.contains("`received_frames`"), "{err}");
        // Nothing printed is said so.
        let err = read::<Sent>("linerate gen", b"")
            .expect_err("empty")
            .to_string();
        assert!(err.contains("printed no JSON document"), "{err}");
    }
}
