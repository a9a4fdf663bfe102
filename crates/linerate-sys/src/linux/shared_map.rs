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
        Self::new_at(fd, len, 0)
    }

    /// Maps `len` bytes of `fd` shared and read-write from `offset` (the kernel's way of
    /// naming one of several rings of a socket, as AF_XDP does).
    pub(crate) fn new_at(fd: BorrowedFd<'_>, len: usize, offset: i64) -> io::Result<SharedMap> {
        Ok(SharedMap {
            ptr: map(Some(fd), len, offset)?,
            len,
        })
    }

    /// `len` bytes of fresh zeroed memory, page-aligned, that may be shared with the kernel
    /// by registering it (an AF_XDP UMEM).
    pub(crate) fn anonymous(len: usize) -> io::Result<SharedMap> {
        Ok(SharedMap {
            ptr: map(None, len, 0)?,
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

/// Maps `len` bytes of `fd` (from `offset`), or anonymous memory when `fd` is None, shared
/// and read-write at an address the kernel chooses.
#[expect(unsafe_code)]
fn map(fd: Option<BorrowedFd<'_>>, len: usize, offset: i64) -> io::Result<NonNull<u8>> {
    let (flags, raw) = match fd {
        Some(fd) => (libc::MAP_SHARED, fd.as_raw_fd()),
        None => (libc::MAP_SHARED | libc::MAP_ANONYMOUS, -1),
    };
    // SAFETY: a fresh shared mapping of the descriptor's kernel buffer (or of new anonymous
    // memory); the kernel checks len and offset against the object it set up (ring size,
    // 1 + 2^n perf pages, an AF_XDP ring). No existing memory is affected: the kernel chooses
    // the address.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            flags,
            raw,
            offset,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    NonNull::new(p.cast()).ok_or_else(|| io::Error::other("mmap returned null"))
}
