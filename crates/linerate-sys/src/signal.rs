//! Signals, two ways. Long critical sections (building a lab, an experiment's runs) *block* the
//! stop signals and poll for a pending one at safe points ([`Blocked`], [`take_pending`]), so
//! Ctrl-C never interrupts half a netlink transaction; processes started meanwhile get the mask
//! undone ([`unblock`]). Long loops that only need to notice a stop (server, client) set a flag
//! from the handler instead ([`set_flag_on`], through signal-hook).
//!
//! Masks go through nix; `sigtimedwait` (not in nix) is the one hand-written call.

use std::io;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use nix::sys::signal::{SigSet, SigmaskHow};

pub use nix::sys::signal::Signal;

/// The signals that stop linerate's long operations: Ctrl-C, kill, hang-up.
pub const STOP_SIGNALS: [Signal; 3] = [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP];

fn set_of(signals: &[Signal]) -> SigSet {
    let mut set = SigSet::empty();
    for &s in signals {
        set.add(s);
    }
    set
}

/// Signals blocked for the calling thread (and threads and processes it starts afterwards);
/// dropping the guard restores the mask that was in force before.
#[derive(Debug)]
pub struct Blocked {
    old: Option<SigSet>,
}

impl Blocked {
    /// Blocks `signals` until the guard is dropped.
    pub fn new(signals: &[Signal]) -> Blocked {
        // pthread_sigmask fails only for an invalid `how`; should it fail anyway, nothing was
        // blocked and there is nothing to restore.
        let old = set_of(signals).thread_swap_mask(SigmaskHow::SIG_BLOCK).ok();
        Blocked { old }
    }
}

impl Drop for Blocked {
    fn drop(&mut self) {
        if let Some(old) = &self.old {
            let _ = old.thread_set_mask();
        }
    }
}

/// Unblocks `signals` for the calling thread (a child that must die on Ctrl-C although its
/// parent blocked it while starting it).
pub fn unblock(signals: &[Signal]) -> io::Result<()> {
    set_of(signals).thread_unblock().map_err(io::Error::from)
}

/// Takes one pending (blocked) signal among `signals`, without waiting; `None` when none is
/// pending.
#[expect(unsafe_code)]
pub fn take_pending(signals: &[Signal]) -> Option<Signal> {
    let set = set_of(signals);
    let zero = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `set` is a valid, initialised sigset_t borrowed for the call (SigSet is a
    // transparent wrapper and `as_ref` hands out its sigset_t); `zero` is a valid timespec on
    // this frame; a null siginfo pointer asks for no details.
    let sig = unsafe { libc::sigtimedwait(set.as_ref(), std::ptr::null_mut(), &raw const zero) };
    if sig > 0 {
        Signal::try_from(sig).ok()
    } else {
        None
    }
}

/// Sets `flag` whenever one of `signals` arrives (the flag is never cleared by this crate).
pub fn set_flag_on(signals: &[Signal], flag: &Arc<AtomicBool>) -> io::Result<()> {
    for &s in signals {
        signal_hook::flag::register(s as libc::c_int, Arc::clone(flag))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;

    /// Signals are process-wide; each test uses its own otherwise unused one
    /// and runs on a thread of its own so a blocked mask never leaks into other tests.
    fn on_thread<T: Send>(f: impl FnOnce() -> T + Send) -> T {
        std::thread::scope(|s| s.spawn(f).join().unwrap())
    }

    #[test]
    fn a_blocked_signal_waits_until_taken() {
        on_thread(|| {
            let guard = Blocked::new(&[Signal::SIGUSR1]);
            assert_eq!(take_pending(&[Signal::SIGUSR1]), None);
            // raise(3) directs the signal at the calling thread, which blocks it.
            nix::sys::signal::raise(Signal::SIGUSR1).unwrap();
            assert_eq!(take_pending(&[Signal::SIGUSR1]), Some(Signal::SIGUSR1));
            assert_eq!(take_pending(&[Signal::SIGUSR1]), None);
            drop(guard);
            let mask = SigSet::thread_get_mask().unwrap();
            assert!(!mask.contains(Signal::SIGUSR1), "the old mask is back");
        });
    }

    #[test]
    fn unblock_undoes_an_inherited_block() {
        on_thread(|| {
            let _guard = Blocked::new(&[Signal::SIGUSR2]);
            assert!(SigSet::thread_get_mask().unwrap().contains(Signal::SIGUSR2));
            unblock(&[Signal::SIGUSR2]).unwrap();
            assert!(!SigSet::thread_get_mask().unwrap().contains(Signal::SIGUSR2));
        });
    }

    #[test]
    fn a_flag_is_set_by_its_signal() {
        let flag = Arc::new(AtomicBool::new(false));
        set_flag_on(&[Signal::SIGWINCH], &flag).unwrap();
        nix::sys::signal::raise(Signal::SIGWINCH).unwrap();
        assert!(flag.load(Ordering::SeqCst));
    }
}
