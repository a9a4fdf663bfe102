//! What the rules and the profile generator know about the target: OS, version, memory, cores,
//! role and path. The binary fills it from flags and, for the live host, from /proc.

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

    /// The bandwidth-delay product of the stated path.
    pub fn bdp(&self) -> Option<ByteSize> {
        Some(self.rate?.bytes_in(self.rtt?.as_secs_f64()))
    }

    /// Whether buffer sizes should be checked against the path (role unknown counts as yes).
    pub fn judges_tcp_buffers(&self) -> bool {
        self.role.is_none_or(Role::terminates_tcp)
    }
}
