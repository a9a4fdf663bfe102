//! TCP bulk transfer without the copy (Linux, `--zerocopy`): a receiver that maps received
//! pages (`TCP_ZEROCOPY_RECEIVE`) and reads only the unmappable remainder, falling back to the
//! copy loop when the kernel refuses or when too little maps to pay; and a sender that sends
//! from an in-memory file (`sendfile`, `auto`) or pins its own pages (`MSG_ZEROCOPY`, `on`).
//!
//! Found on Linux 6.18 over loopback: pages map only when the *sender* used `MSG_ZEROCOPY`
//! (loopback then re-copies the pinned user pages into fresh order-0 pages, which map: from a
//! tenth to nearly all of the bytes, run to run); an ordinary sender's segments sit in compound
//! page fragments and sendfile's are file pages, which the kernel never maps (0 bytes),
//! whatever `TCP_MAXSEG`.

use std::io::{self, Read};
use std::net::TcpStream;
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, Ordering};

use linerate_sys::tcp_zerocopy::{self, ZerocopyWindow};

pub use crate::config::ZeroCopy;
pub use crate::flow::zerocopy::{ZcOutcome, ZcSendOutcome};
use crate::flow::{POLL, StreamCounters, is_retry};

/// The bytes an `Auto` receiver watches before deciding.
pub const PROBE_BYTES: u64 = 64 << 20;
/// The share of those bytes that must map for `Auto` to keep zero-copy.
pub const MIN_MAPPED_SHARE: f64 = 0.5;
/// The receive window mapped per call.
const WINDOW: usize = 2 << 20;

/// Reads until stopped or the peer closes, mapping what the kernel can map. Counts every
/// byte in `counters.bytes` as the copy loop does.
pub fn receive(
    mode: ZeroCopy,
    mut sock: TcpStream,
    counters: &StreamCounters,
    stop: &AtomicBool,
) -> (TcpStream, ZcOutcome) {
    let _ = sock.set_read_timeout(Some(POLL));
    let mut out = ZcOutcome {
        path: "zerocopy",
        ..ZcOutcome::default()
    };
    let mut window = match ZerocopyWindow::new(sock.as_fd(), WINDOW) {
        Ok(w) => Some(w),
        Err(e) => {
            out.fallback = Some(format!("the kernel refused the receive mapping: {e}"));
            None
        }
    };
    let mut buf = vec![0u8; 256 << 10];
    while !stop.load(Ordering::Relaxed) {
        let Some(w) = window.as_mut() else {
            // The copy path.
            match read_some(&mut sock, &mut buf, counters, stop) {
                Some(n) => out.copied += n,
                None => break,
            }
            continue;
        };
        let r = match w.receive(sock.as_fd()) {
            Ok(r) => r,
            Err(e) if refused(&e) => {
                out.fallback = Some(format!("the kernel refused TCP_ZEROCOPY_RECEIVE: {e}"));
                window = None;
                continue;
            }
            Err(_) => {
                counters.failed.store(true, Ordering::Relaxed);
                break;
            }
        };
        if r.mapped > 0 {
            // The pages are counted, not read: the mapping is the delivery. The next call
            // releases them.
            out.mapped += r.mapped as u64;
            counters.bytes.fetch_add(r.mapped as u64, Ordering::Relaxed);
        }
        if r.skip > 0 || r.mapped == 0 {
            // The unmappable head (or nothing queued yet: a blocking read waits for data
            // and sees the close).
            let want = if r.skip > 0 {
                r.skip.min(buf.len())
            } else {
                buf.len()
            };
            match read_some(&mut sock, &mut buf[..want], counters, stop) {
                Some(n) => out.copied += n,
                None => break,
            }
        }
        let seen = out.mapped + out.copied;
        if mode == ZeroCopy::Auto && seen >= PROBE_BYTES && out.fallback.is_none() {
            let share = out.mapped as f64 / seen as f64;
            if share < MIN_MAPPED_SHARE {
                out.fallback = Some(format!(
                    "{:.0}% of the first {} MiB mapped (below {:.0}%): only whole anonymous \
                     pages map, not an ordinary sender's page fragments nor sendfile's file \
                     pages (on loopback only a MSG_ZEROCOPY sender's map)",
                    share * 100.0,
                    seen >> 20,
                    MIN_MAPPED_SHARE * 100.0
                ));
                window = None;
            }
        }
    }
    if out.fallback.is_some() {
        out.path = "copy";
    }
    (sock, out)
}

/// One read into `buf`, counted; `None` when the loop must end (close, error, stop).
fn read_some(
    sock: &mut TcpStream,
    buf: &mut [u8],
    counters: &StreamCounters,
    stop: &AtomicBool,
) -> Option<u64> {
    match sock.read(buf) {
        Ok(0) => None,
        Ok(n) => {
            counters.bytes.fetch_add(n as u64, Ordering::Relaxed);
            Some(n as u64)
        }
        Err(e) if is_retry(&e) => Some(0),
        Err(_) => {
            if !stop.load(Ordering::Relaxed) {
                counters.failed.store(true, Ordering::Relaxed);
            }
            None
        }
    }
}

/// The errors by which a kernel says it does not do zero-copy receive on this socket.
fn refused(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EINVAL | libc::ENOPROTOOPT | libc::EOPNOTSUPP | libc::ENODEV)
    )
}

/// A bulk sender's write path for `--zerocopy`: `Auto` sends the pattern from an in-memory
/// file (`sendfile`: the socket references the file's pages, no copy into the socket, and
/// loopback and veth deliver them as they are), `On` pins the sender's own pages
/// (`MSG_ZEROCOPY`: loopback and veth copy those at delivery, and the completions say so);
/// either falls back to the copy when the kernel refuses.
#[derive(Debug)]
pub struct Sender {
    path: SendPath,
    /// `MSG_ZEROCOPY` sends the kernel accepted (each gets one completion).
    issued: u64,
    done: tcp_zerocopy::Completions,
    fallback: Option<String>,
}

#[derive(Debug)]
enum SendPath {
    Copy,
    File(std::os::fd::OwnedFd),
    Pinned,
}

impl Sender {
    /// Sets `sock` up to send from `pattern` in `mode` (`Off` writes by copy).
    pub fn new(mode: ZeroCopy, sock: &TcpStream, pattern: &[u8]) -> Sender {
        let mut fallback = None;
        let path = match mode {
            ZeroCopy::Off => SendPath::Copy,
            ZeroCopy::Auto => match tcp_zerocopy::memory_file("linerate-pattern", pattern) {
                Ok(f) => SendPath::File(f),
                Err(e) => {
                    fallback = Some(format!("no in-memory file to send from: {e}"));
                    SendPath::Copy
                }
            },
            ZeroCopy::On => match tcp_zerocopy::enable_send_zerocopy(sock.as_fd()) {
                Ok(()) => SendPath::Pinned,
                Err(e) => {
                    fallback = Some(format!("the kernel refused SO_ZEROCOPY: {e}"));
                    SendPath::Copy
                }
            },
        };
        Sender {
            path,
            issued: 0,
            done: tcp_zerocopy::Completions::default(),
            fallback,
        }
    }

    /// Writes some of `pattern[range]` (the pattern given to [`Sender::new`], which must not
    /// change while the socket lives). `Ok(0)` means "try again": the kernel's completion
    /// memory is full until the error queue drains.
    pub fn write(
        &mut self,
        sock: &mut TcpStream,
        pattern: &[u8],
        range: std::ops::Range<usize>,
    ) -> io::Result<usize> {
        match &self.path {
            SendPath::Copy => crate::flow::write_copy(sock, &pattern[range]),
            SendPath::File(f) => {
                match tcp_zerocopy::send_file(
                    sock.as_fd(),
                    f.as_fd(),
                    range.start as u64,
                    range.len(),
                ) {
                    Err(e) if refused(&e) => {
                        self.fallback = Some(format!("the kernel refused sendfile: {e}"));
                        self.path = SendPath::Copy;
                        Ok(0)
                    }
                    r => r,
                }
            }
            SendPath::Pinned => {
                let r = match tcp_zerocopy::send_zerocopy(sock.as_fd(), &pattern[range]) {
                    Ok(n) => {
                        self.issued += u64::from(n > 0);
                        Ok(n)
                    }
                    Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) => {
                        std::thread::yield_now();
                        Ok(0)
                    }
                    r => r,
                };
                self.done += tcp_zerocopy::drain_send_completions(sock.as_fd());
                r
            }
        }
    }

    /// What the sender did, after a last look at the completions (`None` for `Off`).
    pub fn finish(mut self, mode: ZeroCopy, sock: &TcpStream) -> Option<ZcSendOutcome> {
        if mode == ZeroCopy::Off {
            return None;
        }
        // Completions of the last sends arrive once the peer has acknowledged them.
        let until = std::time::Instant::now() + POLL;
        while self.done.sends < self.issued && std::time::Instant::now() < until {
            let before = self.done.notifications;
            self.done += tcp_zerocopy::drain_send_completions(sock.as_fd());
            if self.done.notifications == before {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        }
        Some(ZcSendOutcome {
            path: match self.path {
                SendPath::Copy => "copy",
                SendPath::File(_) => "sendfile",
                SendPath::Pinned => "msg_zerocopy",
            },
            sends: self.done.sends,
            kernel_copied: self.done.copied,
            fallback: self.fallback,
        })
    }
}

#[cfg(test)]
mod tests {
    use std::net::TcpListener;

    use super::*;

    /// Sends `total` bytes (by `MSG_ZEROCOPY` if `zc_send`) to a receiver in `mode`.
    fn run(mode: ZeroCopy, zc_send: bool, total: usize) -> (ZcOutcome, u64) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let t = std::thread::spawn(move || {
            let mut s = TcpStream::connect(addr).unwrap();
            let block = vec![0x5au8; 128 << 10];
            let mode = if zc_send { ZeroCopy::On } else { ZeroCopy::Off };
            let mut tx = Sender::new(mode, &s, &block);
            let mut sent = 0;
            while sent < total {
                let n = (total - sent).min(block.len());
                sent += tx.write(&mut s, &block, 0..n).unwrap();
            }
        });
        let (rx, _) = l.accept().unwrap();
        let counters = StreamCounters::default();
        let stop = AtomicBool::new(false);
        let (_rx, out) = receive(mode, rx, &counters, &stop);
        t.join().unwrap();
        (out, counters.bytes.load(Ordering::Relaxed))
    }

    /// A MSG_ZEROCOPY sender's pages map (on loopback anywhere from a tenth to nearly all
    /// of them, run to run: how much maps depends on how the receiver's queue fills), and
    /// every byte is counted once, mapped or copied.
    #[test]
    fn zerocopy_sender_maps_and_counts_every_byte() {
        let total = 96 << 20;
        let (out, bytes) = run(ZeroCopy::On, true, total);
        assert_eq!(bytes, total as u64);
        assert_eq!(out.mapped + out.copied, total as u64);
        assert_eq!(out.path, "zerocopy", "{out:?}");
        assert!(out.mapped > 0, "{out:?}");
    }

    #[test]
    fn ordinary_sender_makes_auto_fall_back_and_says_why() {
        let total = 96 << 20;
        let (out, bytes) = run(ZeroCopy::Auto, false, total);
        assert_eq!(bytes, total as u64);
        assert_eq!(out.path, "copy");
        assert_eq!(out.mapped, 0);
        assert!(
            out.fallback
                .as_deref()
                .unwrap_or("")
                .contains("MSG_ZEROCOPY")
        );
    }

    /// Each sender path delivers the pattern's bytes intact and in order (sendfile from the
    /// in-memory file, pinned pages, the copy), and reports the path it took.
    #[test]
    fn every_send_path_delivers_the_pattern_intact() {
        use std::io::Read;
        let pattern: Vec<u8> = (0..(128u32 << 10)).map(|i| (i * 7 % 251) as u8).collect();
        for (mode, path) in [(ZeroCopy::Auto, "sendfile"), (ZeroCopy::On, "msg_zerocopy")] {
            let l = TcpListener::bind("127.0.0.1:0").unwrap();
            let addr = l.local_addr().unwrap();
            let p2 = pattern.clone();
            let t = std::thread::spawn(move || {
                let mut s = TcpStream::connect(addr).unwrap();
                let mut tx = Sender::new(mode, &s, &p2);
                // Three blocks, each written from an odd offset onwards too.
                for start in [0, 1000, 0] {
                    let mut off = start;
                    while off < p2.len() {
                        off += tx.write(&mut s, &p2, off..p2.len()).unwrap();
                    }
                }
                tx.finish(mode, &s).unwrap()
            });
            let (mut rx, _) = l.accept().unwrap();
            let mut got = Vec::new();
            rx.read_to_end(&mut got).unwrap();
            let out = t.join().unwrap();
            assert_eq!(out.path, path, "{out:?}");
            let want: Vec<u8> = [&pattern[..], &pattern[1000..], &pattern[..]].concat();
            assert!(
                got == want,
                "{mode:?}: {} bytes, want {}",
                got.len(),
                want.len()
            );
        }
    }

    #[test]
    fn on_keeps_zerocopy_even_when_little_maps() {
        let (out, bytes) = run(ZeroCopy::On, false, 80 << 20);
        assert_eq!(bytes, 80 << 20);
        assert_eq!(out.path, "zerocopy");
    }

    /// One timed run: (Gbit/s, CPU seconds per GB for both ends together).
    fn timed(recv: ZeroCopy, zc_send: bool, block: usize, secs: f64) -> (f64, f64) {
        use std::sync::Arc;
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = Arc::clone(&stop);
        let t = std::thread::spawn(move || {
            let mut s = TcpStream::connect(addr).unwrap();
            let b = vec![0x5au8; block];
            let mode = if zc_send { ZeroCopy::On } else { ZeroCopy::Off };
            let mut tx = Sender::new(mode, &s, &b);
            while !stop2.load(Ordering::Relaxed) {
                if tx.write(&mut s, &b, 0..b.len()).is_err() {
                    break;
                }
            }
        });
        let (rx, _) = l.accept().unwrap();
        let counters = StreamCounters::default();
        let cpu0 = linerate_sys::process::cpu_times().unwrap();
        let t0 = std::time::Instant::now();
        let stop3 = Arc::clone(&stop);
        let timer = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_secs_f64(secs));
            stop3.store(true, Ordering::Relaxed);
        });
        let stop_rx = AtomicBool::new(false);
        let rxs = std::thread::scope(|sc| {
            let h = sc.spawn(|| {
                if recv == ZeroCopy::Off {
                    let mut rx = rx;
                    let mut buf = vec![0u8; block.max(128 << 10)];
                    while !stop.load(Ordering::Relaxed) {
                        if read_some(&mut rx, &mut buf, &counters, &stop_rx).is_none() {
                            break;
                        }
                    }
                    rx
                } else {
                    let (rx, _) = receive(recv, rx, &counters, &stop);
                    rx
                }
            });
            h.join().unwrap()
        });
        let el = t0.elapsed().as_secs_f64();
        let cpu1 = linerate_sys::process::cpu_times().unwrap();
        drop(rxs);
        timer.join().unwrap();
        t.join().unwrap();
        let bytes = counters.bytes.load(Ordering::Relaxed) as f64;
        let cpu = (cpu1.user + cpu1.system).as_secs_f64() - (cpu0.user + cpu0.system).as_secs_f64();
        (bytes * 8.0 / el / 1e9, cpu / (bytes / 1e9))
    }

    fn median(mut v: Vec<f64>) -> f64 {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    }

    #[test]
    #[ignore = "benchmark: alternated loopback runs, prints medians"]
    fn bench_zerocopy_loopback() {
        let cases: [(&str, ZeroCopy, bool, usize); 6] = [
            ("copy/copy 128K", ZeroCopy::Off, false, 128 << 10),
            ("zc-send/copy 128K", ZeroCopy::Off, true, 128 << 10),
            ("zc-send/zc-recv 128K", ZeroCopy::On, true, 128 << 10),
            ("copy/copy 256K", ZeroCopy::Off, false, 256 << 10),
            ("copy/copy 1M", ZeroCopy::Off, false, 1 << 20),
            ("zc-send/zc-recv 1M", ZeroCopy::On, true, 1 << 20),
        ];
        let mut res = vec![(Vec::new(), Vec::new()); cases.len()];
        for _round in 0..5 {
            for (i, c) in cases.iter().enumerate() {
                let (g, c) = timed(c.1, c.2, c.3, 2.0);
                res[i].0.push(g);
                res[i].1.push(c);
            }
        }
        for (c, (g, cpu)) in cases.iter().zip(res) {
            eprintln!(
                "{:24} {:7.2} Gbit/s {:6.3} CPU s/GB   runs {:?}",
                c.0,
                median(g.clone()),
                median(cpu),
                g.iter()
                    .map(|x| (x * 10.0).round() / 10.0)
                    .collect::<Vec<_>>()
            );
        }
    }
}
