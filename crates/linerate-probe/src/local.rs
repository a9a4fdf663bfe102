//! The host linerate runs on, read cheaply (no interface walk, no tools run): what the rules
//! size per-host values from. `audit` and `tune` fill their context with it.

use crate::Probed;
use crate::host::HostInfo;

/// This host's OS, kernel, memory and usable CPUs.
#[derive(Debug, Clone, PartialEq)]
pub struct LocalHost {
    /// OS, kernel and memory.
    pub info: HostInfo,
    /// CPUs this process may run on (`std::thread::available_parallelism`: its affinity mask
    /// and cgroup quota count), the cores the rules size per-core values for.
    pub usable_cpus: Probed<u32>,
}

impl LocalHost {
    /// Reads this host: Linux's procfs, FreeBSD's sysctl(3) (`hw.physmem`,
    /// `kern.osrelease`). Never fails: what cannot be read is unknown with the reason.
    pub fn read() -> LocalHost {
        #[cfg(target_os = "freebsd")]
        let info = crate::freebsd::live::host_info();
        #[cfg(not(target_os = "freebsd"))]
        let info = crate::host::host_info(&crate::ProbeRoots::live());
        let usable_cpus = match std::thread::available_parallelism() {
            Ok(n) => Probed::from(u32::try_from(n.get()).map_err(|e| e.to_string())),
            Err(e) => Probed::unknown(format!("available parallelism: {e}")),
        };
        LocalHost { info, usable_cpus }
    }
}
