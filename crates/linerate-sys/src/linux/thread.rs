//! Per-thread settings.

use std::io;
use std::time::Duration;

/// Sets the calling thread's timer slack, how late the kernel may wake it from a sleep or a
/// poll timeout to batch wake-ups (default 50 µs): a link emulator releasing frames on time
/// wants it small.
pub fn set_timer_slack(slack: Duration) -> io::Result<()> {
    let ns = libc::c_ulong::try_from(slack.as_nanos()).unwrap_or(libc::c_ulong::MAX);
    // Zero would mean "back to the default", not "no slack"; one nanosecond is the least.
    nix::sys::prctl::set_timerslack(ns.max(1)).map_err(io::Error::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slack_is_set_for_this_thread_only() {
        std::thread::scope(|s| {
            s.spawn(|| {
                set_timer_slack(Duration::from_micros(1)).unwrap();
                assert_eq!(nix::sys::prctl::get_timerslack().unwrap(), 1_000);
            })
            .join()
            .unwrap();
        });
    }
}
