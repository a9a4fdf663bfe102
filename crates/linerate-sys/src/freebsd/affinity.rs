//! CPU affinity of threads through `cpuset_getaffinity(2)`/`cpuset_setaffinity(2)` on the
//! calling thread (`CPU_LEVEL_WHICH`, `CPU_WHICH_TID`, id -1), and where it runs now
//! (`sched_getcpu(3)`, FreeBSD 13 and later). Same functions as the Linux backend.
//!
//! The mask is 1024 bits, FreeBSD 14's `CPU_SETSIZE`; FreeBSD 13 (256) accepts a larger mask
//! as long as the bits beyond its own size are clear, so one size serves both. The libc crate
//! describes `cpuset_t` with FreeBSD 12's 256 bits, hence a buffer of our own.

use std::io;

/// The most CPUs an affinity mask can name; CPU numbers are below it.
pub const MAX_CPUS: usize = 1024;

/// Bits per word of the kernel's bitset (`long`).
const WORD_BITS: usize = libc::c_ulong::BITS as usize;
/// Words in the mask.
const WORDS: usize = MAX_CPUS / WORD_BITS;

type Mask = [libc::c_ulong; WORDS];

fn beyond(cpu: usize) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("CPU {cpu} is beyond the {MAX_CPUS} CPUs FreeBSD can address"),
    )
}

fn mask_of(cpus: &[usize]) -> io::Result<Mask> {
    let mut mask: Mask = [0; WORDS];
    for &cpu in cpus {
        if cpu >= MAX_CPUS {
            return Err(beyond(cpu));
        }
        mask[cpu / WORD_BITS] |= 1 << (cpu % WORD_BITS);
    }
    Ok(mask)
}

#[expect(unsafe_code)]
fn get_mask() -> io::Result<Mask> {
    let mut mask: Mask = [0; WORDS];
    // SAFETY: `mask` is writable for size_of::<Mask>() bytes, the size passed; the kernel
    // writes at most that many. Id -1 with CPU_WHICH_TID is the calling thread.
    let rc = unsafe {
        libc::cpuset_getaffinity(
            libc::CPU_LEVEL_WHICH,
            libc::CPU_WHICH_TID,
            -1,
            std::mem::size_of::<Mask>(),
            mask.as_mut_ptr().cast(),
        )
    };
    if rc == 0 {
        Ok(mask)
    } else {
        Err(io::Error::last_os_error())
    }
}

#[expect(unsafe_code)]
fn set_mask(mask: &Mask) -> io::Result<()> {
    // SAFETY: `mask` is readable for size_of::<Mask>() bytes, the size passed; the kernel
    // only reads it. Id -1 with CPU_WHICH_TID is the calling thread.
    let rc = unsafe {
        libc::cpuset_setaffinity(
            libc::CPU_LEVEL_WHICH,
            libc::CPU_WHICH_TID,
            -1,
            std::mem::size_of::<Mask>(),
            mask.as_ptr().cast(),
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// CPUs the calling thread may run on, lowest first (empty when the kernel does not say).
pub fn allowed_cpus() -> Vec<usize> {
    match get_mask() {
        Ok(mask) => (0..MAX_CPUS)
            .filter(|&c| mask[c / WORD_BITS] & (1 << (c % WORD_BITS)) != 0)
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// Pins the calling thread to `cpu`.
pub fn pin_current_thread(cpu: usize) -> io::Result<()> {
    set_mask(&mask_of(&[cpu])?)
}

/// Pins the calling thread to any of `cpus` (the scheduler picks among them).
pub fn set_allowed_cpus(cpus: &[usize]) -> io::Result<()> {
    set_mask(&mask_of(cpus)?)
}

/// The CPU the calling thread is running on now.
#[expect(unsafe_code)]
pub fn current_cpu() -> Option<usize> {
    // SAFETY: sched_getcpu takes no arguments and only returns a number (-1 on failure).
    let cpu = unsafe { libc::sched_getcpu() };
    usize::try_from(cpu).ok()
}

// Run on FreeBSD only; type-checked on Linux by CI's FreeBSD clippy step.
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pinning_round_trips_on_a_thread_of_its_own() {
        let allowed = allowed_cpus();
        assert!(!allowed.is_empty());
        std::thread::scope(|s| {
            s.spawn(|| {
                let last = *allowed.last().unwrap();
                pin_current_thread(last).unwrap();
                assert_eq!(allowed_cpus(), vec![last]);
                assert_eq!(current_cpu(), Some(last));
                set_allowed_cpus(&allowed).unwrap();
                assert_eq!(allowed_cpus(), allowed);
            })
            .join()
            .unwrap();
        });
        assert_eq!(allowed_cpus(), allowed);
        assert_eq!(
            pin_current_thread(MAX_CPUS).unwrap_err().kind(),
            io::ErrorKind::InvalidInput
        );
    }
}
