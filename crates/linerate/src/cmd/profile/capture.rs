//! One profile taken in the background: a thread opens the sampling events, drains their rings
//! every 100 ms while the caller does its work (a command, a lab run), and at the end resolves
//! the samples into folded stacks and the attribution (CPU, namespace, softirq, subsystem).
//!
//! What must be read while the sampled tasks live is read as their samples arrive: each
//! process's name and maps, and each thread's network namespace (and the names under
//! /run/netns, which a lab removes when its run ends). Symbols are resolved after sampling,
//! so reading them neither delays the sampling nor shows in it.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use linerate_sys::perf::{Event, Sample, Sampler, Target};

use super::attribution::Attribution;
use super::fold::Folded;
use super::kallsyms::Kallsyms;
use super::maps::Processes;

/// How often the rings are drained.
const DRAIN_EVERY: Duration = Duration::from_millis(100);

/// A finished profile.
#[derive(Debug)]
pub struct Captured {
    pub event: Event,
    pub folded: Folded,
    pub attribution: Attribution,
    /// Samples the kernel dropped (a ring was full).
    pub lost: u64,
    /// Kernel text symbols known (0: addresses hidden).
    pub kernel_symbols: usize,
    /// How long the sampling ran.
    pub seconds: f64,
}

/// A profile being taken.
#[derive(Debug)]
pub struct Capture {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<anyhow::Result<Captured>>,
}

/// The CPUs that are online, from `/sys/devices/system/cpu/online` (`0-3,6`).
pub fn online_cpus() -> anyhow::Result<Vec<u32>> {
    let path = "/sys/devices/system/cpu/online";
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {path}"))?;
    parse_cpu_list(text.trim()).with_context(|| format!("{path}: bad CPU list {text:?}"))
}

pub fn parse_cpu_list(s: &str) -> anyhow::Result<Vec<u32>> {
    let mut cpus = Vec::new();
    for part in s.split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => cpus.extend(a.parse::<u32>()?..=b.parse::<u32>()?),
            None => cpus.push(part.parse()?),
        }
    }
    anyhow::ensure!(!cpus.is_empty(), "no CPU listed");
    Ok(cpus)
}

/// Why perf_event_open refused, with what would allow it.
pub fn open_error(err: std::io::Error, target: Target) -> anyhow::Error {
    let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .map(|s| s.trim().to_owned())
        .unwrap_or_else(|_| "unreadable".to_owned());
    let what = match target {
        Target::System => "sampling every CPU".to_owned(),
        Target::Process(p) => format!("sampling process {p} with kernel stacks"),
    };
    use std::io::ErrorKind;
    let esrch = Some(rustix::io::Errno::SRCH.raw_os_error());
    match err.kind() {
        ErrorKind::PermissionDenied => anyhow::anyhow!(
            "perf_event_open refused {what}: permission denied (kernel.perf_event_paranoid \
             is {paranoid}, uid {}). Run as root or with CAP_PERFMON (CAP_SYS_ADMIN before \
             Linux 5.8), or allow it for everyone with `sysctl kernel.perf_event_paranoid=-1` \
             (every CPU) or `=1` (one process); in a container, its seccomp profile must \
             also allow perf_event_open",
            linerate_sys::process::euid()
        ),
        ErrorKind::Unsupported | ErrorKind::NotFound => anyhow::anyhow!(
            "perf_event_open is not available here ({err}): the kernel lacks \
             CONFIG_PERF_EVENTS, or a seccomp filter blocks the call"
        ),
        _ if err.raw_os_error() == esrch => anyhow::anyhow!("--pid: no such process ({err})"),
        _ => anyhow::anyhow!("perf_event_open failed for {what}: {err}"),
    }
}

/// Network namespaces of the sampled threads, and their names.
#[derive(Debug, Default)]
struct Namespaces {
    /// Thread id → namespace inode (`None`: gone before it was read).
    threads: HashMap<u32, Option<u64>>,
    /// Inode → name under /run/netns (`host` for the initial namespace).
    names: HashMap<u64, String>,
    /// An inode was seen that has no name yet: read /run/netns again.
    rescan: bool,
}

impl Namespaces {
    fn new() -> Namespaces {
        let mut ns = Namespaces::default();
        // The initial namespace, and the one linerate runs in (in a container, the two differ).
        for path in ["/proc/1/ns/net", "/proc/self/ns/net"] {
            if let Ok(md) = std::fs::metadata(path) {
                ns.names
                    .entry(md.ino())
                    .or_insert_with(|| "host".to_owned());
            }
        }
        ns.scan();
        ns
    }

    fn scan(&mut self) {
        self.rescan = false;
        let Ok(dir) = std::fs::read_dir("/run/netns") else {
            return;
        };
        for e in dir.flatten() {
            if let Ok(md) = std::fs::metadata(e.path()) {
                self.names
                    .entry(md.ino())
                    .or_insert_with(|| e.file_name().to_string_lossy().into_owned());
            }
        }
    }

    fn note(&mut self, pid: u32, tid: u32) {
        if pid == 0 || self.threads.contains_key(&tid) {
            return;
        }
        let ino = std::fs::metadata(format!("/proc/{pid}/task/{tid}/ns/net"))
            .or_else(|_| std::fs::metadata(format!("/proc/{pid}/ns/net")))
            .ok()
            .map(|md| md.ino());
        if ino.is_some_and(|i| !self.names.contains_key(&i)) {
            self.rescan = true;
        }
        self.threads.insert(tid, ino);
    }

    fn name(&self, tid: u32) -> Option<String> {
        let ino = (*self.threads.get(&tid)?)?;
        Some(
            self.names
                .get(&ino)
                .cloned()
                .unwrap_or_else(|| format!("netns:[{ino}]")),
        )
    }
}

/// Turns a sample's addresses into frame names, innermost first, with the process name as
/// the root frame.
fn frames(s: &Sample, ksyms: &Kallsyms, procs: &mut Processes) -> Vec<String> {
    let mut out: Vec<String> = s
        .chain
        .iter()
        .map(|&(addr, kernel)| {
            if kernel {
                ksyms
                    .lookup(addr)
                    .map_or_else(|| "[kernel]".to_owned(), str::to_owned)
            } else {
                procs.user_frame(s.pid, addr)
            }
        })
        .collect();
    out.push(procs.comm(s.pid));
    out
}

impl Capture {
    /// Opens the sampling events (failing with the reason and what would allow it) and starts
    /// sampling `target` on `cpus` at `frequency` Hz per CPU.
    pub fn start(target: Target, cpus: &[u32], frequency: u64) -> anyhow::Result<Capture> {
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let cpus = cpus.to_vec();
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("profile".to_owned())
            .spawn(move || -> anyhow::Result<Captured> {
                let opened = Sampler::open(target, &cpus, frequency, true)
                    .map_err(|e| open_error(e, target))
                    .and_then(|s| {
                        s.enable().context("starting the sampling")?;
                        Ok(s)
                    });
                let mut sampler = match opened {
                    Ok(s) => {
                        let _ = tx.send(Ok(s.event()));
                        s
                    }
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        anyhow::bail!("sampling did not start");
                    }
                };
                sample(&mut sampler, &flag)
            })
            .context("starting the sampling thread")?;
        match rx.recv() {
            Ok(Ok(_event)) => Ok(Capture { stop, thread }),
            Ok(Err(e)) => {
                let _ = thread.join();
                Err(e)
            }
            Err(_) => match thread.join() {
                Ok(Err(e)) => Err(e),
                _ => anyhow::bail!("the sampling thread ended before it started"),
            },
        }
    }

    /// Stops sampling and resolves what was sampled.
    pub fn finish(self) -> anyhow::Result<Captured> {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.thread().unpark();
        self.thread
            .join()
            .map_err(|_| anyhow::anyhow!("the sampling thread panicked"))?
    }
}

/// The sampling thread's loop, then the resolution of its samples.
fn sample(sampler: &mut Sampler, stop: &AtomicBool) -> anyhow::Result<Captured> {
    let started = Instant::now();
    let mut procs = Processes::default();
    let mut namespaces = Namespaces::new();
    let mut raw: Vec<Sample> = Vec::new();
    let mut lost = 0;
    let mut take = |sampler: &mut Sampler, procs: &mut Processes, ns: &mut Namespaces| {
        let st = sampler.drain(|s| {
            procs.note(s.pid);
            ns.note(s.pid, s.tid);
            raw.push(s);
        });
        if ns.rescan {
            ns.scan();
        }
        st.lost
    };
    while !stop.load(Ordering::Relaxed) {
        std::thread::park_timeout(DRAIN_EVERY);
        lost += take(sampler, &mut procs, &mut namespaces);
    }
    sampler.disable().context("stopping the sampling")?;
    let seconds = started.elapsed().as_secs_f64();
    lost += take(sampler, &mut procs, &mut namespaces);
    let ksyms = Kallsyms::load();
    let mut folded = Folded::default();
    let mut attribution = Attribution::default();
    for s in &raw {
        let f = frames(s, &ksyms, &mut procs);
        attribution.add(s.cpu, s.pid == 0, namespaces.name(s.tid).as_deref(), &f);
        folded.add(&f);
    }
    Ok(Captured {
        event: sampler.event(),
        folded,
        attribution,
        lost,
        kernel_symbols: ksyms.len(),
        seconds,
    })
}
