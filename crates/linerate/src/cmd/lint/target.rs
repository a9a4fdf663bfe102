//! The target that `lint` and `audit` judge settings for: version, size, role and path.

use linerate_tuning::{Context, Os, Role, Version};
use linerate_units::{BitRate, ByteSize, Duration};

/// Options shared by `linerate lint` and `linerate audit`.
#[derive(Debug, clap::Args)]
pub struct TargetArgs {
    /// Target kernel/OS version whose defaults apply (default: the running kernel for a live
    /// audit, else the catalogue's: Linux 6.18, FreeBSD 14.0, OpenBSD 7.4, Windows 10.0)
    #[arg(long, value_name = "VERSION")]
    pub kernel: Option<Version>,
    /// RAM of the target, checks page-unit knobs such as tcp_mem (default for a live audit:
    /// this host's)
    #[arg(long, value_name = "SIZE", value_parser = ByteSize::parse_with_unit, allow_hyphen_values = true)]
    pub ram: Option<ByteSize>,
    /// CPU cores of the target (default for a live audit: this host's)
    #[arg(long)]
    pub cores: Option<u32>,
    /// Role: host, router, firewall, web, vpn
    #[arg(long)]
    pub role: Option<Role>,
    /// Path rate, e.g. 10G (with --rtt: recommendations, and buffers too small for the BDP)
    #[arg(long, value_name = "RATE", value_parser = BitRate::parse_with_unit, allow_hyphen_values = true)]
    pub rate: Option<BitRate>,
    /// Path round-trip time, e.g. 80ms
    #[arg(long, value_name = "DURATION", value_parser = Duration::parse_with_unit, allow_hyphen_values = true)]
    pub rtt: Option<Duration>,
}

impl TargetArgs {
    /// The lint context for `os` with these options.
    pub fn context(&self, os: Os) -> Context {
        crate::cmd::plausible::warn(self.ram, self.rtt);
        let mut ctx = Context::new(os);
        if let Some(v) = &self.kernel {
            ctx.version = v.clone();
        }
        ctx.ram = self.ram;
        ctx.cores = self.cores;
        ctx.role = self.role;
        ctx.rate = self.rate;
        ctx.rtt = self.rtt;
        ctx
    }
}
