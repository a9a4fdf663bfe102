//! One profile taken in the background: a thread opens the sampling events, drains their rings
//! every 100 ms while the caller does its work (a command, a lab run), and at the end resolves
//! the samples into folded stacks and the attribution (CPU, namespace, softirq, subsystem).
//!
//! What must be read while the sampled tasks live is read as their samples arrive: each
//! process's name and maps, and each thread's network namespace (and the names under
//! /run/netns, which a lab removes when its run ends). Symbols are resolved after sampling,
//! so reading them neither delays the sampling nor shows in it.

mod namespaces;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use linerate_sys::perf::{Event, Sample, Sampler, Target};

use crate::attribution::Attribution;
use crate::error::ProfileError;
use crate::fold::Folded;
use crate::kallsyms::Kallsyms;
use crate::maps::Processes;
use namespaces::Namespaces;

/// How often the rings are drained.
const DRAIN_EVERY: Duration = Duration::from_millis(100);

/// A finished profile.
#[derive(Debug)]
pub struct Captured {
    /// The event that triggered the samples (`cycles`, or `cpu-clock` without a PMU).
    pub event: Event,
    /// The samples' stacks, folded.
    pub folded: Folded,
    /// The samples counted per CPU, context and subsystem.
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
    thread: JoinHandle<Result<Captured, ProfileError>>,
}

/// Why perf_event_open refused, with what would allow it.
fn open_error(error: std::io::Error, target: Target) -> ProfileError {
    use std::io::ErrorKind;
    let what = match target {
        Target::System => "sampling every CPU".to_owned(),
        Target::Process(p) => format!("sampling process {p} with kernel stacks"),
    };
    match error.kind() {
        ErrorKind::PermissionDenied => ProfileError::PermissionDenied {
            what,
            paranoid: std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
                .map(|s| s.trim().to_owned())
                .unwrap_or_else(|_| "unreadable".to_owned()),
            euid: linerate_sys::process::euid(),
        },
        ErrorKind::Unsupported | ErrorKind::NotFound => ProfileError::Unavailable { error },
        _ if error.raw_os_error() == Some(libc::ESRCH) => ProfileError::NoSuchProcess { error },
        _ => ProfileError::Open { what, error },
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
    pub fn start(target: Target, cpus: &[u32], frequency: u64) -> Result<Capture, ProfileError> {
        let stop = Arc::new(AtomicBool::new(false));
        let (started, wait_start) = std::sync::mpsc::sync_channel(1);
        let cpus = cpus.to_vec();
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("profile".to_owned())
            .spawn(move || -> Result<Captured, ProfileError> {
                let mut sampler = Sampler::open(target, &cpus, frequency, true)
                    .map_err(|e| open_error(e, target))?;
                sampler.enable().map_err(|source| ProfileError::Sampling {
                    action: "starting the sampling",
                    source,
                })?;
                let _ = started.send(());
                sample(&mut sampler, &flag)
            })
            .map_err(ProfileError::Thread)?;
        match wait_start.recv() {
            Ok(()) => Ok(Capture { stop, thread }),
            // The thread ended without starting: its result says why.
            Err(_) => match thread.join() {
                Ok(Err(e)) => Err(e),
                Ok(Ok(_)) => Err(ProfileError::ThreadEnded),
                Err(_) => Err(ProfileError::ThreadPanicked),
            },
        }
    }

    /// Stops sampling and resolves what was sampled.
    pub fn finish(self) -> Result<Captured, ProfileError> {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.thread().unpark();
        self.thread
            .join()
            .map_err(|_| ProfileError::ThreadPanicked)?
    }
}

/// The sampling thread's loop, then the resolution of its samples.
fn sample(sampler: &mut Sampler, stop: &AtomicBool) -> Result<Captured, ProfileError> {
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
        ns.refresh();
        st.lost
    };
    while !stop.load(Ordering::Relaxed) {
        std::thread::park_timeout(DRAIN_EVERY);
        lost += take(sampler, &mut procs, &mut namespaces);
    }
    sampler.disable().map_err(|source| ProfileError::Sampling {
        action: "stopping the sampling",
        source,
    })?;
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
