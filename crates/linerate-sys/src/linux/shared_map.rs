//! One shared read-write mapping of a kernel object's descriptor (a packet socket's TX ring, a
//! perf event's sample buffer): the one `mmap` call of the Linux backend.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::ptr::NonNull;

/// Maps `len` bytes of `fd` shared and read-write at an address the kernel chooses.
#[expect(unsafe_code)]
pub(crate) fn map_shared(fd: BorrowedFd<'_>, len: usize) -> io::Result<NonNull<u8>> {
    // SAFETY: a fresh shared mapping of the descriptor's kernel buffer; the kernel checks len
    // against the object it set up (ring size, 1 + 2^n perf pages). No existing
    // memory is affected: the kernel chooses the address.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            fd.as_raw_fd(),
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    NonNull::new(p.cast()).ok_or_else(|| io::Error::other("mmap returned null"))
}
