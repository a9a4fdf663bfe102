//! Where a side's CPU went over the measured period: the process (`getrusage`, as iperf3's
//! figure), each worker thread (Linux `/proc/self/task/TID/stat`), every CPU of the host
//! and the busiest CPU of each second (`/proc/stat`, FreeBSD `kern.cp_times`). Read once a
//! second, in fixed memory per thread and per CPU.

use std::time::Instant;

use linerate_iperf3::evidence::{CpuEvidence, CpuInterval, CpuShare, ProcessCpu, ThreadCpu};
use linerate_sys::cpu_time::{CpuTicks, ThreadTicks};

use crate::cpu::CpuSnapshot;

/// How one CPU spent the time between two readings; `None` when no tick passed.
pub(crate) fn share(a: &CpuTicks, b: &CpuTicks) -> Option<CpuShare> {
    let total = b.total().saturating_sub(a.total());
    if total == 0 {
        return None;
    }
    let pct = |x: u64| x as f64 * 100.0 / total as f64;
    let d = |x: u64, y: u64| y.saturating_sub(x);
    let opt = |x: Option<u64>, y: Option<u64>| Some(pct(d(x?, y?)));
    let idle = d(a.idle, b.idle) + d(a.iowait.unwrap_or(0), b.iowait.unwrap_or(0));
    Some(CpuShare {
        cpu: b.cpu as u64,
        busy_percent: pct(total.saturating_sub(idle)),
        user_percent: pct(d(a.user, b.user)),
        system_percent: pct(d(a.system, b.system)),
        irq_percent: pct(d(a.irq, b.irq)),
        softirq_percent: opt(a.softirq, b.softirq),
        steal_percent: opt(a.steal, b.steal),
    })
}

/// Every CPU in both readings (matched by number: one may have gone offline between them).
pub(crate) fn shares(a: &[CpuTicks], b: &[CpuTicks]) -> Vec<CpuShare> {
    b.iter()
        .filter_map(|now| {
            let then = a.iter().find(|t| t.cpu == now.cpu)?;
            share(then, now)
        })
        .collect()
}

/// The busiest CPU between two readings.
pub(crate) fn busiest(a: &[CpuTicks], b: &[CpuTicks]) -> Option<CpuShare> {
    shares(a, b)
        .into_iter()
        .max_by(|x, y| x.busy_percent.total_cmp(&y.busy_percent))
}

/// A thread's user and system time between two readings, percent of one core over
/// `seconds`.
pub(crate) fn thread_percent(
    base: ThreadTicks,
    last: ThreadTicks,
    seconds: f64,
    ticks_per_second: f64,
) -> (f64, f64) {
    if seconds <= 0.0 || ticks_per_second <= 0.0 {
        return (0.0, 0.0);
    }
    let pct = |a: u64, b: u64| b.saturating_sub(a) as f64 / ticks_per_second / seconds * 100.0;
    (pct(base.user, last.user), pct(base.system, last.system))
}

/// The busiest CPU per second, in at most `cap` entries: when full, neighbouring entries
/// merge (each then covers twice the seconds and keeps the busier), so a long test keeps its
/// whole span in fixed memory.
#[derive(Debug, Clone)]
pub(crate) struct BusiestSeries {
    cap: usize,
    entries: Vec<CpuInterval>,
    /// Seconds (readings) each entry holds.
    per_entry: usize,
    /// Readings in the last entry.
    fill: usize,
}

fn busier(a: CpuShare, b: CpuShare) -> CpuShare {
    if b.busy_percent > a.busy_percent {
        b
    } else {
        a
    }
}

impl BusiestSeries {
    /// An empty series of at most `cap` (even, ≥ 2) entries.
    pub(crate) fn new(cap: usize) -> BusiestSeries {
        BusiestSeries {
            cap: cap.max(2) & !1,
            entries: Vec::new(),
            per_entry: 1,
            fill: 0,
        }
    }

    /// Adds one reading's busiest CPU over `[start, end)`.
    pub(crate) fn push(&mut self, start: f64, end: f64, share: CpuShare) {
        if self.fill < self.per_entry
            && let Some(last) = self.entries.last_mut()
        {
            last.end = end;
            last.busiest = busier(last.busiest, share);
            self.fill += 1;
            return;
        }
        if self.entries.len() >= self.cap {
            self.entries = self
                .entries
                .chunks(2)
                .filter_map(|pair| {
                    let (a, b) = (pair.first()?, pair.last()?);
                    Some(CpuInterval {
                        start: a.start,
                        end: b.end,
                        busiest: busier(a.busiest, b.busiest),
                    })
                })
                .collect();
            self.per_entry *= 2;
        }
        self.entries.push(CpuInterval {
            start,
            end,
            busiest: share,
        });
        self.fill = 1;
    }

    /// The entries.
    pub(crate) fn into_entries(self) -> Vec<CpuInterval> {
        self.entries
    }
}

/// Where a thread's id comes from.
#[derive(Debug)]
pub(crate) enum ThreadSource {
    /// A stream's thread, which notes its id when it starts.
    Stream(std::sync::Arc<crate::stream::StreamCounters>),
    /// A thread whose id is known (the recorder's own; ids are read on Linux only).
    #[cfg_attr(not(target_os = "linux"), expect(dead_code))]
    Known(u32),
}

impl ThreadSource {
    fn tid(&self) -> u32 {
        match self {
            ThreadSource::Stream(c) => c.thread_id.load(std::sync::atomic::Ordering::Relaxed),
            ThreadSource::Known(t) => *t,
        }
    }
}

/// One thread's readings.
#[derive(Debug)]
pub(crate) struct ThreadAcc {
    /// The thread's name.
    pub(crate) name: String,
    /// The stream it runs.
    pub(crate) stream_id: Option<i64>,
    /// Its id.
    pub(crate) source: ThreadSource,
    /// Where a stream's worker was pinned (read at the end: pinning may have failed).
    work: Option<std::sync::Arc<crate::flow::WorkReport>>,
    base: Option<ThreadTicks>,
    last: Option<ThreadTicks>,
    /// It had not started when the period began: all its time counts.
    from_zero: bool,
}

impl ThreadAcc {
    /// A thread to follow.
    pub(crate) fn new(
        name: String,
        stream_id: Option<i64>,
        source: ThreadSource,
        work: Option<std::sync::Arc<crate::flow::WorkReport>>,
    ) -> ThreadAcc {
        ThreadAcc {
            name,
            stream_id,
            source,
            work,
            base: None,
            last: None,
            from_zero: false,
        }
    }

    fn begin(&mut self) {
        let tid = self.source.tid();
        self.from_zero = tid == 0;
        self.base = read_thread(tid);
        self.last = self.base;
    }

    fn read(&mut self) {
        // An ended thread cannot be read: its last reading stands.
        if let Some(t) = read_thread(self.source.tid()) {
            self.last = Some(t);
        }
    }

    fn evidence(&self, seconds: f64, ticks_per_second: f64) -> Option<ThreadCpu> {
        let last = self.last?;
        let base = match (self.base, self.from_zero) {
            (Some(b), _) => b,
            (None, true) => ThreadTicks::default(),
            // Running at the start but unreadable then: its share cannot be known.
            (None, false) => return None,
        };
        let (user_percent, system_percent) = thread_percent(base, last, seconds, ticks_per_second);
        Some(ThreadCpu {
            name: self.name.clone(),
            stream_id: self.stream_id,
            user_percent,
            system_percent,
            pinned_cpu: self
                .work
                .as_ref()
                .and_then(|w| w.placement.report().pinned)
                .map(|c| c as u64),
            last_cpu: Some(last.cpu as u64),
        })
    }
}

#[cfg(target_os = "linux")]
fn read_thread(tid: u32) -> Option<ThreadTicks> {
    (tid != 0)
        .then(|| linerate_sys::cpu_time::thread(tid).ok())
        .flatten()
}

/// Per-thread CPU times are read from Linux's `/proc` only.
#[cfg(not(target_os = "linux"))]
fn read_thread(_tid: u32) -> Option<ThreadTicks> {
    None
}

#[cfg(target_os = "linux")]
fn ticks_per_second() -> f64 {
    linerate_sys::cpu_time::ticks_per_second() as f64
}

#[cfg(not(target_os = "linux"))]
fn ticks_per_second() -> f64 {
    0.0
}

/// A side's CPU over the period, read once a second.
#[derive(Debug)]
pub(crate) struct CpuAcc {
    started: Instant,
    process: CpuSnapshot,
    cpus: Option<Vec<CpuTicks>>,
    previous: Option<(Instant, Vec<CpuTicks>)>,
    series: BusiestSeries,
    threads: Vec<ThreadAcc>,
}

impl CpuAcc {
    /// Starts the period now: the first reading of everything.
    pub(crate) fn begin(mut threads: Vec<ThreadAcc>) -> CpuAcc {
        let started = Instant::now();
        let cpus = linerate_sys::cpu_time::cpus().ok();
        for t in &mut threads {
            t.begin();
        }
        CpuAcc {
            started,
            process: CpuSnapshot::now(),
            previous: cpus.clone().map(|c| (started, c)),
            cpus,
            series: BusiestSeries::new(CpuEvidence::MAX_INTERVALS),
            threads,
        }
    }

    /// The once-a-second reading.
    pub(crate) fn tick(&mut self) {
        let now = Instant::now();
        if let (Some((then, before)), Ok(cpus)) = (&self.previous, linerate_sys::cpu_time::cpus()) {
            if let Some(top) = busiest(before, &cpus) {
                let at = |t: Instant| t.duration_since(self.started).as_secs_f64();
                self.series.push(at(*then), at(now), top);
            }
            self.previous = Some((now, cpus));
        }
        for t in &mut self.threads {
            t.read();
        }
    }

    /// Ends the period now (a last reading) and gives the evidence.
    pub(crate) fn finish(mut self) -> CpuEvidence {
        // A last partial second shorter than 50 ms holds too few ticks to mean anything:
        // the per-CPU figures then end at the previous reading.
        let stale = self
            .previous
            .as_ref()
            .is_none_or(|(t, _)| t.elapsed().as_secs_f64() >= 0.05);
        if stale {
            self.tick();
        } else {
            for t in &mut self.threads {
                t.read();
            }
        }
        let seconds = self.started.elapsed().as_secs_f64();
        let p = self.process.until(&CpuSnapshot::now());
        let tps = ticks_per_second();
        let cpus = match (&self.cpus, &self.previous) {
            (Some(first), Some((_, last))) => Some(shares(first, last)),
            _ => None,
        };
        CpuEvidence {
            seconds,
            process: ProcessCpu {
                user_percent: p.user,
                system_percent: p.system,
            },
            threads: (tps > 0.0).then(|| {
                self.threads
                    .iter()
                    .filter_map(|t| t.evidence(seconds, tps))
                    .collect()
            }),
            busiest: cpus.is_some().then(|| self.series.into_entries()),
            cpus,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ticks(cpu: usize, user: u64, system: u64, idle: u64, softirq: u64) -> CpuTicks {
        CpuTicks {
            cpu,
            user,
            system,
            idle,
            iowait: Some(0),
            irq: 0,
            softirq: Some(softirq),
            steal: Some(0),
        }
    }

    #[test]
    fn a_cpus_share_is_its_ticks_over_all_its_ticks() {
        let a = ticks(1, 100, 100, 1000, 0);
        let b = ticks(1, 110, 150, 1010, 30);
        let s = share(&a, &b).unwrap();
        assert_eq!(s.cpu, 1);
        assert_eq!(s.busy_percent, 90.0);
        assert_eq!(s.user_percent, 10.0);
        assert_eq!(s.system_percent, 50.0);
        assert_eq!(s.softirq_percent, Some(30.0));
        assert_eq!(share(&a, &a), None, "no tick passed: nothing to say");
        // FreeBSD has no softirq: unknown, not 0.
        let bsd = |user, idle| CpuTicks {
            cpu: 0,
            user,
            idle,
            ..CpuTicks::default()
        };
        let s = share(&bsd(0, 0), &bsd(25, 75)).unwrap();
        assert_eq!(
            (s.busy_percent, s.softirq_percent, s.steal_percent),
            (25.0, None, None)
        );
    }

    #[test]
    fn the_busiest_cpu_is_found_and_offline_cpus_skipped() {
        let a = [
            ticks(0, 0, 0, 0, 0),
            ticks(1, 0, 0, 0, 0),
            ticks(2, 0, 0, 0, 0),
        ];
        let b = [ticks(0, 10, 0, 90, 0), ticks(2, 0, 5, 0, 95)];
        let top = busiest(&a, &b).unwrap();
        assert_eq!(
            (top.cpu, top.busy_percent, top.softirq_percent),
            (2, 100.0, Some(95.0))
        );
        assert_eq!(shares(&a, &b).len(), 2);
    }

    #[test]
    fn thread_time_is_percent_of_one_core() {
        let base = ThreadTicks {
            user: 10,
            system: 20,
            cpu: 0,
        };
        let last = ThreadTicks {
            user: 60,
            system: 220,
            cpu: 1,
        };
        // 50 and 200 ticks at 100 per second over 2 s: 25 % and 100 % of a core.
        assert_eq!(thread_percent(base, last, 2.0, 100.0), (25.0, 100.0));
        assert_eq!(thread_percent(base, last, 0.0, 100.0), (0.0, 0.0));
    }

    #[test]
    fn a_long_series_merges_neighbours_and_keeps_the_busier() {
        let at = |busy: f64| CpuShare {
            cpu: busy as u64,
            busy_percent: busy,
            user_percent: 0.0,
            system_percent: busy,
            irq_percent: 0.0,
            softirq_percent: None,
            steal_percent: None,
        };
        let mut s = BusiestSeries::new(4);
        for i in 0..4 {
            s.push(f64::from(i), f64::from(i + 1), at(f64::from(10 * i)));
        }
        assert_eq!(s.clone().into_entries().len(), 4);
        // The fifth second merges pairs: [0,2) [2,4) and a new 2-second entry begins.
        s.push(4.0, 5.0, at(99.0));
        s.push(5.0, 6.0, at(1.0));
        let e = s.clone().into_entries();
        let spans: Vec<(f64, f64, f64)> = e
            .iter()
            .map(|i| (i.start, i.end, i.busiest.busy_percent))
            .collect();
        assert_eq!(
            spans,
            [(0.0, 2.0, 10.0), (2.0, 4.0, 30.0), (4.0, 6.0, 99.0)]
        );
        // Memory stays bounded however long it runs, and the whole span is covered.
        for i in 6..1000 {
            s.push(f64::from(i), f64::from(i + 1), at(50.0));
        }
        let e = s.into_entries();
        assert!(e.len() <= 4, "{}", e.len());
        assert_eq!((e[0].start, e.last().map(|i| i.end)), (0.0, Some(1000.0)));
        assert!(e.iter().any(|i| i.busiest.busy_percent == 99.0));
    }
}
