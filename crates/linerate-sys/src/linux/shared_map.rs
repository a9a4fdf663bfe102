//! One shared read-write mapping of a kernel object's descriptor (a packet socket's RX or TX
//! ring, a perf event's sample buffer): the one `mmap` and the one `munmap` of the Linux
//! backend.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::ptr::NonNull;

/// A shared mapping, unmapped when dropped.
#[derive(Debug)]
pub(crate) struct SharedMap {
    ptr: NonNull<u8>,
    len: usize,
}

impl SharedMap {
    /// Maps `len` bytes of `fd` shared and read-write.
    pub(crate) fn new(fd: BorrowedFd<'_>, len: usize) -> io::Result<SharedMap> {
        Ok(SharedMap {
            ptr: map_shared(fd, len)?,
            len,
        })
    }

    /// The start of the mapping.
    pub(crate) fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// Its length in bytes.
    pub(crate) fn len(&self) -> usize {
        self.len
    }
}

impl Drop for SharedMap {
    #[expect(unsafe_code)]
    fn drop(&mut self) {
        // SAFETY: ptr/len are exactly what mmap returned; the owner of this value holds no
        // borrow of the mapping once it is being dropped.
        unsafe {
            libc::munmap(self.ptr.as_ptr().cast(), self.len);
        }
    }
}

/// Maps `len` bytes of `fd` shared and read-write at an address the kernel chooses.
#[expect(unsafe_code)]
fn map_shared(fd: BorrowedFd<'_>, len: usize) -> io::Result<NonNull<u8>> {
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
