//! Facts about the machine linerate runs on, for the rules' context: RAM, cores, kernel.
//! (The probe crate will supersede this with its HostSnapshot; until then, read them here.)

use linerate_tuning::{Context, Os, Version};
use linerate_units::ByteSize;

/// What the binary knows about the local host.
#[derive(Debug, Clone, Default)]
pub struct HostFacts {
    /// MemTotal from /proc/meminfo.
    pub ram: Option<ByteSize>,
    /// Available parallelism.
    pub cores: Option<u32>,
    /// Kernel release from /proc/sys/kernel/osrelease.
    pub kernel: Option<Version>,
}

impl HostFacts {
    /// Reads the local host (Linux /proc); missing facts stay `None`.
    pub fn read() -> HostFacts {
        let ram = std::fs::read_to_string("/proc/meminfo").ok().and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("MemTotal:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
                .map(ByteSize::from_kib)
        });
        let cores = std::thread::available_parallelism()
            .ok()
            .and_then(|n| u32::try_from(n.get()).ok());
        let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .ok()
            .and_then(|s| s.trim().parse().ok());
        HostFacts { ram, cores, kernel }
    }

    /// Fills what `ctx` does not know yet, when `ctx` is about this very host (a Linux target
    /// on Linux).
    pub fn fill(&self, ctx: &mut Context, kernel_given: bool) {
        if ctx.os != Os::Linux || !cfg!(target_os = "linux") {
            return;
        }
        ctx.ram = ctx.ram.or(self.ram);
        ctx.cores = ctx.cores.or(self.cores);
        if !kernel_given {
            if let Some(k) = &self.kernel {
                ctx.version = k.clone();
            }
        }
    }
}
