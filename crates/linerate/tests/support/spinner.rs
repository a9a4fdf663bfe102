//! A busy thread of the test pinned to CPU 0, so that whatever else is pinned there (a
//! receiver's stream thread) gets about half the core: the "busy loop beside the receiver"
//! of the limit tests. It stops when dropped, and after 30 s whatever happens.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The busy thread; stopped and joined on drop.
pub struct Spinner {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Spinner {
    /// `None` on a one-CPU host, or where the thread cannot be pinned.
    pub fn start() -> Option<Spinner> {
        if linerate_sys::affinity::allowed_cpus().len() < 2 {
            return None;
        }
        let stop = Arc::new(AtomicBool::new(false));
        let (pinned_tx, pinned) = std::sync::mpsc::channel();
        let flag = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            let ok = linerate_sys::affinity::pin_current_thread(0).is_ok();
            let _ = pinned_tx.send(ok);
            let end = Instant::now() + Duration::from_secs(30);
            while ok && !flag.load(Ordering::Relaxed) && Instant::now() < end {
                std::hint::spin_loop();
            }
        });
        let spinner = Spinner {
            stop,
            thread: Some(thread),
        };
        pinned.recv().unwrap_or(false).then_some(spinner)
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
