//! `--zerocopy` for bulk TCP senders: `sendfile(2)` from an in-memory file (memfd) holding the
//! pattern, so the kernel sends page references instead of copying each write from user
//! memory. (MSG_ZEROCOPY was the other candidate; on loopback and veth the kernel copies such
//! data anyway before delivery, and its completion notifications cost a system call each.)

use std::fs::File;
use std::io::Write;
use std::net::TcpStream;
use std::os::fd::{AsRawFd, FromRawFd};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::stream::{Budget, POLL, StreamCounters, StreamSpec, is_retry};

/// An anonymous in-memory file of `len` pattern bytes.
fn memfd(len: usize) -> std::io::Result<File> {
    // SAFETY: the name is a NUL-terminated literal; memfd_create returns a new descriptor or -1.
    #[expect(unsafe_code)]
    let fd = unsafe { libc::memfd_create(c"linerate-zerocopy".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `fd` was just returned by memfd_create and is owned by nothing else.
    #[expect(unsafe_code)]
    let mut f = unsafe { File::from_raw_fd(fd) };
    f.write_all(&crate::stream::tcp::pattern(len))?;
    Ok(f)
}

fn sendfile(sock: &TcpStream, file: &File, count: usize) -> std::io::Result<usize> {
    let mut off: libc::off_t = 0;
    // SAFETY: both descriptors are open for the duration of the call (borrowed), `off` is a
    // valid off_t on this frame, and sendfile reads at most `count` bytes of the file.
    #[expect(unsafe_code)]
    let n = unsafe { libc::sendfile(sock.as_raw_fd(), file.as_raw_fd(), &mut off, count) };
    if n < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// Sends `spec.len`-byte blocks with sendfile until stopped or the budget is spent; falls back
/// to ordinary writes when no memfd can be made.
pub fn send(
    spec: &StreamSpec,
    sock: TcpStream,
    counters: &StreamCounters,
    stop: &AtomicBool,
    budget: Option<&Budget>,
) -> TcpStream {
    let len = spec.len.max(1);
    let Ok(file) = memfd(len) else {
        return crate::stream::tcp::send(spec, sock, counters, stop, budget);
    };
    let _ = sock.set_write_timeout(Some(POLL));
    let pacer = crate::stream::pacing::Pacer::new(spec.rate_bps, spec.pacing_timer);
    let mut sent = 0u64;
    while !stop.load(Ordering::Relaxed) {
        let granted = match budget {
            Some(b) => match b.take(len as u64) {
                0 => break,
                g => g,
            },
            None => len as u64,
        };
        if let Some(p) = &pacer {
            p.wait(sent, stop);
        }
        match sendfile(&sock, &file, granted as usize) {
            Ok(0) => break,
            Ok(n) => {
                sent += n as u64;
                counters.bytes.fetch_add(n as u64, Ordering::Relaxed);
                if let Some(b) = budget {
                    b.give_back(granted - n as u64);
                }
            }
            Err(e) => {
                if let Some(b) = budget {
                    b.give_back(granted);
                }
                if is_retry(&e) {
                    continue;
                }
                if !stop.load(Ordering::Relaxed) {
                    counters.failed.store(true, Ordering::Relaxed);
                }
                break;
            }
        }
    }
    sock
}
