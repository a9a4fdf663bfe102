//! Bulk TCP sender and receiver loops.

use std::io::Read;
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::flow::pacing::Pacer;
use crate::flow::zerocopy::{ZcOutcome, ZcSendOutcome, ZcStream};
use crate::flow::{Budget, POLL, StreamCounters, StreamSpec, is_retry, pattern};

/// How long a stopped sender may take to finish the block it started.
const FINISH_BLOCK: std::time::Duration = std::time::Duration::from_secs(2);

/// Sends `spec.len`-byte blocks until stopped or the budget is spent. A block once started is
/// finished even after the stop: iperf3 reads whole blocks with a blocking read, so a torn
/// block would leave it waiting for bytes that never come. Returns the socket so the caller
/// decides when the peer sees it close.
pub fn send(
    spec: &StreamSpec,
    mut sock: TcpStream,
    counters: &StreamCounters,
    stop: &AtomicBool,
    budget: Option<&Budget>,
) -> TcpStream {
    let _ = sock.set_write_timeout(Some(POLL));
    let buf = pattern(spec.len.max(1));
    let mut out = Writer::new(spec, &sock, &buf);
    let pacer = Pacer::new(spec.rate_bps, spec.pacing_timer);
    let mut sent: u64 = 0;
    // Bytes of the current block written so far, and the block's size.
    let mut off = 0usize;
    let mut block = 0usize;
    let mut stopped_at: Option<std::time::Instant> = None;
    loop {
        if off == 0 {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            let want = buf.len() as u64;
            block = match budget {
                Some(b) => match b.take(want) {
                    0 => break,
                    g => g as usize,
                },
                None => buf.len(),
            };
            if let Some(p) = &pacer {
                p.wait(sent, stop);
            }
        } else if stop.load(Ordering::Relaxed) {
            let t = *stopped_at.get_or_insert_with(std::time::Instant::now);
            if t.elapsed() > FINISH_BLOCK {
                break;
            }
        }
        match out.write(&mut sock, &buf, off..block) {
            Ok(0) => {}
            Ok(n) => {
                sent += n as u64;
                counters.bytes.fetch_add(n as u64, Ordering::Relaxed);
                off += n;
                if off >= block {
                    off = 0;
                }
            }
            Err(e) if is_retry(&e) => {}
            Err(_) => {
                if !stop.load(Ordering::Relaxed) {
                    counters.failed.store(true, Ordering::Relaxed);
                }
                break;
            }
        }
    }
    if let Some(b) = budget
        && off > 0
    {
        b.give_back((block - off) as u64);
    }
    out.finish(spec, &sock);
    sock
}

/// The sender's write path: [`super::tcp_zc::Sender`] when `--zerocopy` asks (Linux), else a
/// plain write. `Ok(0)` means "try again".
enum Writer {
    Copy,
    #[cfg(target_os = "linux")]
    ZeroCopy(super::tcp_zc::Sender),
}

impl Writer {
    fn new(spec: &StreamSpec, sock: &TcpStream, pattern: &[u8]) -> Writer {
        #[cfg(target_os = "linux")]
        if spec.work.zerocopy != crate::config::ZeroCopy::Off {
            return Writer::ZeroCopy(super::tcp_zc::Sender::new(
                spec.work.zerocopy,
                sock,
                pattern,
            ));
        }
        let _ = (spec, sock, pattern);
        Writer::Copy
    }

    fn write(
        &mut self,
        sock: &mut TcpStream,
        pattern: &[u8],
        range: std::ops::Range<usize>,
    ) -> std::io::Result<usize> {
        match self {
            Writer::Copy => crate::flow::write_copy(sock, &pattern[range]),
            #[cfg(target_os = "linux")]
            Writer::ZeroCopy(z) => z.write(sock, pattern, range),
        }
    }

    /// Leaves what the zero-copy path did in the stream's report.
    fn finish(self, spec: &StreamSpec, sock: &TcpStream) {
        let send = match self {
            #[cfg(target_os = "linux")]
            Writer::ZeroCopy(z) => z.finish(spec.work.zerocopy, sock),
            Writer::Copy => unsupported(spec).map(|fallback| ZcSendOutcome {
                path: "copy",
                fallback: Some(fallback),
                ..ZcSendOutcome::default()
            }),
        };
        let _ = sock;
        if send.is_some() {
            spec.work.store_zerocopy(ZcStream {
                send,
                receive: None,
            });
        }
    }
}

/// Why `--zerocopy` cannot be had here (`None` when it was not asked for or can be).
fn unsupported(spec: &StreamSpec) -> Option<String> {
    (spec.work.zerocopy != crate::config::ZeroCopy::Off && !cfg!(target_os = "linux"))
        .then(|| "zero-copy TCP (MSG_ZEROCOPY, TCP_ZEROCOPY_RECEIVE) is Linux-only".to_owned())
}

/// Reads until stopped or the peer closes.
pub fn receive(
    spec: &StreamSpec,
    mut sock: TcpStream,
    counters: &StreamCounters,
    stop: &AtomicBool,
) -> TcpStream {
    #[cfg(target_os = "linux")]
    if spec.work.zerocopy != crate::config::ZeroCopy::Off {
        let (sock, got) = super::tcp_zc::receive(spec.work.zerocopy, sock, counters, stop);
        spec.work.store_zerocopy(ZcStream {
            receive: Some(got),
            send: None,
        });
        return sock;
    }
    if let Some(fallback) = unsupported(spec) {
        spec.work.store_zerocopy(ZcStream {
            receive: Some(ZcOutcome {
                path: "copy",
                fallback: Some(fallback),
                ..ZcOutcome::default()
            }),
            send: None,
        });
    }
    let _ = sock.set_read_timeout(Some(POLL));
    let mut buf = vec![0u8; spec.len.clamp(64 * 1024, 1024 * 1024)];
    while !stop.load(Ordering::Relaxed) {
        match sock.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                counters.bytes.fetch_add(n as u64, Ordering::Relaxed);
            }
            Err(e) if is_retry(&e) => {}
            Err(_) => {
                if !stop.load(Ordering::Relaxed) {
                    counters.failed.store(true, Ordering::Relaxed);
                }
                break;
            }
        }
    }
    sock
}
