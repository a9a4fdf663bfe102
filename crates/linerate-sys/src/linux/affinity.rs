//! CPU affinity of threads (nix's `sched_setaffinity`/`sched_getaffinity`) and where a thread
//! runs now (`sched_getcpu`).

use std::io;

use nix::sched::{CpuSet, sched_getaffinity, sched_getcpu, sched_setaffinity};
use nix::unistd::Pid;

/// The most CPUs an affinity mask can name (`CPU_SETSIZE`); CPU numbers are below it.
pub const MAX_CPUS: usize = libc::CPU_SETSIZE as usize;

/// The calling thread, for the sched_* calls.
fn this_thread() -> Pid {
    Pid::from_raw(0)
}

/// CPUs the calling thread may run on, lowest first (empty when the kernel does not say).
pub fn allowed_cpus() -> Vec<usize> {
    match sched_getaffinity(this_thread()) {
        Ok(set) => (0..CpuSet::count())
            .filter(|&c| set.is_set(c).unwrap_or(false))
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// Pins the calling thread to `cpu`.
pub fn pin_current_thread(cpu: usize) -> io::Result<()> {
    let mut set = CpuSet::new();
    set.set(cpu).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("CPU {cpu} is beyond the {MAX_CPUS} CPUs Linux can address"),
        )
    })?;
    sched_setaffinity(this_thread(), &set).map_err(io::Error::from)
}

/// Pins the calling thread to any of `cpus` (the kernel picks among them).
pub fn set_allowed_cpus(cpus: &[usize]) -> io::Result<()> {
    let mut set = CpuSet::new();
    for &cpu in cpus {
        set.set(cpu).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("CPU {cpu} is beyond the {MAX_CPUS} CPUs Linux can address"),
            )
        })?;
    }
    sched_setaffinity(this_thread(), &set).map_err(io::Error::from)
}

/// The CPU the calling thread is running on now.
pub fn current_cpu() -> Option<usize> {
    sched_getcpu().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pinning_round_trips_and_restores() {
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
        // The test thread itself was never touched.
        assert_eq!(allowed_cpus(), allowed);
    }

    #[test]
    fn impossible_cpus_are_refused_with_the_limit() {
        let err = pin_current_thread(MAX_CPUS).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert!(err.to_string().contains(&MAX_CPUS.to_string()), "{err}");
        assert!(set_allowed_cpus(&[0, MAX_CPUS + 5]).is_err());
    }
}
