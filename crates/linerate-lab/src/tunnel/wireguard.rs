//! WireGuard between `gen` and `recv`: the kernel's implementation when `ip link add type
//! wireguard` works, else `wireguard-go` (user space); keys generated per lab, configured with
//! `wg set`. `gen` keeps the peer alive every second, so the first handshake happens at once
//! and readiness is the handshake itself.

use std::path::PathBuf;
use std::process::Command;

use super::{Save, TunnelCtx, TunnelProcess, TunnelState, keys, run_tool, tunnel_error};
use crate::LabError;
use crate::netns::Netns;

/// The UDP port both peers listen on.
const PORT: u16 = 51820;
/// wireguard-go refuses to start when it thinks the kernel module would do; this says we know.
const USERSPACE_ENV: &str = "WG_I_PREFER_BUGGY_USERSPACE_TO_POLISHED_KMOD";
/// Where wireguard-go puts its control sockets.
const SOCKET_DIR: &str = "/var/run/wireguard";

/// Which WireGuard implementation to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WgImplementation {
    /// The kernel's when it has one, else wireguard-go.
    #[default]
    Auto,
    /// The kernel's only.
    Kernel,
    /// wireguard-go only.
    Userspace,
}

/// WireGuard's tunnel options.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct WireGuardOptions {
    /// Interface MTU [default: what `calc tunnel` says fits the link].
    pub mtu: Option<u32>,
    /// Implementation choice.
    pub implementation: WgImplementation,
}

impl WireGuardOptions {
    /// Reads `KEY=VALUE` pairs over the defaults.
    pub fn from_pairs(pairs: &[(&str, &str)]) -> Result<WireGuardOptions, String> {
        let mut o = WireGuardOptions::default();
        for &(k, v) in pairs {
            match k {
                "mtu" => {
                    o.mtu = Some(v.parse::<u32>().ok().filter(|m| (1280..=65535).contains(m)).ok_or_else(|| {
                        format!("tunnel option mtu={v:?}: expected a whole number from 1280 to 65535")
                    })?);
                }
                "implementation" => {
                    o.implementation = match v {
                        "auto" => WgImplementation::Auto,
                        "kernel" => WgImplementation::Kernel,
                        "userspace" | "wireguard-go" => WgImplementation::Userspace,
                        _ => {
                            return Err(format!(
                                "tunnel option implementation={v:?}: expected auto, kernel or userspace"
                            ));
                        }
                    }
                }
                other => {
                    return Err(format!(
                        "unknown wireguard tunnel option {other:?}; expected one of: mtu, implementation"
                    ));
                }
            }
        }
        Ok(o)
    }

    /// The options as `KEY=VALUE` text.
    pub fn describe(&self) -> String {
        let imp = match self.implementation {
            WgImplementation::Auto => "auto",
            WgImplementation::Kernel => "kernel",
            WgImplementation::Userspace => "userspace",
        };
        match self.mtu {
            Some(m) => format!("mtu={m} implementation={imp}"),
            None => format!("implementation={imp}"),
        }
    }
}

/// The `wg set` arguments of one peer.
pub(crate) fn wg_set_args(
    interface: &str,
    private_key: &std::path::Path,
    peer_public: &str,
    peer_tunnel_addr: std::net::Ipv4Addr,
    endpoint: Option<std::net::Ipv4Addr>,
) -> Vec<String> {
    let mut a = vec![
        "set".to_owned(),
        interface.to_owned(),
        "listen-port".to_owned(),
        PORT.to_string(),
        "private-key".to_owned(),
        private_key.display().to_string(),
        "peer".to_owned(),
        peer_public.to_owned(),
        "allowed-ips".to_owned(),
        format!("{peer_tunnel_addr}/32"),
    ];
    if let Some(e) = endpoint {
        a.extend([
            "endpoint".to_owned(),
            format!("{e}:{PORT}"),
            "persistent-keepalive".to_owned(),
            "1".to_owned(),
        ]);
    }
    a
}

/// Tries the kernel implementation in `ns`; `true` when the interface now exists.
fn kernel_link(ns: &Netns, interface: &str) -> bool {
    let mut cmd = Command::new("ip");
    cmd.args(["link", "add", interface, "type", "wireguard"]);
    run_tool(ns, cmd).is_ok()
}

fn userspace_version() -> Result<String, LabError> {
    let out = Command::new("wireguard-go")
        .arg("--version")
        .output()
        .map_err(|_| super::missing_tool("wireguard-go"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    Ok(text.split_whitespace().nth(1).map_or_else(
        || "wireguard-go".to_owned(),
        |v| format!("wireguard-go {}", v.trim_start_matches('v')),
    ))
}

fn link_exists(ns: &Netns, interface: &str) -> Result<bool, LabError> {
    ns.run(|| {
        let mut rtnl =
            linerate_sys::netlink::Rtnl::open().map_err(LabError::io("open a netlink socket"))?;
        Ok(rtnl.links()?.iter().any(|l| l.name == interface))
    })
}

/// Builds the tunnel and waits for the first handshake.
pub(crate) fn up(
    o: &WireGuardOptions,
    ctx: &TunnelCtx<'_>,
    state: &mut TunnelState,
    save: &mut Save<'_>,
) -> Result<(), LabError> {
    // wg is needed either way: check it before anything starts.
    if Command::new("wg").arg("--version").output().is_err() {
        return Err(super::missing_tool("wg"));
    }
    let mtu = super::interface_mtu(&super::TunnelSpec::Wireguard(o.clone()), ctx.link_mtu);
    let gen_keys = keys::wg_keys()?;
    let recv_keys = keys::wg_keys()?;
    let mut children = Vec::new();
    let result = start(
        o,
        ctx,
        state,
        save,
        mtu,
        (&gen_keys, &recv_keys),
        &mut children,
    );
    if let Err(e) = result {
        super::kill_all(&mut children);
        return Err(e);
    }
    super::detach(children);
    Ok(())
}

fn start(
    o: &WireGuardOptions,
    ctx: &TunnelCtx<'_>,
    state: &mut TunnelState,
    save: &mut Save<'_>,
    mtu: u32,
    keys: (&keys::WgKeys, &keys::WgKeys),
    children: &mut Vec<std::process::Child>,
) -> Result<(), LabError> {
    let mut implementation = String::new();
    for (node, ns, iface) in [
        ("recv", ctx.recv_ns, &ctx.recv_if),
        ("gen", ctx.gen_ns, &ctx.gen_if),
    ] {
        let kernel = o.implementation != WgImplementation::Userspace && kernel_link(ns, iface);
        if kernel {
            implementation = "kernel".into();
        } else {
            if o.implementation == WgImplementation::Kernel {
                return Err(tunnel_error(
                    "wireguard implementation=kernel: this kernel has no WireGuard (`ip link \
                     add type wireguard` fails; CONFIG_WIREGUARD); use implementation=auto or \
                     userspace (wireguard-go)"
                        .into(),
                ));
            }
            implementation = userspace_version()?;
            let log = ctx.file(&format!("{node}.log"));
            let mut cmd = Command::new("wireguard-go");
            cmd.arg("-f").arg(iface).env(USERSPACE_ENV, "1");
            let mut child = super::spawn_in(ns, cmd, &log)?;
            state
                .sockets
                .push(PathBuf::from(SOCKET_DIR).join(format!("{iface}.sock")));
            super::record_process(
                state,
                save,
                TunnelProcess {
                    node: node.into(),
                    pid: child.id(),
                    program: "wireguard-go".into(),
                    log: log.clone(),
                },
            )?;
            let ready = super::await_ready("wireguard-go", &mut [(&mut child, &log)], || {
                Ok(link_exists(ns, iface)?
                    && PathBuf::from(SOCKET_DIR)
                        .join(format!("{iface}.sock"))
                        .exists())
            });
            children.push(child);
            ready?;
        }
        configure(ns, node, iface, ctx, mtu, keys)?;
    }
    state.implementation = implementation;
    state.underlay = format!("{}:{PORT}", ctx.recv_underlay);
    save(state)?;
    // Ready when gen has completed a handshake with recv (gen keeps the peer alive each second).
    super::await_ready("wireguard handshake", &mut [], || {
        let mut cmd = Command::new("wg");
        cmd.args(["show", &ctx.gen_if, "latest-handshakes"]);
        let out = run_tool(ctx.gen_ns, cmd)?;
        Ok(out
            .split_whitespace()
            .nth(1)
            .and_then(|t| t.parse::<u64>().ok())
            .is_some_and(|t| t > 0))
    })
}

fn configure(
    ns: &Netns,
    node: &str,
    iface: &str,
    ctx: &TunnelCtx<'_>,
    mtu: u32,
    (gen_keys, recv_keys): (&keys::WgKeys, &keys::WgKeys),
) -> Result<(), LabError> {
    let (own, peer, own_addr, peer_addr, endpoint) = if node == "gen" {
        (
            gen_keys,
            recv_keys,
            super::GEN_ADDR,
            super::RECV_ADDR,
            Some(ctx.recv_underlay),
        )
    } else {
        (recv_keys, gen_keys, super::RECV_ADDR, super::GEN_ADDR, None)
    };
    let key_file = ctx.write_secret(&format!("{node}.key"), &format!("{}\n", own.private))?;
    let mut cmd = Command::new("wg");
    cmd.args(wg_set_args(
        iface,
        &key_file,
        &peer.public,
        peer_addr,
        endpoint,
    ));
    run_tool(ns, cmd)?;
    let mut cmd = Command::new("ip");
    cmd.args(["link", "set", "dev", iface, "mtu", &mtu.to_string()]);
    run_tool(ns, cmd)?;
    ns.run(|| {
        let mut rtnl =
            linerate_sys::netlink::Rtnl::open().map_err(LabError::io("open a netlink socket"))?;
        let idx = rtnl.link_index(iface)?;
        rtnl.add_address(idx, own_addr, super::PREFIX)?;
        rtnl.set_up_by_name(iface)?;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_gen_names_an_endpoint_and_keeps_alive() {
        let a = wg_set_args(
            "lr-x-t0",
            std::path::Path::new("/s/x.key"),
            "PUB=",
            std::net::Ipv4Addr::new(198, 19, 128, 2),
            Some(std::net::Ipv4Addr::new(198, 18, 0, 2)),
        )
        .join(" ");
        assert_eq!(
            a,
            "set lr-x-t0 listen-port 51820 private-key /s/x.key peer PUB= allowed-ips \
             198.19.128.2/32 endpoint 198.18.0.2:51820 persistent-keepalive 1"
        );
        let b = wg_set_args(
            "lr-x-t0",
            std::path::Path::new("/s/y.key"),
            "PUB=",
            std::net::Ipv4Addr::new(198, 19, 128, 1),
            None,
        )
        .join(" ");
        assert!(!b.contains("endpoint") && !b.contains("keepalive"), "{b}");
    }

    #[test]
    fn options_parse_and_refuse() {
        let o = WireGuardOptions::from_pairs(&[("mtu", "1380"), ("implementation", "userspace")]);
        assert_eq!(
            o,
            Ok(WireGuardOptions {
                mtu: Some(1380),
                implementation: WgImplementation::Userspace
            })
        );
        assert!(WireGuardOptions::from_pairs(&[("mtu", "100")]).is_err());
        assert!(WireGuardOptions::from_pairs(&[("implementation", "x")]).is_err());
    }
}
