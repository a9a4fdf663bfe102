//! One test at a time on a host, in either role: the gate a measurement agent shares between
//! its server (a test arriving while the gate is taken is refused as busy, which an iperf3 or
//! linerate client reads as "the server is busy") and its own scheduled client tests, so two
//! throughput tests never share the host's links and CPUs and spoil each other's figures.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// The gate. Cloning the `Arc` shares it.
#[derive(Debug, Default)]
pub struct TestGate {
    taken: AtomicBool,
}

/// Holds the gate until dropped.
#[derive(Debug)]
pub struct GateGuard {
    gate: Arc<TestGate>,
}

impl TestGate {
    /// A new, open gate.
    pub fn new() -> Arc<TestGate> {
        Arc::new(TestGate::default())
    }

    /// Takes the gate, unless a test holds it.
    pub fn try_take(gate: &Arc<TestGate>) -> Option<GateGuard> {
        gate.taken
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Relaxed)
            .ok()
            .map(|_| GateGuard {
                gate: Arc::clone(gate),
            })
    }

    /// Whether a test holds it now.
    pub fn is_taken(&self) -> bool {
        self.taken.load(Ordering::Acquire)
    }
}

impl Drop for GateGuard {
    fn drop(&mut self) {
        self.gate.taken.store(false, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_holder_at_a_time_and_released_on_drop() {
        let g = TestGate::new();
        let a = TestGate::try_take(&g).expect("open");
        assert!(g.is_taken());
        assert!(TestGate::try_take(&g).is_none());
        drop(a);
        assert!(!g.is_taken());
        assert!(TestGate::try_take(&g).is_some());
    }
}
