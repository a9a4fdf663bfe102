//! What the kernel says of its own clock: whether a time daemon (chrony, ntpd, ptp4l with
//! phc2sys) keeps it synchronised, and its error estimates (`adjtimex(2)` read with no mode
//! set), and which boot of the kernel this is (`/proc/sys/kernel/random/boot_id`, the same in
//! every network namespace of one kernel: two processes with the same boot id read one clock).

use std::io;

/// The kernel clock's discipline, as `adjtimex(2)` reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelClock {
    /// A daemon keeps the clock synchronised: neither `STA_UNSYNC` in the status nor
    /// `TIME_ERROR` as the clock state.
    pub synchronised: bool,
    /// The daemon's estimated error, microseconds (`esterror`).
    pub est_error_us: i64,
    /// The largest error the kernel allows for, microseconds (`maxerror`; 16 s when nothing
    /// disciplines the clock).
    pub max_error_us: i64,
}

/// Reads the clock's discipline without changing anything (`modes` = 0).
#[expect(unsafe_code)]
pub fn kernel_clock() -> io::Result<KernelClock> {
    // SAFETY: `timex` is plain data, so all zeroes is a valid value; with `modes` 0 adjtimex
    // only writes the current values into the struct it is given, which lives for the call.
    let (state, tx) = unsafe {
        let mut tx: libc::timex = std::mem::zeroed();
        let state = libc::adjtimex(&raw mut tx);
        (state, tx)
    };
    if state < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(KernelClock {
        synchronised: state != libc::TIME_ERROR && tx.status & libc::STA_UNSYNC == 0,
        est_error_us: tx.esterror,
        max_error_us: tx.maxerror,
    })
}

/// This kernel's boot id (`/proc/sys/kernel/random/boot_id`), trimmed.
pub fn boot_id() -> io::Result<String> {
    Ok(std::fs::read_to_string("/proc/sys/kernel/random/boot_id")?
        .trim()
        .to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_and_the_boot_read() {
        let c = kernel_clock().expect("adjtimex");
        assert!(c.max_error_us >= 0 && c.est_error_us >= 0, "{c:?}");
        let id = boot_id().expect("boot id");
        assert_eq!(id.len(), 36, "{id}");
        assert_eq!(boot_id().expect("again"), id);
    }
}
