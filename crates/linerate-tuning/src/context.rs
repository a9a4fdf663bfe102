//! What the rules and the profile generator know about the target: OS, version, memory, cores,
//! role and path. The binary fills it from flags and, for the live host, from what
//! `linerate-probe` reads ([`Context::fill_from_local_host`]).

use linerate_probe::LocalHost;
use linerate_units::{BitRate, ByteSize, Duration};

use crate::catalogue::catalogue;
use crate::os::{Os, Version};
pub use crate::role::Role;

/// The target of a lint, an audit or a profile.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Context {
    /// Operating system.
    pub os: Os,
    /// Kernel / OS version whose defaults apply.
    pub version: Version,
    /// Physical memory, when known.
    pub ram: Option<ByteSize>,
    /// CPU cores, when known.
    pub cores: Option<u32>,
    /// Memory page size (for `tcp_mem`).
    pub page_size: ByteSize,
    /// The machine's job, when stated.
    pub role: Option<Role>,
    /// Path rate, when stated.
    pub rate: Option<BitRate>,
    /// Path round-trip time, when stated.
    pub rtt: Option<Duration>,
    /// Link MTU in bytes.
    pub mtu: u32,
    /// Concurrent flows a firewall must track, when stated.
    pub flows: Option<u64>,
    /// Interfaces the profile should name (FreeBSD rc.conf flags).
    pub ifaces: Vec<String>,
}

impl Context {
    /// A context for `os` at the catalogue's reference version, nothing else known.
    pub fn new(os: Os) -> Self {
        let version = catalogue(os)
            .map(|c| c.default_version.clone())
            .unwrap_or_else(|_| Version::new(&[0]));
        Context {
            os,
            version,
            ram: None,
            cores: None,
            page_size: ByteSize::from_kib(4),
            role: None,
            rate: None,
            rtt: None,
            mtu: 1500,
            flows: None,
            ifaces: Vec::new(),
        }
    }

    /// Fills what the context does not know yet (memory, cores and, unless `keep_version`, the
    /// kernel version) from `host`, when the context is about that very host: its OS is the
    /// one linerate runs on ([`Os::running`]). A Linux host's facts never size a FreeBSD target.
    pub fn fill_from_local_host(&mut self, host: &LocalHost, keep_version: bool) {
        if Some(self.os) != Os::running() {
            return;
        }
        self.ram = self.ram.or(host.info.memory.value().copied());
        self.cores = self.cores.or(host.usable_cpus.value().copied());
        if !keep_version {
            if let Some(k) = host.info.kernel.value().and_then(|k| k.parse().ok()) {
                self.version = k;
            }
        }
    }

    /// The bandwidth-delay product of the stated path.
    pub fn bdp(&self) -> Option<ByteSize> {
        Some(self.rate?.bytes_in(self.rtt?.as_secs_f64()))
    }

    /// Whether buffer sizes should be checked against the path (role unknown counts as yes).
    pub fn judges_tcp_buffers(&self) -> bool {
        self.role.is_none_or(Role::terminates_tcp)
    }
}

#[cfg(test)]
mod tests {
    use linerate_probe::Probed;
    use linerate_probe::host::HostInfo;

    use super::*;

    fn host() -> LocalHost {
        LocalHost {
            info: HostInfo {
                os: Probed::Value("Linux".into()),
                kernel: Probed::Value("6.1.0-13-amd64".into()),
                hostname: Probed::unknown("not read"),
                memory: Probed::Value(ByteSize::from_kib(8 << 20)),
            },
            usable_cpus: Probed::Value(4),
        }
    }

    #[test]
    fn the_local_host_fills_only_a_context_about_itself_and_only_what_is_unknown() {
        let Some(here) = Os::running() else {
            return;
        };
        let mut ctx = Context::new(here);
        ctx.cores = Some(64);
        ctx.fill_from_local_host(&host(), false);
        assert_eq!(ctx.ram, Some(ByteSize::from_kib(8 << 20)));
        assert_eq!(ctx.cores, Some(64), "a stated value stays");
        assert_eq!(ctx.version, "6.1".parse().unwrap_or(Version::new(&[0])));
        let mut kept = Context::new(here);
        kept.fill_from_local_host(&host(), true);
        assert_eq!(kept.version, Context::new(here).version);
        let other = if here == Os::Linux {
            Os::Freebsd
        } else {
            Os::Linux
        };
        let mut elsewhere = Context::new(other);
        elsewhere.fill_from_local_host(&host(), false);
        assert_eq!((elsewhere.ram, elsewhere.cores), (None, None));
    }
}
