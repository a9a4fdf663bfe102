//! Facts about the machine linerate runs on, for the rules' context: RAM, cores, kernel.
//! (The probe crate will supersede this with its HostSnapshot; until then, read them here.)
//! Linux reads /proc; FreeBSD asks sysctl(3) for `hw.physmem` and `kern.osrelease`.

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
    #[cfg(not(target_os = "freebsd"))]
    pub fn read() -> HostFacts {
        let ram = std::fs::read_to_string("/proc/meminfo").ok().and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("MemTotal:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
                .map(ByteSize::from_kib)
        });
        let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .ok()
            .and_then(|s| s.trim().parse().ok());
        HostFacts {
            ram,
            cores: cores(),
            kernel,
        }
    }

    /// Reads the local host (sysctl `hw.physmem`, `kern.osrelease`); missing facts stay `None`.
    #[cfg(target_os = "freebsd")]
    pub fn read() -> HostFacts {
        use linerate_sys::sysctl::get;
        HostFacts {
            ram: get("hw.physmem")
                .ok()
                .and_then(|v| v.trim().parse().ok())
                .map(ByteSize::from_bytes),
            cores: cores(),
            kernel: get("kern.osrelease").ok().and_then(|v| v.parse().ok()),
        }
    }

    /// Fills what `ctx` does not know yet, when `ctx` is about this very host (a Linux target
    /// on Linux, a FreeBSD target on FreeBSD).
    pub fn fill(&self, ctx: &mut Context, kernel_given: bool) {
        if Some(ctx.os) != this_os() {
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

/// Available parallelism, the cores the rules size per-core values for.
fn cores() -> Option<u32> {
    std::thread::available_parallelism()
        .ok()
        .and_then(|n| u32::try_from(n.get()).ok())
}

/// The OS this binary runs on, when linerate can read and change its settings live.
pub fn this_os() -> Option<Os> {
    if cfg!(target_os = "linux") {
        Some(Os::Linux)
    } else if cfg!(target_os = "freebsd") {
        Some(Os::Freebsd)
    } else {
        None
    }
}
