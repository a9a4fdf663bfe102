//! OpenVPN in TLS mode between `gen` (client) and `recv` (server): a self-signed certificate
//! per peer, each pinning the other's with `peer-fingerprint` (static-key mode is deprecated
//! in 2.6 and gone in 2.7). The options are data, written into one config file per peer.

use std::path::PathBuf;
use std::process::Command;

use super::{Save, TunnelCtx, TunnelProcess, TunnelState, keys, tunnel_error};
use crate::LabError;

/// The port the server listens on.
const PORT: u16 = 1194;
/// The log line that says a peer's tunnel is up.
const READY_LINE: &str = "Initialization Sequence Completed";

/// The transport of the encrypted packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Proto {
    /// UDP (OpenVPN's default).
    #[default]
    Udp,
    /// TCP.
    Tcp,
}

/// OpenVPN's tunnel options.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct OpenVpnOptions {
    /// Data-channel cipher (`--data-ciphers`/`--cipher`), e.g. AES-256-GCM.
    pub cipher: String,
    /// HMAC digest (`--auth`; only used by non-AEAD ciphers).
    pub auth: Option<String>,
    /// udp or tcp.
    pub proto: Proto,
    /// `--tun-mtu` [default: what `calc tunnel` says fits the link].
    pub tun_mtu: Option<u32>,
    /// `--fragment` (UDP; 0 = off).
    pub fragment: Option<u32>,
    /// `--mssfix` (0 = off).
    pub mssfix: Option<u32>,
    /// `--sndbuf` in bytes.
    pub sndbuf: Option<u32>,
    /// `--rcvbuf` in bytes.
    pub rcvbuf: Option<u32>,
    /// `--txqueuelen` of the tun device.
    pub txqueuelen: Option<u32>,
    /// Data-channel offload (the kernel's ovpn-dco) when the kernel has it and the options
    /// allow it; `false` writes `disable-dco`.
    #[serde(default = "yes")]
    pub dco: bool,
}

fn yes() -> bool {
    true
}

impl Default for OpenVpnOptions {
    fn default() -> Self {
        OpenVpnOptions {
            cipher: "AES-256-GCM".into(),
            auth: None,
            proto: Proto::Udp,
            tun_mtu: None,
            fragment: None,
            mssfix: None,
            sndbuf: None,
            rcvbuf: None,
            txqueuelen: None,
            dco: true,
        }
    }
}

/// Option names, for messages.
const KEYS: &str =
    "cipher, auth, proto, tun-mtu, fragment, mssfix, sndbuf, rcvbuf, txqueuelen, dco";

fn number(key: &str, value: &str, range: std::ops::RangeInclusive<u32>) -> Result<u32, String> {
    value
        .parse::<u32>()
        .ok()
        .filter(|n| range.contains(n))
        .ok_or_else(|| {
            format!(
                "tunnel option {key}={value:?}: expected a whole number from {} to {}",
                range.start(),
                range.end()
            )
        })
}

impl OpenVpnOptions {
    /// Reads `KEY=VALUE` pairs over the defaults.
    pub fn from_pairs(pairs: &[(&str, &str)]) -> Result<OpenVpnOptions, String> {
        let mut o = OpenVpnOptions::default();
        for &(k, v) in pairs {
            let name_ok = |v: &str| {
                !v.is_empty()
                    && v.chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            };
            match k {
                "cipher" | "auth" if !name_ok(v) => {
                    return Err(format!(
                        "tunnel option {k}={v:?}: expected a name such as AES-256-GCM or SHA256"
                    ));
                }
                "cipher" => o.cipher = v.to_ascii_uppercase(),
                "auth" => o.auth = Some(v.to_ascii_uppercase()),
                "proto" => {
                    o.proto = match v {
                        "udp" => Proto::Udp,
                        "tcp" => Proto::Tcp,
                        _ => {
                            return Err(format!("tunnel option proto={v:?}: expected udp or tcp"));
                        }
                    }
                }
                "tun-mtu" => o.tun_mtu = Some(number(k, v, 68..=65535)?),
                "fragment" => o.fragment = Some(number(k, v, 0..=65535)?),
                "mssfix" => o.mssfix = Some(number(k, v, 0..=65535)?),
                "sndbuf" => o.sndbuf = Some(number(k, v, 0..=1 << 30)?),
                "rcvbuf" => o.rcvbuf = Some(number(k, v, 0..=1 << 30)?),
                "txqueuelen" => o.txqueuelen = Some(number(k, v, 0..=1_000_000)?),
                "dco" => {
                    o.dco = match v {
                        "auto" | "on" => true,
                        "off" => false,
                        _ => {
                            return Err(format!(
                                "tunnel option dco={v:?}: expected auto (offload when the kernel \
                                 has ovpn-dco) or off"
                            ));
                        }
                    }
                }
                other => {
                    return Err(format!(
                        "unknown openvpn tunnel option {other:?}; expected one of: {KEYS}"
                    ));
                }
            }
        }
        if o.proto == Proto::Tcp && o.fragment.is_some_and(|f| f > 0) {
            return Err(
                "tunnel option fragment: OpenVPN fragments over UDP only (proto=udp)".into(),
            );
        }
        Ok(o)
    }

    /// The options as `KEY=VALUE` text.
    pub fn describe(&self) -> String {
        let mut parts = vec![
            format!("cipher={}", self.cipher),
            format!(
                "proto={}",
                match self.proto {
                    Proto::Udp => "udp",
                    Proto::Tcp => "tcp",
                }
            ),
        ];
        let opt = |k: &str, v: Option<u32>| v.map(|v| format!("{k}={v}"));
        if let Some(a) = &self.auth {
            parts.push(format!("auth={a}"));
        }
        if !self.dco {
            parts.push("dco=off".into());
        }
        parts.extend(
            [
                opt("tun-mtu", self.tun_mtu),
                opt("fragment", self.fragment),
                opt("mssfix", self.mssfix),
                opt("sndbuf", self.sndbuf),
                opt("rcvbuf", self.rcvbuf),
                opt("txqueuelen", self.txqueuelen),
            ]
            .into_iter()
            .flatten(),
        );
        parts.join(" ")
    }
}

/// Which end of the tunnel a config is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// `recv`: TLS server, listens.
    Server,
    /// `gen`: TLS client, connects.
    Client,
}

/// Paths and addresses one peer's config refers to.
pub(crate) struct PeerFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
    pub peer_fingerprint: String,
}

/// Where the tunnel runs: its interface and the underlay addresses of both ends.
pub(crate) struct Endpoints<'a> {
    pub interface: &'a str,
    pub recv_underlay: std::net::Ipv4Addr,
}

/// One peer's OpenVPN config file.
pub(crate) fn config(
    role: Role,
    o: &OpenVpnOptions,
    files: &PeerFiles,
    ctx: &Endpoints<'_>,
    tun_mtu: u32,
) -> String {
    let mut c = Vec::<String>::new();
    let mut line = |s: String| c.push(s);
    line(format!("dev {}", ctx.interface));
    line("dev-type tun".into());
    // Without this OpenVPN uses the kernel's ovpn-dco when it is loaded and the options allow
    // (it logs which); the run records the outcome.
    if !o.dco {
        line("disable-dco".into());
    }
    match (role, o.proto) {
        (Role::Server, Proto::Udp) => line("proto udp4".into()),
        (Role::Client, Proto::Udp) => line("proto udp4".into()),
        (Role::Server, Proto::Tcp) => line("proto tcp4-server".into()),
        (Role::Client, Proto::Tcp) => line("proto tcp4-client".into()),
    }
    match role {
        Role::Server => {
            line(format!("local {}", ctx.recv_underlay));
            line(format!("lport {PORT}"));
            line("tls-server".into());
            line("dh none".into());
            line(format!("ifconfig {} {}", super::RECV_ADDR, super::GEN_ADDR));
        }
        Role::Client => {
            line("nobind".into());
            line(format!("remote {} {PORT}", ctx.recv_underlay));
            line("tls-client".into());
            line(format!("ifconfig {} {}", super::GEN_ADDR, super::RECV_ADDR));
        }
    }
    line(format!("cert {}", files.cert.display()));
    line(format!("key {}", files.key.display()));
    line(format!("peer-fingerprint {}", files.peer_fingerprint));
    line(format!("data-ciphers {}", o.cipher));
    line(format!("cipher {}", o.cipher));
    if let Some(a) = &o.auth {
        line(format!("auth {a}"));
    }
    line(format!("tun-mtu {tun_mtu}"));
    if let Some(f) = o.fragment.filter(|&f| f > 0) {
        line(format!("fragment {f}"));
    }
    if let Some(m) = o.mssfix {
        line(format!("mssfix {m}"));
    }
    if let Some(b) = o.sndbuf {
        line(format!("sndbuf {b}"));
    }
    if let Some(b) = o.rcvbuf {
        line(format!("rcvbuf {b}"));
    }
    if let Some(q) = o.txqueuelen {
        line(format!("txqueuelen {q}"));
    }
    line("verb 3".into());
    let mut text = c.join("\n");
    text.push('\n');
    text
}

/// The OpenVPN version (`openvpn 2.6.14`), or the missing-tool error.
fn version() -> Result<String, LabError> {
    let out = Command::new("openvpn")
        .arg("--version")
        .output()
        .map_err(|_| super::missing_tool("openvpn"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    Ok(text
        .split_whitespace()
        .nth(1)
        .map_or_else(|| "openvpn".to_owned(), |v| format!("openvpn {v}")))
}

/// Refuses a cipher the local OpenSSL (as OpenVPN sees it) cannot do.
fn check_cipher(cipher: &str) -> Result<(), LabError> {
    let out = Command::new("openvpn")
        .arg("--show-ciphers")
        .output()
        .map_err(|_| super::missing_tool("openvpn"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    if cipher_listed(&text, cipher) {
        return Ok(());
    }
    let legacy = ["BF-", "CAST5", "DES-", "DESX", "RC2", "IDEA", "SEED"]
        .iter()
        .any(|p| cipher.starts_with(p));
    Err(tunnel_error(if legacy {
        format!(
            "openvpn cipher {cipher}: not offered by this host's OpenSSL (see `openvpn \
             --show-ciphers`); {cipher} lives in OpenSSL 3's legacy provider, which is not \
             loaded (openvpn --providers legacy default, with the provider installed)"
        )
    } else {
        format!(
            "openvpn cipher {cipher}: not offered by this host's OpenSSL (see `openvpn \
             --show-ciphers`; AES-128-GCM, AES-256-GCM and CHACHA20-POLY1305 are the usual \
             AEAD ciphers)"
        )
    }))
}

/// Whether `openvpn --show-ciphers` output lists `cipher` (first word of a line).
fn cipher_listed(list: &str, cipher: &str) -> bool {
    list.lines()
        .filter_map(|l| l.split_whitespace().next())
        .any(|w| w.eq_ignore_ascii_case(cipher))
}

/// Starts both peers and waits until each logs that its tunnel is up.
pub(crate) fn up(
    o: &OpenVpnOptions,
    ctx: &TunnelCtx<'_>,
    state: &mut TunnelState,
    save: &mut Save<'_>,
) -> Result<(), LabError> {
    state.implementation = version()?;
    check_cipher(&o.cipher)?;
    state.underlay = format!("{}:{PORT}", ctx.recv_underlay);
    let tun_mtu = super::interface_mtu(&super::TunnelSpec::Openvpn(o.clone()), ctx.link_mtu);
    let gen_cert = keys::peer_cert("gen")?;
    let recv_cert = keys::peer_cert("recv")?;
    let mut children = Vec::new();
    // The server first, so the client's first packet finds it listening.
    for (role, node, ns, iface, own, peer) in [
        (
            Role::Server,
            "recv",
            ctx.recv_ns,
            &ctx.recv_if,
            &recv_cert,
            &gen_cert,
        ),
        (
            Role::Client,
            "gen",
            ctx.gen_ns,
            &ctx.gen_if,
            &gen_cert,
            &recv_cert,
        ),
    ] {
        let files = PeerFiles {
            cert: ctx.write_secret(&format!("{node}.crt"), &own.cert_pem)?,
            key: ctx.write_secret(&format!("{node}.key"), &own.key_pem)?,
            peer_fingerprint: peer.fingerprint.clone(),
        };
        let conf = ctx.write_secret(
            &format!("{node}.conf"),
            &config(
                role,
                o,
                &files,
                &Endpoints {
                    interface: iface,
                    recv_underlay: ctx.recv_underlay,
                },
                tun_mtu,
            ),
        )?;
        let log = ctx.file(&format!("{node}.log"));
        let mut cmd = Command::new("openvpn");
        cmd.arg("--config").arg(&conf);
        let child = super::spawn_in(ns, cmd, &log)?;
        super::record_process(
            state,
            save,
            TunnelProcess {
                node: node.into(),
                pid: child.id(),
                program: "openvpn".into(),
                log: log.clone(),
            },
        )?;
        children.push((child, log));
    }
    let logs: Vec<PathBuf> = children.iter().map(|(_, l)| l.clone()).collect();
    let mut procs: Vec<std::process::Child> = children.into_iter().map(|(c, _)| c).collect();
    let mut refs: Vec<(&mut std::process::Child, &std::path::Path)> = procs
        .iter_mut()
        .zip(&logs)
        .map(|(c, l)| (c, l.as_path()))
        .collect();
    let result = super::await_ready("openvpn", &mut refs, || {
        Ok(logs
            .iter()
            .all(|l| std::fs::read_to_string(l).is_ok_and(|t| t.contains(READY_LINE))))
    });
    drop(refs);
    if let Err(e) = result {
        // The error carries the daemon logs, which often name the cause (a cipher, an option).
        super::kill_all(&mut procs);
        return Err(e);
    }
    super::detach(procs);
    let log = logs
        .last()
        .and_then(|l| std::fs::read_to_string(l).ok())
        .unwrap_or_default();
    state.implementation.push_str(data_channel(o, &log));
    Ok(())
}

/// Where the data channel ran, from the client's log.
fn data_channel(o: &OpenVpnOptions, log: &str) -> &'static str {
    if log.contains("DCO device") && log.contains("opened") {
        " (data-channel offload: kernel ovpn-dco)"
    } else if !o.dco {
        " (user space: dco=off)"
    } else if log.contains("Kernel support for ovpn-dco missing") {
        " (user space: the kernel has no ovpn-dco)"
    } else {
        " (user space)"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_carries_every_option_and_pins_the_peer() {
        let ctx = Endpoints {
            interface: "lr-t-t0",
            recv_underlay: std::net::Ipv4Addr::new(198, 18, 0, 2),
        };
        check_config(&ctx);
    }

    fn check_config(ctx: &Endpoints<'_>) {
        let o = OpenVpnOptions::from_pairs(&[
            ("cipher", "chacha20-poly1305"),
            ("tun-mtu", "9000"),
            ("fragment", "0"),
            ("mssfix", "0"),
            ("sndbuf", "524288"),
            ("rcvbuf", "524288"),
            ("txqueuelen", "1000"),
        ])
        .unwrap_or_default();
        let files = PeerFiles {
            cert: "/x/gen.crt".into(),
            key: "/x/gen.key".into(),
            peer_fingerprint: "AB:CD".into(),
        };
        let c = config(Role::Client, &o, &files, ctx, 9000);
        for want in [
            "dev lr-t-t0\n",
            "remote 198.18.0.2 1194\n",
            "tls-client\n",
            "ifconfig 198.19.128.1 198.19.128.2\n",
            "peer-fingerprint AB:CD\n",
            "data-ciphers CHACHA20-POLY1305\n",
            "tun-mtu 9000\n",
            "mssfix 0\n",
            "sndbuf 524288\n",
            "rcvbuf 524288\n",
            "txqueuelen 1000\n",
            "cert /x/gen.crt\n",
        ] {
            assert!(c.contains(want), "{want:?} missing from:\n{c}");
        }
        assert!(!c.contains("disable-dco"), "{c}");
        // fragment 0 means off: no fragment line at all.
        assert!(!c.contains("fragment"), "{c}");
        let s = config(Role::Server, &o, &files, ctx, 9000);
        assert!(s.contains("tls-server\n") && s.contains("dh none\n"), "{s}");
        assert!(
            s.contains("local 198.18.0.2\n") && !s.contains("remote "),
            "{s}"
        );
    }

    #[test]
    fn dco_off_disables_offload_and_the_log_says_where_data_ran() {
        let o = OpenVpnOptions::from_pairs(&[("dco", "off")]).unwrap_or_default();
        assert!(!o.dco);
        let ctx = Endpoints {
            interface: "t",
            recv_underlay: std::net::Ipv4Addr::new(198, 18, 0, 2),
        };
        let files = PeerFiles {
            cert: "/c".into(),
            key: "/k".into(),
            peer_fingerprint: "AB".into(),
        };
        assert!(config(Role::Client, &o, &files, &ctx, 1448).contains("disable-dco\n"));
        let auto = OpenVpnOptions::default();
        assert_eq!(
            data_channel(
                &auto,
                "Note: Kernel support for ovpn-dco missing, disabling data channel offload."
            ),
            " (user space: the kernel has no ovpn-dco)"
        );
        assert_eq!(
            data_channel(&auto, "DCO device lr-x-tg opened"),
            " (data-channel offload: kernel ovpn-dco)"
        );
        assert_eq!(data_channel(&o, ""), " (user space: dco=off)");
    }

    #[test]
    fn option_errors_name_the_option() {
        let e = OpenVpnOptions::from_pairs(&[("proto", "sctp")])
            .err()
            .unwrap_or_default();
        assert!(e.contains("proto") && e.contains("udp or tcp"), "{e}");
        let e = OpenVpnOptions::from_pairs(&[("compress", "lz4")])
            .err()
            .unwrap_or_default();
        assert!(e.contains("compress") && e.contains("tun-mtu"), "{e}");
        let e = OpenVpnOptions::from_pairs(&[("proto", "tcp"), ("fragment", "1300")])
            .err()
            .unwrap_or_default();
        assert!(e.contains("UDP"), "{e}");
        let e = OpenVpnOptions::from_pairs(&[("cipher", "AES 256")])
            .err()
            .unwrap_or_default();
        assert!(e.contains("cipher"), "{e}");
    }

    #[test]
    fn cipher_list_is_matched_by_first_word() {
        let list = "The following ciphers:\n\nAES-256-GCM  (256 bit key, 128 bit block)\n\
                    CHACHA20-POLY1305  (256 bit key, stream cipher)\n";
        assert!(cipher_listed(list, "aes-256-gcm"));
        assert!(!cipher_listed(list, "BF-CBC"));
        assert!(!cipher_listed(list, "256"));
    }
}
