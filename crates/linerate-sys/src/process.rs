//! The calling process: who it runs as, signalling others, how much CPU it used.

use std::io;
use std::time::Duration;

use nix::sys::resource::{UsageWho, getrusage};
use nix::unistd::{Pid, geteuid};

use crate::signal::Signal;

/// The effective user id.
pub fn euid() -> u32 {
    geteuid().as_raw()
}

/// Whether the process runs as root (effective uid 0).
pub fn is_root() -> bool {
    geteuid().is_root()
}

/// Sends `signal` to process `pid`.
pub fn kill(pid: u32, signal: Signal) -> io::Result<()> {
    let pid = i32::try_from(pid).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("process id {pid} is out of range"),
        )
    })?;
    nix::sys::signal::kill(Pid::from_raw(pid), signal).map_err(io::Error::from)
}

/// CPU time the process has used so far, all threads together.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CpuTimes {
    /// Time spent running user code.
    pub user: Duration,
    /// Time spent in the kernel on the process's behalf.
    pub system: Duration,
}

/// The process's CPU times (`getrusage(RUSAGE_SELF)`).
pub fn cpu_times() -> io::Result<CpuTimes> {
    let usage = getrusage(UsageWho::RUSAGE_SELF).map_err(io::Error::from)?;
    let span = |tv: nix::sys::time::TimeVal| {
        let secs = u64::try_from(tv.tv_sec()).unwrap_or(0);
        let micros = u64::try_from(tv.tv_usec()).unwrap_or(0);
        Duration::from_secs(secs) + Duration::from_micros(micros)
    };
    Ok(CpuTimes {
        user: span(usage.user_time()),
        system: span(usage.system_time()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    #[test]
    fn euid_matches_the_id_command() {
        let out = Command::new("id").arg("-u").output().unwrap();
        let id: u32 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
        assert_eq!(euid(), id);
        assert_eq!(is_root(), id == 0);
    }

    #[test]
    fn kill_reaches_a_child_and_refuses_bad_pids() {
        let mut child = Command::new("sleep").arg("30").spawn().unwrap();
        kill(child.id(), Signal::SIGKILL).unwrap();
        let status = child.wait().unwrap();
        assert!(!status.success());
        assert!(kill(u32::MAX, Signal::SIGKILL).is_err());
    }

    #[test]
    fn busy_work_shows_as_user_time() {
        let before = cpu_times().unwrap();
        let start = std::time::Instant::now();
        let mut x = 0u64;
        while start.elapsed() < Duration::from_millis(60) {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
        }
        let after = cpu_times().unwrap();
        assert!(after.user + after.system > before.user + before.system);
        assert!(after.user >= before.user);
    }
}
