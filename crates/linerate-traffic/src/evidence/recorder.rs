//! The recorder: one thread per test beside the stream threads, reading every TCP stream's
//! `TCP_INFO` (through a descriptor of its own, so the streams' loops are never touched)
//! `hz` times a second and the CPU counters once a second, folding each reading in place.
//! Stopped and joined at the end of the measured period, it hands back the side's
//! [`Evidence`].
//!
//! On a loaded host the thread wakes late now and then; a reading missed that way is made up
//! over the next ones (never closer than half a period, so never a burst at one instant), so
//! the count keeps up with `hz` × seconds. A debt older than a second is forgiven.

use std::os::fd::{AsFd, OwnedFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use linerate_iperf3::evidence::{Evidence, Role, Side, StreamRole};

use super::cpu::{CpuAcc, ThreadAcc, ThreadSource};
use super::tcp::{Buffers, TcpAcc};
use super::udp::UdpAcc;
use crate::config::{Direction, MAX_EVIDENCE_HZ, Protocol};
use crate::error::TrafficError;
use crate::stream::StreamHandle;

/// The omitted period runs: nothing is read yet.
const WARMING: u8 = 0;
/// The measured period runs.
const MEASURING: u8 = 1;
/// The measured period is over.
const STOPPING: u8 = 2;

/// How often the CPU counters are read.
const CPU_PERIOD: Duration = Duration::from_secs(1);

/// A running recorder; [`EvidenceRecorder::finish`] stops it and gives its evidence.
#[derive(Debug)]
pub struct EvidenceRecorder {
    phase: Arc<AtomicU8>,
    thread: Option<JoinHandle<Option<Evidence>>>,
}

/// A TCP stream as the recorder reads it.
#[derive(Debug)]
struct Probe {
    id: i64,
    role: Role,
    fd: OwnedFd,
}

/// What the recorder follows.
#[derive(Debug)]
struct Setup {
    side: Side,
    hz: u32,
    streams: Vec<StreamRole>,
    probes: Vec<Probe>,
    threads: Vec<ThreadAcc>,
    /// The test has UDP streams: the namespace's drop counters are read.
    udp: bool,
}

fn role(d: Direction) -> Role {
    match d {
        Direction::Send => Role::Sender,
        Direction::Receive => Role::Receiver,
    }
}

impl EvidenceRecorder {
    /// Starts recording `streams` at `hz` readings a second (capped at
    /// [`MAX_EVIDENCE_HZ`]); `None` when `hz` is 0. Without an omitted period the period's
    /// first reading is taken before this returns, so call it before the streams move data;
    /// otherwise when `omit` has passed, or at [`EvidenceRecorder::begin_measuring`] if that
    /// comes first.
    pub fn start(
        side: Side,
        hz: u32,
        streams: &[StreamHandle],
        omit: Duration,
    ) -> Result<Option<EvidenceRecorder>, TrafficError> {
        if hz == 0 {
            return Ok(None);
        }
        let mut probes = Vec::new();
        for h in streams {
            if let Some(fd) = &h.info_fd {
                let fd = fd
                    .try_clone()
                    .map_err(|e| TrafficError::socket("duplicating a stream socket", e))?;
                probes.push(Probe {
                    id: h.spec.id,
                    role: role(h.spec.direction),
                    fd,
                });
            }
        }
        let threads = streams
            .iter()
            .map(|h| {
                ThreadAcc::new(
                    format!("lr-stream-{}", h.spec.id),
                    Some(h.spec.id),
                    ThreadSource::Stream(Arc::clone(&h.counters)),
                    Some(Arc::clone(&h.spec.work.report)),
                )
            })
            .collect();
        let setup = Setup {
            side,
            hz: hz.min(MAX_EVIDENCE_HZ),
            streams: streams
                .iter()
                .map(|h| StreamRole {
                    id: h.spec.id,
                    role: role(h.spec.direction),
                })
                .collect(),
            probes,
            threads,
            udp: streams.iter().any(|h| h.spec.protocol == Protocol::Udp),
        };
        let phase = Arc::new(AtomicU8::new(if omit.is_zero() {
            MEASURING
        } else {
            WARMING
        }));
        let (ready_tx, ready_rx) = std::sync::mpsc::sync_channel(1);
        let p = Arc::clone(&phase);
        let measure_at = Instant::now() + omit;
        let thread = std::thread::Builder::new()
            .name("lr-evidence".to_owned())
            .spawn(move || record(setup, &p, measure_at, &ready_tx))
            .map_err(|e| TrafficError::socket("starting the evidence recorder", e))?;
        // The first reading is taken (or the thread is gone): the period may start.
        let _ = ready_rx.recv();
        Ok(Some(EvidenceRecorder {
            phase,
            thread: Some(thread),
        }))
    }

    /// The omitted period is over: the measured period starts now.
    pub fn begin_measuring(&self) {
        if self
            .phase
            .compare_exchange(WARMING, MEASURING, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            self.wake();
        }
    }

    fn wake(&self) {
        if let Some(t) = &self.thread {
            t.thread().unpark();
        }
    }

    /// Ends the measured period now and gives the evidence; `None` when it never began (the
    /// test ended in its omitted period) or the recorder failed.
    pub fn finish(mut self) -> Option<Evidence> {
        self.phase.store(STOPPING, Ordering::Release);
        self.wake();
        self.thread.take()?.join().ok().flatten()
    }
}

impl Drop for EvidenceRecorder {
    fn drop(&mut self) {
        self.phase.store(STOPPING, Ordering::Release);
        self.wake();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The measured period's readings so far.
#[derive(Debug)]
struct Measurement {
    started: Instant,
    tcp: Vec<TcpAcc>,
    cpu: CpuAcc,
    next_cpu: Instant,
    udp: Option<UdpAcc>,
}

impl Measurement {
    /// Starts the period: the first reading of everything.
    fn begin(setup: &mut Setup) -> Measurement {
        let started = Instant::now();
        let mut m = Measurement {
            started,
            tcp: setup
                .probes
                .iter()
                .map(|p| TcpAcc::new(p.id, p.role))
                .collect(),
            cpu: CpuAcc::begin(std::mem::take(&mut setup.threads)),
            next_cpu: started + CPU_PERIOD,
            udp: setup.udp.then(UdpAcc::begin),
        };
        m.read_tcp(&setup.probes);
        m
    }

    fn read_tcp(&mut self, probes: &[Probe]) {
        for (acc, p) in self.tcp.iter_mut().zip(probes) {
            if let Some(info) = crate::sockopt::tcp_info(p.fd.as_fd()) {
                let s = socket2::SockRef::from(&p.fd);
                let buffers = Buffers {
                    send: s.send_buffer_size().ok().map(|b| b as u64),
                    receive: s.recv_buffer_size().ok().map(|b| b as u64),
                };
                acc.add(&info, buffers);
            }
        }
    }

    fn finish(mut self, setup: &Setup) -> Evidence {
        self.read_tcp(&setup.probes);
        let seconds = self.started.elapsed().as_secs_f64();
        Evidence {
            side: setup.side,
            sample_hz: setup.hz,
            seconds,
            streams: setup.streams.clone(),
            tcp: self.tcp.iter().map(TcpAcc::evidence).collect(),
            cpu: self.cpu.finish(),
            udp: self.udp.as_ref().and_then(UdpAcc::finish),
        }
    }
}

/// Readings a late thread still owes at most.
const MAX_DEBT: Duration = Duration::from_secs(1);

/// When the reading after one made at `now` is due, `done` readings after `started` on a
/// grid of `period`: on the grid when the thread keeps up; when it is behind, half a period
/// after this one (catching up at twice the rate at most); when it is more than
/// [`MAX_DEBT`] behind, the debt is dropped and the grid starts again here.
/// Returns the due time and the grid's new origin.
fn next_reading(started: Instant, done: u32, period: Duration, now: Instant) -> (Instant, Instant) {
    let grid = started + period * done;
    if grid + MAX_DEBT < now {
        // Forgive: the grid restarts so that the next reading is one period from now.
        let origin = (now + period).checked_sub(period * done).unwrap_or(now);
        return (now + period, origin);
    }
    (grid.max(now + period / 2), started)
}

/// The recorder's thread.
fn record(
    mut setup: Setup,
    phase: &AtomicU8,
    measure_at: Instant,
    ready: &std::sync::mpsc::SyncSender<()>,
) -> Option<Evidence> {
    #[cfg(target_os = "linux")]
    setup.threads.push(ThreadAcc::new(
        "lr-evidence".to_owned(),
        None,
        ThreadSource::Known(linerate_sys::cpu_time::current_thread_id()),
        None,
    ));
    let period = Duration::from_secs_f64(1.0 / f64::from(setup.hz.max(1)));
    let mut m =
        (phase.load(Ordering::Acquire) == MEASURING).then(|| Measurement::begin(&mut setup));
    let _ = ready.send(());
    // The grid of readings: its origin and the readings made on it (the first is taken).
    let mut origin = Instant::now();
    let mut done = 1u32;
    let mut next = origin + period;
    loop {
        match phase.load(Ordering::Acquire) {
            STOPPING => break,
            MEASURING if m.is_none() => {
                m = Some(Measurement::begin(&mut setup));
                origin = Instant::now();
                done = 1;
                next = origin + period;
            }
            _ => {}
        }
        let Some(meas) = m.as_mut() else {
            // The omitted period: wait for its end (or to be woken earlier).
            let left = measure_at.saturating_duration_since(Instant::now());
            if left.is_zero() {
                let _ =
                    phase.compare_exchange(WARMING, MEASURING, Ordering::AcqRel, Ordering::Acquire);
            } else {
                std::thread::park_timeout(left);
            }
            continue;
        };
        let now = Instant::now();
        if now >= next {
            meas.read_tcp(&setup.probes);
            done = done.saturating_add(1);
            (next, origin) = next_reading(origin, done, period, now);
            if now >= meas.next_cpu {
                meas.cpu.tick();
                // Whole seconds from the start; a late second is not made up.
                while meas.next_cpu <= now {
                    meas.next_cpu += CPU_PERIOD;
                }
            }
        }
        std::thread::park_timeout(next.saturating_duration_since(Instant::now()));
    }
    Some(m?.finish(&setup))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Protocol;
    use crate::stream::{DataSocket, StreamSpec};
    use std::io::{Read, Write};
    use std::net::{TcpListener, TcpStream};

    /// A sending stream on a loopback connection, fed by a writer thread for `run`, and the
    /// reader that drains it.
    fn sender(run: Duration) -> (StreamHandle, std::thread::JoinHandle<()>) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut tx = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (mut rx, _) = l.accept().unwrap();
        let reader = std::thread::spawn(move || {
            let mut buf = vec![0u8; 1 << 16];
            while rx.read(&mut buf).is_ok_and(|n| n > 0) {}
        });
        let spec = StreamSpec {
            id: 1,
            direction: Direction::Send,
            protocol: Protocol::Tcp,
            len: 1 << 16,
            rate_bps: 0,
            pacing_timer: Duration::from_millis(1),
            udp64: false,
            work: crate::flow::Work::default(),
            window_set: false,
        };
        let h = StreamHandle::new(spec, DataSocket::Tcp(tx.try_clone().unwrap())).unwrap();
        std::thread::spawn(move || {
            let t = Instant::now();
            let block = vec![1u8; 1 << 16];
            while t.elapsed() < run && tx.write_all(&block).is_ok() {}
        });
        (h, reader)
    }

    #[test]
    fn a_live_stream_is_read_at_the_asked_rate_after_its_omitted_period() {
        let (h, _reader) = sender(Duration::from_millis(900));
        let r = EvidenceRecorder::start(
            Side::Client,
            200,
            std::slice::from_ref(&h),
            Duration::from_millis(300),
        )
        .unwrap()
        .unwrap();
        std::thread::sleep(Duration::from_millis(800));
        let ev = r.finish().unwrap();
        assert_eq!((ev.side, ev.sample_hz), (Side::Client, 200));
        // The omitted 300 ms are left out.
        assert!((0.4..0.7).contains(&ev.seconds), "{}", ev.seconds);
        let t = &ev.tcp[0];
        assert_eq!((t.id, t.role), (1, Role::Sender));
        // Half the asked rate: a loaded test machine may starve the thread for longer than it
        // makes up (the schedule is held exactly by the tests below).
        assert!(
            t.samples as f64 >= (100.0 * ev.seconds).floor(),
            "{} in {}",
            t.samples,
            ev.seconds
        );
        assert!(t.bytes_acked.is_some_and(|b| b > 0), "{t:?}");
        assert!(
            t.busy_us
                .is_some_and(|b| b as f64 <= ev.seconds * 1e6 + 20_000.0),
            "{t:?}"
        );
        assert_eq!(
            ev.streams,
            [StreamRole {
                id: 1,
                role: Role::Sender
            }]
        );
        assert!(ev.cpu.cpus.as_ref().is_some_and(|c| !c.is_empty()));
    }

    #[test]
    fn a_test_ended_in_its_omitted_period_has_no_evidence_and_zero_hz_no_recorder() {
        let (h, _reader) = sender(Duration::from_millis(100));
        let r = EvidenceRecorder::start(
            Side::Server,
            100,
            std::slice::from_ref(&h),
            Duration::from_secs(60),
        )
        .unwrap()
        .unwrap();
        assert_eq!(r.finish(), None);
        assert!(
            EvidenceRecorder::start(Side::Server, 0, std::slice::from_ref(&h), Duration::ZERO)
                .unwrap()
                .is_none()
        );
        // Asked for more than the cap: read at the cap.
        let r = EvidenceRecorder::start(
            Side::Server,
            50_000,
            std::slice::from_ref(&h),
            Duration::ZERO,
        )
        .unwrap()
        .unwrap();
        assert_eq!(r.finish().map(|e| e.sample_hz), Some(MAX_EVIDENCE_HZ));
    }

    #[test]
    fn late_readings_are_made_up_at_twice_the_rate_at_most() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let p = ms(10);
        // On time: reading 2 (at 10 ms) made, the next on the grid at 20 ms.
        assert_eq!(next_reading(t0, 2, p, t0 + ms(10)), (t0 + ms(20), t0));
        // Woken at 35 ms for reading 2 (due 10 ms): the rest follow 5 ms apart until the
        // grid is met again.
        assert_eq!(next_reading(t0, 2, p, t0 + ms(35)), (t0 + ms(40), t0));
        assert_eq!(next_reading(t0, 3, p, t0 + ms(40)).0, t0 + ms(45));
        assert_eq!(next_reading(t0, 4, p, t0 + ms(45)).0, t0 + ms(50));
        assert_eq!(next_reading(t0, 5, p, t0 + ms(50)).0, t0 + ms(55));
        assert_eq!(
            next_reading(t0, 6, p, t0 + ms(55)).0,
            t0 + ms(60),
            "back on the grid"
        );
        // Stalled for 3 s: the debt is dropped, the grid restarts a period from now.
        let (next, origin) = next_reading(t0, 2, p, t0 + ms(3000));
        assert_eq!(next, t0 + ms(3010));
        assert_eq!(origin + p * 2, next, "reading 2 of the new grid");
    }
}
