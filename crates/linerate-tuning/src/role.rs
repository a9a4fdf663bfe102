//! What a host is for. A leaf: the settings rules, the hardware rules and the profile
//! generator all take a role, and the binary parses `--role` into one.

use std::fmt;
use std::str::FromStr;

/// What the machine does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// An end host moving bulk data (TCP sender/receiver).
    Host,
    /// Forwards packets between interfaces; terminates no bulk TCP.
    Router,
    /// Forwards and keeps per-flow state.
    Firewall,
    /// Serves many short TCP connections.
    Web,
    /// Terminates tunnels and forwards what comes out of them.
    Vpn,
}

impl Role {
    /// Whether the role terminates bulk TCP (so its buffers must cover the path's BDP).
    pub fn terminates_tcp(self) -> bool {
        matches!(self, Role::Host | Role::Web | Role::Vpn)
    }

    /// Whether the role forwards packets.
    pub fn forwards(self) -> bool {
        matches!(self, Role::Router | Role::Firewall | Role::Vpn)
    }

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Role::Host => "host",
            Role::Router => "router",
            Role::Firewall => "firewall",
            Role::Web => "web",
            Role::Vpn => "vpn",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Role {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "host" => Ok(Role::Host),
            "router" => Ok(Role::Router),
            "firewall" => Ok(Role::Firewall),
            "web" => Ok(Role::Web),
            "vpn" => Ok(Role::Vpn),
            _ => Err(format!(
                "unknown role `{s}` (expected host, router, firewall, web or vpn)"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_parse_by_name() {
        for role in [
            Role::Host,
            Role::Router,
            Role::Firewall,
            Role::Web,
            Role::Vpn,
        ] {
            assert_eq!(role.name().parse::<Role>(), Ok(role));
        }
        assert!("switch".parse::<Role>().is_err());
    }
}
