//! The one rule for stop signals, in every long-running command (client, server, `nic
//! --watch`, `lab run`, `logdist`, `stat` on a pipe): SIGINT (Ctrl-C) and SIGTERM end the work
//! cleanly, the summary so far is printed, a partial run is stored only marked partial, and the
//! exit status is 128 + the signal: 130 after SIGINT, 143 after SIGTERM.

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Context;
use linerate_sys::signal::{self, Signal};

/// Flags raised by SIGINT and SIGTERM once [`Stop::install`] ran.
#[derive(Debug, Clone)]
pub struct Stop {
    any: Arc<AtomicBool>,
    int: Arc<AtomicBool>,
    term: Arc<AtomicBool>,
}

impl Stop {
    /// Catches SIGINT and SIGTERM from now on: they raise flags instead of killing.
    pub fn install() -> anyhow::Result<Stop> {
        let stop = Stop {
            any: Arc::new(AtomicBool::new(false)),
            int: Arc::new(AtomicBool::new(false)),
            term: Arc::new(AtomicBool::new(false)),
        };
        signal::set_flag_on(&[Signal::SIGINT, Signal::SIGTERM], &stop.any)
            .and_then(|()| signal::set_flag_on(&[Signal::SIGINT], &stop.int))
            .and_then(|()| signal::set_flag_on(&[Signal::SIGTERM], &stop.term))
            .context("installing the signal handlers")?;
        Ok(stop)
    }

    /// The flag the work polls (set by either signal).
    pub fn flag(&self) -> &Arc<AtomicBool> {
        &self.any
    }

    /// Whether a stop was asked for.
    pub fn requested(&self) -> bool {
        self.any.load(Ordering::Relaxed)
    }

    /// Sleeps until `at`, waking early when a stop is asked for; `false` then.
    pub fn sleep_until(&self, at: std::time::Instant) -> bool {
        const TICK: std::time::Duration = std::time::Duration::from_millis(50);
        loop {
            if self.requested() {
                return false;
            }
            let left = at.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return true;
            }
            std::thread::sleep(left.min(TICK));
        }
    }

    /// The signal that asked (SIGTERM wins when both came).
    pub fn signal(&self) -> Option<Signal> {
        if self.term.load(Ordering::Relaxed) {
            Some(Signal::SIGTERM)
        } else if self.int.load(Ordering::Relaxed) {
            Some(Signal::SIGINT)
        } else {
            None
        }
    }
}

/// The exit status after `signal`: 128 + its number (130 for SIGINT, 143 for SIGTERM).
pub fn exit_code(signal: Signal) -> ExitCode {
    ExitCode::from(u8::try_from(128 + signal as i32).unwrap_or(130))
}

/// `signal`'s name, `SIGINT`.
pub fn name(signal: Signal) -> &'static str {
    signal.as_str()
}

/// The signal with number `n` (what the lab runner reports), SIGINT when unknown.
#[cfg(target_os = "linux")]
pub fn from_number(n: i32) -> Signal {
    Signal::try_from(n).unwrap_or(Signal::SIGINT)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_are_128_plus_the_signal() {
        assert_eq!(exit_code(Signal::SIGINT), ExitCode::from(130));
        assert_eq!(exit_code(Signal::SIGTERM), ExitCode::from(143));
        assert_eq!(name(Signal::SIGTERM), "SIGTERM");
        #[cfg(target_os = "linux")]
        assert_eq!(name(from_number(15)), "SIGTERM");
    }
}
