//! linerate's userspace link emulator: a process in a middle namespace that bridges two veths
//! through packet sockets, one thread per direction, each with its own [`shaper::Shaper`].
//! It writes its counters to a JSON file twice a second and exits when its interfaces vanish.

pub mod port;
pub mod rng;
pub mod shaper;

use std::io::Write;
use std::os::fd::AsFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::{Duration, Instant};

use crate::LabError;
use crate::impair::Impairment;
use crate::netns::Netns;
use linerate_sys::signal::{self, STOP_SIGNALS};

/// Schema tag of the counters file.
pub const STATS_SCHEMA: &str = "linerate.lab-emulator/1";

/// Timer slack of the emulator's threads: frames are released on a nanosecond schedule, and
/// the default 50 µs would let the kernel wake the forwarders late to batch wake-ups.
const TIMER_SLACK: Duration = Duration::from_micros(1);

/// What one emulator process does.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct EmulatorConfig {
    /// The lab.
    pub lab: String,
    /// The link (`l0`).
    pub link: String,
    /// The middle namespace.
    pub netns: String,
    /// Interface toward gen.
    pub iface_a: String,
    /// Interface toward recv.
    pub iface_b: String,
    /// a → b.
    pub fwd: Impairment,
    /// b → a.
    pub rev: Impairment,
    /// Where to write counters.
    pub stats_file: Option<PathBuf>,
    /// Seed of the loss/jitter generator.
    pub seed: u64,
}

/// Counters of one direction, as written to the stats file.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct DirStats {
    /// Frames received.
    pub rx_frames: u64,
    /// Bytes received.
    pub rx_bytes: u64,
    /// Frames sent.
    pub tx_frames: u64,
    /// Bytes sent.
    pub tx_bytes: u64,
    /// Dropped by the loss model.
    pub lost: u64,
    /// Dropped at the queue limit.
    pub overflow: u64,
    /// Refused by the kernel or too long.
    pub errors: u64,
    /// Most frames held at once.
    pub max_held: u64,
    /// Dropped by the kernel before the emulator read them (receive buffer full).
    #[serde(default)]
    pub kernel_drops: u64,
}

/// The counters file.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct EmulatorStats {
    /// Always [`STATS_SCHEMA`].
    pub schema: String,
    /// The link.
    pub link: String,
    /// The emulator's pid.
    pub pid: u32,
    /// Seconds since it started.
    pub uptime_s: f64,
    /// Toward recv.
    pub fwd: DirStats,
    /// Toward gen.
    pub rev: DirStats,
}

fn snapshot(c: &port::Counters) -> DirStats {
    DirStats {
        rx_frames: c.rx_frames.load(Relaxed),
        rx_bytes: c.rx_bytes.load(Relaxed),
        tx_frames: c.tx_frames.load(Relaxed),
        tx_bytes: c.tx_bytes.load(Relaxed),
        lost: c.lost.load(Relaxed),
        overflow: c.overflow.load(Relaxed),
        errors: c.errors.load(Relaxed),
        max_held: c.max_held.load(Relaxed),
        kernel_drops: c.kernel_drops.load(Relaxed),
    }
}

/// Writes the counters for `lab show`, whole or not at all. Best effort: a failed write is
/// retried with fresher counters half a second later.
fn write_stats(path: &std::path::Path, stats: &EmulatorStats) {
    if let Ok(bytes) = serde_json::to_vec_pretty(stats) {
        let _ = linerate_sys::atomic_write(path, &bytes);
    }
}

/// Runs the emulator until its interfaces vanish or it is killed. Writes `ready` followed by
/// a newline to `ready` once both ports are open.
pub fn run(cfg: &EmulatorConfig, mut ready: impl Write) -> Result<(), LabError> {
    // `lab up` blocks stop signals while it builds; this process must die on them.
    let _ = signal::unblock(&STOP_SIGNALS);
    let _ = linerate_sys::thread::set_timer_slack(TIMER_SLACK);
    let err = |reason: String| LabError::Emulator {
        link: cfg.link.clone(),
        reason,
    };
    let ns = Netns::open(&cfg.netns)?;
    ns.enter()?;
    let a = port::open(&cfg.iface_a)
        .map_err(|e| err(format!("open packet socket on {}: {e}", cfg.iface_a)))?;
    let b = port::open(&cfg.iface_b)
        .map_err(|e| err(format!("open packet socket on {}: {e}", cfg.iface_b)))?;
    let mut fwd = shaper::Shaper::new(&cfg.fwd, cfg.seed);
    let mut rev = shaper::Shaper::new(&cfg.rev, cfg.seed ^ 0xA5A5_5A5A_0F0F_F0F0);
    let (cf, cr) = (port::Counters::default(), port::Counters::default());
    let stop = AtomicBool::new(false);
    let started = Instant::now();
    writeln!(ready, "ready")
        .and_then(|()| ready.flush())
        .map_err(|e| err(format!("report readiness: {e}")))?;
    drop(ready);
    let stats = || EmulatorStats {
        schema: STATS_SCHEMA.to_owned(),
        link: cfg.link.clone(),
        pid: std::process::id(),
        uptime_s: started.elapsed().as_secs_f64(),
        fwd: snapshot(&cf),
        rev: snapshot(&cr),
    };
    let result = std::thread::scope(|s| {
        let (a, b) = (a.as_fd(), b.as_fd());
        let stop = &stop;
        let (cf, cr) = (&cf, &cr);
        let tf = s.spawn(move || {
            let _ = linerate_sys::thread::set_timer_slack(TIMER_SLACK);
            let r = port::forward(a, b, &mut fwd, &cfg.fwd, cf, stop);
            stop.store(true, Relaxed);
            r
        });
        let tr = s.spawn(move || {
            let _ = linerate_sys::thread::set_timer_slack(TIMER_SLACK);
            let r = port::forward(b, a, &mut rev, &cfg.rev, cr, stop);
            stop.store(true, Relaxed);
            r
        });
        let mut last_write = Instant::now();
        while !stop.load(Relaxed) {
            std::thread::sleep(Duration::from_millis(50));
            if let Some(p) = &cfg.stats_file
                && last_write.elapsed() >= Duration::from_millis(500)
            {
                write_stats(p, &stats());
                last_write = Instant::now();
            }
        }
        let rf = tf
            .join()
            .unwrap_or_else(|_| Err(std::io::Error::other("forward thread panicked")));
        let rr = tr
            .join()
            .unwrap_or_else(|_| Err(std::io::Error::other("reverse thread panicked")));
        rf.and(rr)
    });
    if let Some(p) = &cfg.stats_file {
        write_stats(p, &stats());
    }
    result.map_err(|e| err(format!("stopped: {e}")))
}

/// Reads an emulator's counters file.
pub fn read_stats(path: &std::path::Path) -> Option<EmulatorStats> {
    let bytes = std::fs::read(path).ok()?;
    serde_json::from_slice(&bytes).ok()
}
