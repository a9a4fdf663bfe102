//! `perf_event_open` stack sampling: one sampling event per CPU (system-wide, or one process
//! and the children it forks from now on), each with its own mmap'ed ring buffer, and the
//! sample records decoded from it (instruction pointer, pid/tid, CPU, call chain).
//!
//! The syscall, the attribute struct and the ioctls come from the maintained
//! `perf-event-open-sys` bindings; what no crate wraps safely here is the ring buffer (mmap of
//! the event's file descriptor, the `data_head`/`data_tail` protocol), so that is the
//! hand-written `unsafe` of this module. Records are copied out of the ring before they are
//! decoded, so decoding is safe code (and tested without a kernel).

#![warn(clippy::undocumented_unsafe_blocks)]

use std::io;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{Ordering, fence};

use perf_event_open_sys as sys;
use perf_event_open_sys::bindings::{perf_event_attr, perf_event_header, perf_event_mmap_page};

use super::shared_map::SharedMap;

/// What is counted to trigger a sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// Hardware CPU cycles (needs a PMU; absent in most VMs).
    Cycles,
    /// The software `cpu-clock` timer (always there).
    CpuClock,
}

impl Event {
    /// The name `perf` gives the event.
    pub fn name(self) -> &'static str {
        match self {
            Event::Cycles => "cycles",
            Event::CpuClock => "cpu-clock",
        }
    }
}

/// Whom to sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// Every task on the CPUs given to [`Sampler::open`].
    System,
    /// One process (and the children it forks after the events are opened).
    Process(i32),
}

/// One decoded sample.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sample {
    /// The instruction pointer.
    pub ip: u64,
    /// Process id (0 for the idle task).
    pub pid: u32,
    /// Thread id.
    pub tid: u32,
    /// The CPU it was taken on.
    pub cpu: u32,
    /// The call chain, innermost first, without the kernel's context markers; each address is
    /// tagged kernel (`true`) or user (`false`) from those markers.
    pub chain: Vec<(u64, bool)>,
}

/// What one drain of the rings found besides samples.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct DrainStats {
    /// Sample records decoded.
    pub samples: u64,
    /// Samples the kernel reports it dropped (ring full).
    pub lost: u64,
}

const SAMPLE_TYPE: u64 = (sys::bindings::PERF_SAMPLE_IP
    | sys::bindings::PERF_SAMPLE_TID
    | sys::bindings::PERF_SAMPLE_CPU
    | sys::bindings::PERF_SAMPLE_CALLCHAIN) as u64;

/// The call-chain markers (`PERF_CONTEXT_*`): values at or above this are markers, not addresses.
const CONTEXT_MAX: u64 = sys::bindings::PERF_CONTEXT_MAX;
const CONTEXT_KERNEL: u64 = (-128i64) as u64;
const CONTEXT_USER: u64 = (-512i64) as u64;

/// Ring data pages per CPU (a power of two): 64 pages = 256 KiB with 4 KiB pages.
const RING_PAGES: usize = 64;

/// One event's file descriptor and its mapped ring.
struct Ring {
    fd: OwnedFd,
    map: SharedMap,
    page: usize,
}

impl Ring {
    fn header(&self) -> *mut perf_event_mmap_page {
        self.map.as_ptr().cast()
    }

    /// Copies the records between the reader's tail and the kernel's head, then frees them.
    #[expect(unsafe_code)]
    fn take(&mut self, out: &mut Vec<u8>) {
        let hdr = self.header();
        // SAFETY: `hdr` points at the first (metadata) page of a live mapping of at least one
        // page, which the kernel keeps laid out as `perf_event_mmap_page`; the head is read
        // volatile because the kernel writes it concurrently, and the acquire fence orders the
        // data reads after it (the protocol in perf_event_open(2)).
        let head = unsafe { std::ptr::addr_of!((*hdr).data_head).read_volatile() };
        fence(Ordering::Acquire);
        // SAFETY: as above; only this reader writes the tail, the kernel only reads it.
        let tail = unsafe { std::ptr::addr_of!((*hdr).data_tail).read_volatile() };
        let size = (self.map.len() - self.page) as u64;
        let data = self.page;
        let mut pos = tail;
        while pos < head {
            let off = (pos % size) as usize;
            let n = ((head - pos) as usize).min(size as usize - off);
            // SAFETY: `data + off .. data + off + n` lies inside the data area of the mapping
            // (`off < size`, `n <= size - off`), which stays mapped while `self` lives; the
            // kernel does not write between tail and head until the tail moves past them.
            let bytes = unsafe { std::slice::from_raw_parts(self.map.as_ptr().add(data + off), n) };
            out.extend_from_slice(bytes);
            pos += n as u64;
        }
        fence(Ordering::Release);
        // SAFETY: the tail field of the live metadata page; writing it hands the bytes we
        // copied back to the kernel (after the release fence, so our reads come first).
        unsafe { std::ptr::addr_of_mut!((*hdr).data_tail).write_volatile(head) };
    }
}

/// Sampling events on a set of CPUs, with their rings.
pub struct Sampler {
    rings: Vec<Ring>,
    event: Event,
    scratch: Vec<u8>,
}

impl std::fmt::Debug for Sampler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sampler")
            .field("cpus", &self.rings.len())
            .field("event", &self.event)
            .finish()
    }
}

fn attr(event: Event, frequency: u64, inherit: bool) -> perf_event_attr {
    let mut a = perf_event_attr::default();
    match event {
        Event::Cycles => {
            a.type_ = sys::bindings::PERF_TYPE_HARDWARE;
            a.config = sys::bindings::PERF_COUNT_HW_CPU_CYCLES as u64;
        }
        Event::CpuClock => {
            a.type_ = sys::bindings::PERF_TYPE_SOFTWARE;
            a.config = sys::bindings::PERF_COUNT_SW_CPU_CLOCK as u64;
        }
    }
    a.size = std::mem::size_of::<perf_event_attr>() as u32;
    a.__bindgen_anon_1.sample_freq = frequency;
    a.set_freq(1);
    a.sample_type = SAMPLE_TYPE;
    a.set_disabled(1);
    a.set_exclude_guest(1);
    a.set_inherit(u64::from(inherit));
    a.__bindgen_anon_2.wakeup_events = 1;
    a
}

#[expect(unsafe_code)]
fn open_one(event: Event, frequency: u64, target: Target, cpu: i32) -> io::Result<OwnedFd> {
    let (pid, inherit) = match target {
        Target::System => (-1, false),
        Target::Process(p) => (p, true),
    };
    let mut a = attr(event, frequency, inherit);
    // SAFETY: `a` is a fully initialised perf_event_attr whose size field is its own size; it
    // asks only for sampling (no BPF, no breakpoints); the returned descriptor is owned below.
    let fd = unsafe {
        sys::perf_event_open(
            &mut a,
            pid,
            cpu,
            -1,
            sys::bindings::PERF_FLAG_FD_CLOEXEC as libc::c_ulong,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is a fresh descriptor returned by the kernel and owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

#[expect(unsafe_code)]
fn map(fd: OwnedFd) -> io::Result<Ring> {
    // SAFETY: sysconf has no preconditions.
    let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096);
    let len = page * (RING_PAGES + 1);
    let map = SharedMap::new(fd.as_fd(), len)?;
    Ok(Ring { fd, map, page })
}

impl Sampler {
    /// Opens one sampling event per CPU in `cpus` at `frequency` samples per second per CPU,
    /// trying hardware cycles first when `prefer_cycles`, else (or when there is no PMU) the
    /// software cpu-clock. Events start disabled: call [`Sampler::enable`].
    pub fn open(
        target: Target,
        cpus: &[u32],
        frequency: u64,
        prefer_cycles: bool,
    ) -> io::Result<Sampler> {
        let first = *cpus
            .first()
            .ok_or_else(|| io::Error::other("no CPU to sample"))?;
        let mut event = Event::CpuClock;
        if prefer_cycles {
            match open_one(Event::Cycles, frequency, target, first as i32) {
                Ok(_) => event = Event::Cycles,
                Err(e)
                    if matches!(
                        e.raw_os_error(),
                        Some(libc::ENOENT | libc::EOPNOTSUPP | libc::ENODEV | libc::EINVAL)
                    ) => {}
                Err(e) => return Err(e),
            }
        }
        let mut rings = Vec::with_capacity(cpus.len());
        for &cpu in cpus {
            let fd = open_one(event, frequency, target, cpu as i32)?;
            rings.push(map(fd)?);
        }
        Ok(Sampler {
            rings,
            event,
            scratch: Vec::new(),
        })
    }

    /// The event being sampled.
    pub fn event(&self) -> Event {
        self.event
    }

    /// Starts sampling on every CPU.
    #[expect(unsafe_code)]
    pub fn enable(&self) -> io::Result<()> {
        for r in &self.rings {
            // SAFETY: ENABLE on a perf event descriptor we own; the argument is unused.
            if unsafe { sys::ioctls::ENABLE(r.fd.as_raw_fd(), 0) } < 0 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    }

    /// Stops sampling on every CPU (records already written stay readable).
    #[expect(unsafe_code)]
    pub fn disable(&self) -> io::Result<()> {
        for r in &self.rings {
            // SAFETY: DISABLE on a perf event descriptor we own; the argument is unused.
            if unsafe { sys::ioctls::DISABLE(r.fd.as_raw_fd(), 0) } < 0 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    }

    /// Reads every ring and hands each decoded sample to `f`.
    pub fn drain(&mut self, mut f: impl FnMut(Sample)) -> DrainStats {
        let mut stats = DrainStats::default();
        for i in 0..self.rings.len() {
            self.scratch.clear();
            let mut buf = std::mem::take(&mut self.scratch);
            self.rings[i].take(&mut buf);
            decode_records(&buf, &mut stats, &mut f);
            self.scratch = buf;
        }
        stats
    }
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_ne_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// Decodes the records in `buf` (as copied out of a ring): samples go to `f`, lost-record
/// counts into `stats`; other record types are skipped; a truncated record ends the walk.
pub fn decode_records(buf: &[u8], stats: &mut DrainStats, f: &mut impl FnMut(Sample)) {
    let hlen = std::mem::size_of::<perf_event_header>();
    let mut at = 0;
    while at + hlen <= buf.len() {
        let Some(kind) = u32_at(buf, at) else { break };
        let size = usize::from(u16::from_ne_bytes([buf[at + 6], buf[at + 7]]));
        if size < hlen || at + size > buf.len() {
            break;
        }
        let body = &buf[at + hlen..at + size];
        match kind {
            sys::bindings::PERF_RECORD_SAMPLE => {
                if let Some(s) = decode_sample(body) {
                    stats.samples += 1;
                    f(s);
                }
            }
            sys::bindings::PERF_RECORD_LOST => {
                stats.lost += u64_at(body, 8).unwrap_or(0);
            }
            _ => {}
        }
        at += size;
    }
}

/// One `PERF_RECORD_SAMPLE` body with IP, TID, CPU and CALLCHAIN, in that order.
fn decode_sample(b: &[u8]) -> Option<Sample> {
    let ip = u64_at(b, 0)?;
    let pid = u32_at(b, 8)?;
    let tid = u32_at(b, 12)?;
    let cpu = u32_at(b, 16)?;
    let nr = usize::try_from(u64_at(b, 24)?).ok()?;
    let mut chain = Vec::with_capacity(nr.min(256));
    let mut kernel = true;
    for i in 0..nr {
        let a = u64_at(b, 32 + 8 * i)?;
        if a >= CONTEXT_MAX {
            if a == CONTEXT_KERNEL {
                kernel = true;
            } else if a == CONTEXT_USER {
                kernel = false;
            }
            continue;
        }
        chain.push((a, kernel));
    }
    if chain.is_empty() {
        chain.push((ip, false));
    }
    Some(Sample {
        ip,
        pid,
        tid,
        cpu,
        chain,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(kind: u32, body: &[u8]) -> Vec<u8> {
        let mut r = Vec::new();
        r.extend_from_slice(&kind.to_ne_bytes());
        r.extend_from_slice(&0u16.to_ne_bytes());
        r.extend_from_slice(&((8 + body.len()) as u16).to_ne_bytes());
        r.extend_from_slice(body);
        r
    }

    #[test]
    fn samples_decode_with_context_markers_dropped() {
        let mut body = Vec::new();
        body.extend_from_slice(&0xffff_ffff_8100_0010u64.to_ne_bytes());
        body.extend_from_slice(&42u32.to_ne_bytes());
        body.extend_from_slice(&43u32.to_ne_bytes());
        body.extend_from_slice(&1u32.to_ne_bytes());
        body.extend_from_slice(&0u32.to_ne_bytes());
        let chain = [
            CONTEXT_KERNEL,
            0xffff_ffff_8100_0010,
            0xffff_ffff_8100_0200,
            CONTEXT_USER,
            0x40_1000,
        ];
        body.extend_from_slice(&(chain.len() as u64).to_ne_bytes());
        for a in chain {
            body.extend_from_slice(&a.to_ne_bytes());
        }
        let mut buf = record(sys::bindings::PERF_RECORD_SAMPLE, &body);
        let mut lost = Vec::new();
        lost.extend_from_slice(&7u64.to_ne_bytes());
        lost.extend_from_slice(&5u64.to_ne_bytes());
        buf.extend(record(sys::bindings::PERF_RECORD_LOST, &lost));
        buf.extend_from_slice(&[1, 2, 3]); // a truncated tail is ignored
        let mut got = Vec::new();
        let mut stats = DrainStats::default();
        decode_records(&buf, &mut stats, &mut |s| got.push(s));
        assert_eq!(
            stats,
            DrainStats {
                samples: 1,
                lost: 5
            }
        );
        assert_eq!(got[0].pid, 42);
        assert_eq!(got[0].tid, 43);
        assert_eq!(got[0].cpu, 1);
        assert_eq!(
            got[0].chain,
            vec![
                (0xffff_ffff_8100_0010, true),
                (0xffff_ffff_8100_0200, true),
                (0x40_1000, false)
            ]
        );
    }
}
