//! Process CPU time, for iperf3's `cpu_utilization_percent`.

use std::time::Instant;

/// CPU time and wall time at one instant.
#[derive(Debug, Clone, Copy)]
pub struct CpuSnapshot {
    wall: Instant,
    user_us: u64,
    system_us: u64,
}

/// CPU use between two snapshots, in percent of one core (as iperf3).
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CpuUtil {
    /// User + system.
    pub total: f64,
    /// User.
    pub user: f64,
    /// System.
    pub system: f64,
}

impl CpuSnapshot {
    /// Now.
    pub fn now() -> CpuSnapshot {
        let (user_us, system_us) = rusage_self().unwrap_or((0, 0));
        CpuSnapshot {
            wall: Instant::now(),
            user_us,
            system_us,
        }
    }

    /// Utilisation from `self` to `later`.
    pub fn until(&self, later: &CpuSnapshot) -> CpuUtil {
        let wall = later.wall.duration_since(self.wall).as_micros() as f64;
        if wall <= 0.0 {
            return CpuUtil::default();
        }
        let user = later.user_us.saturating_sub(self.user_us) as f64 / wall * 100.0;
        let system = later.system_us.saturating_sub(self.system_us) as f64 / wall * 100.0;
        CpuUtil {
            total: user + system,
            user,
            system,
        }
    }
}

fn rusage_self() -> Option<(u64, u64)> {
    let t = linerate_sys::process::cpu_times().ok()?;
    let us = |d: std::time::Duration| u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
    Some((us(t.user), us(t.system)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_loop_shows_user_time() {
        let a = CpuSnapshot::now();
        let mut x = 0u64;
        let t = Instant::now();
        while t.elapsed().as_millis() < 50 {
            x = x.wrapping_mul(31).wrapping_add(7);
        }
        std::hint::black_box(x);
        let u = a.until(&CpuSnapshot::now());
        assert!(u.total > 10.0, "{u:?}");
        assert!((u.total - u.user - u.system).abs() < 1e-9);
    }
}
