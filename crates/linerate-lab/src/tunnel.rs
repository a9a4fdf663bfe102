//! Tunnels between `gen` and `recv`: OpenVPN or WireGuard daemons started in the nodes and
//! carried over the lab's links (so link emulation and the router's firewall act on the
//! encrypted underlay). The tunnel has its own addresses, [`GEN_ADDR`] and [`RECV_ADDR`], and
//! workloads target them. The daemons are lab processes: their pids and logs are in the lab
//! state, readiness is awaited by polling (log line or handshake), and `lab down` kills them.

pub mod keys;
pub mod observe;
mod openvpn;
mod wireguard;

use std::fmt;
use std::fs::File;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use linerate_calc::tunnel::{Encap, EncapSpec, IpVersion, TunnelReport, tunnel_report};
use linerate_units::ByteSize;

use crate::LabError;
use crate::netns::Netns;

pub use openvpn::{OpenVpnOptions, Proto};
pub use wireguard::{WgImplementation, WireGuardOptions};

/// `gen`'s tunnel address (a second range inside 198.18.0.0/15, apart from the links').
pub const GEN_ADDR: Ipv4Addr = Ipv4Addr::new(198, 19, 128, 1);
/// `recv`'s tunnel address.
pub const RECV_ADDR: Ipv4Addr = Ipv4Addr::new(198, 19, 128, 2);
/// Prefix length of the tunnel network.
pub const PREFIX: u8 = 24;
/// How long a daemon may take to be ready.
const READY_TIMEOUT: Duration = Duration::from_secs(20);

/// Which tunnel, with its options.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum TunnelSpec {
    /// OpenVPN in TLS mode (self-signed certificates pinned by fingerprint).
    Openvpn(OpenVpnOptions),
    /// WireGuard: the kernel's when present, else wireguard-go.
    Wireguard(WireGuardOptions),
}

/// The tunnel kinds, for messages.
pub const KINDS: &str = "openvpn, wireguard";

impl TunnelSpec {
    /// Parses a kind (`openvpn`, `wireguard`) and its `KEY=VALUE` options; errors name the
    /// option and say what is expected.
    pub fn parse(kind: &str, options: &[String]) -> Result<TunnelSpec, String> {
        let pairs = options
            .iter()
            .map(|o| {
                o.split_once('=')
                    .map(|(k, v)| (k.trim(), v.trim()))
                    .ok_or_else(|| format!("tunnel option {o:?}: expected KEY=VALUE"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        match kind.trim() {
            "openvpn" => OpenVpnOptions::from_pairs(&pairs).map(TunnelSpec::Openvpn),
            "wireguard" | "wg" => WireGuardOptions::from_pairs(&pairs).map(TunnelSpec::Wireguard),
            other => Err(format!(
                "unknown tunnel {other:?}; expected one of: {KINDS}"
            )),
        }
    }

    /// `openvpn` or `wireguard`.
    pub fn kind(&self) -> &'static str {
        match self {
            TunnelSpec::Openvpn(_) => "openvpn",
            TunnelSpec::Wireguard(_) => "wireguard",
        }
    }

    /// The encapsulation as `calc tunnel` knows it.
    pub fn encap(&self) -> Encap {
        match self {
            TunnelSpec::Openvpn(o) if o.proto == Proto::Tcp => Encap::OpenVpnTcp,
            TunnelSpec::Openvpn(_) => Encap::OpenVpnUdp,
            TunnelSpec::Wireguard(_) => Encap::WireGuard,
        }
    }

    /// The MTU asked for explicitly (`tun-mtu`, `mtu`), if any.
    pub fn explicit_mtu(&self) -> Option<u32> {
        match self {
            TunnelSpec::Openvpn(o) => o.tun_mtu,
            TunnelSpec::Wireguard(w) => w.mtu,
        }
    }

    /// The options as `KEY=VALUE` text, for summaries.
    pub fn describe(&self) -> String {
        match self {
            TunnelSpec::Openvpn(o) => format!("openvpn {}", o.describe()),
            TunnelSpec::Wireguard(w) => format!("wireguard {}", w.describe()),
        }
    }
}

impl fmt::Display for TunnelSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe())
    }
}

/// What `calc tunnel` predicts for a tunnel over a link of `link_mtu` (IPv4 underlay and
/// inside).
pub fn predict(spec: &TunnelSpec, link_mtu: u32) -> Option<TunnelReport> {
    tunnel_report(
        ByteSize::from_bytes(u64::from(link_mtu)),
        &[EncapSpec {
            encap: spec.encap(),
            outer: Some(IpVersion::Ipv4),
        }],
        IpVersion::Ipv4,
        IpVersion::Ipv4,
        None,
    )
    .ok()
}

/// The MTU the tunnel interface gets: the explicit option, else what `calc tunnel` says fits
/// in the smallest link MTU without fragmenting the underlay.
pub fn interface_mtu(spec: &TunnelSpec, link_mtu: u32) -> u32 {
    spec.explicit_mtu().unwrap_or_else(|| {
        predict(spec, link_mtu).map_or(1400, |r| u32::try_from(r.inner_mtu.bytes()).unwrap_or(1400))
    })
}

/// One daemon of a tunnel.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TunnelProcess {
    /// The node it runs in.
    pub node: String,
    /// Its process id.
    pub pid: u32,
    /// The program (`openvpn`, `wireguard-go`), checked before `lab down` kills the pid.
    pub program: String,
    /// Its log file.
    pub log: PathBuf,
}

/// A tunnel as built.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TunnelState {
    /// The tunnel and its options.
    pub spec: TunnelSpec,
    /// Which implementation ran, with its version (`openvpn 2.6.14`, `wireguard-go
    /// 0.0.20220316`, `kernel`).
    pub implementation: String,
    /// The tunnel interface in `gen`.
    pub gen_interface: String,
    /// The tunnel interface in `recv` (another name: wireguard-go's control socket is named
    /// after the interface and is global to the host).
    pub recv_interface: String,
    /// `gen`'s tunnel address with prefix.
    pub gen_address: String,
    /// `recv`'s tunnel address with prefix.
    pub recv_address: String,
    /// The underlay endpoint `gen` sends to (`recv`'s link address and port).
    pub underlay: String,
    /// The tunnel interface's MTU as read back from `gen`.
    pub mtu: Option<u32>,
    /// The smallest MTU of the lab's links (what the prediction starts from).
    pub link_mtu: u32,
    /// The daemons.
    pub processes: Vec<TunnelProcess>,
    /// Files to remove at `lab down` (wireguard-go's control sockets).
    #[serde(default)]
    pub sockets: Vec<PathBuf>,
    /// Bring-up time of the tunnel in milliseconds.
    pub bringup_ms: Option<f64>,
}

/// The context a tunnel is built in.
pub(crate) struct TunnelCtx<'a> {
    /// `NAME.tunnel-<suffix>` side files go here (the lab state directory).
    pub dir: PathBuf,
    pub lab: &'a str,
    pub gen_ns: &'a Netns,
    pub recv_ns: &'a Netns,
    pub recv_underlay: Ipv4Addr,
    pub gen_if: String,
    pub recv_if: String,
    pub link_mtu: u32,
}

impl TunnelCtx<'_> {
    /// A side file in the state directory: `NAME.tunnel-<suffix>`.
    pub fn file(&self, suffix: &str) -> PathBuf {
        self.dir.join(format!("{}.tunnel-{suffix}", self.lab))
    }

    /// Writes a side file readable by root only (keys).
    pub fn write_secret(&self, suffix: &str, text: &str) -> Result<PathBuf, LabError> {
        use std::os::unix::fs::PermissionsExt;
        let path = self.file(suffix);
        linerate_sys::atomic_write(&path, text.as_bytes())
            .map_err(LabError::io(format!("write {}", path.display())))?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))
            .map_err(LabError::io(format!("chmod 600 {}", path.display())))?;
        Ok(path)
    }
}

/// Saves the tunnel's state into the lab's state file.
pub(crate) type Save<'a> = dyn FnMut(&TunnelState) -> Result<(), LabError> + 'a;

/// Builds the tunnel of `spec` in a lab whose links are up; every daemon is recorded (and
/// saved with `save`) as soon as it exists, so a failure or `kill -9` leaves it to `lab down`.
pub(crate) fn up(
    spec: &TunnelSpec,
    ctx: &TunnelCtx<'_>,
    save: &mut Save<'_>,
) -> Result<TunnelState, LabError> {
    let started = Instant::now();
    let mut state = TunnelState {
        spec: spec.clone(),
        implementation: String::new(),
        gen_interface: ctx.gen_if.clone(),
        recv_interface: ctx.recv_if.clone(),
        gen_address: format!("{GEN_ADDR}/{PREFIX}"),
        recv_address: format!("{RECV_ADDR}/{PREFIX}"),
        underlay: String::new(),
        mtu: None,
        link_mtu: ctx.link_mtu,
        processes: Vec::new(),
        sockets: Vec::new(),
        bringup_ms: None,
    };
    save(&state)?;
    match spec {
        TunnelSpec::Openvpn(o) => openvpn::up(o, ctx, &mut state, save)?,
        TunnelSpec::Wireguard(w) => wireguard::up(w, ctx, &mut state, save)?,
    }
    let mtu = ctx.gen_ns.run(|| {
        let mut rtnl =
            linerate_sys::netlink::Rtnl::open().map_err(LabError::io("open a netlink socket"))?;
        Ok(rtnl
            .links()?
            .into_iter()
            .find(|l| l.name == ctx.gen_if)
            .map(|l| l.mtu))
    })?;
    state.mtu = mtu;
    state.bringup_ms = Some(started.elapsed().as_secs_f64() * 1e3);
    save(&state)?;
    Ok(state)
}

/// Records a started daemon in the state (saved at once).
pub(crate) fn record_process(
    state: &mut TunnelState,
    save: &mut Save<'_>,
    process: TunnelProcess,
) -> Result<(), LabError> {
    state.processes.push(process);
    save(state)
}

/// Starts `cmd` inside `ns` with stdout and stderr to `log`, in its own process group (a
/// Ctrl-C at the terminal reaches linerate, which tears the lab down in order).
pub(crate) fn spawn_in(ns: &Netns, mut cmd: Command, log: &Path) -> Result<Child, LabError> {
    use std::os::unix::process::CommandExt;
    let program = cmd.get_program().to_string_lossy().into_owned();
    let out = File::create(log).map_err(LabError::io(format!("create {}", log.display())))?;
    let err = out
        .try_clone()
        .map_err(LabError::io(format!("reopen {}", log.display())))?;
    cmd.stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .process_group(0);
    // A child forked from a thread inside the namespace starts in it.
    ns.run(move || {
        cmd.spawn().map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                missing_tool(&program)
            } else {
                LabError::Io {
                    what: format!("start {program}"),
                    source: e,
                }
            }
        })
    })
}

/// The error for a missing tunnel program, naming its Debian package.
pub(crate) fn missing_tool(program: &str) -> LabError {
    let package = match program {
        "wg" => "wireguard-tools",
        other => other,
    };
    LabError::MissingTool {
        tool: program.to_owned(),
        package: package.to_owned(),
    }
}

/// Runs `cmd` inside `ns` to completion; a failure carries its output.
pub(crate) fn run_tool(ns: &Netns, mut cmd: Command) -> Result<String, LabError> {
    let program = cmd.get_program().to_string_lossy().into_owned();
    let line = format!("{cmd:?}");
    let out = ns.run(move || {
        cmd.stdin(Stdio::null()).output().map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                missing_tool(&program)
            } else {
                LabError::Io {
                    what: format!("run {program}"),
                    source: e,
                }
            }
        })
    })?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(tunnel_error(format!(
            "{line} in namespace {} failed ({}): {}",
            ns.name,
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )))
    }
}

/// A tunnel failure.
pub(crate) fn tunnel_error(reason: String) -> LabError {
    LabError::Tunnel { reason }
}

/// The last lines of a log, for error messages.
pub(crate) fn log_tail(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.len().saturating_sub(12);
    format!(
        "{} (last lines):\n{}",
        log.display(),
        lines[start..].join("\n")
    )
}

/// Polls `ready` every 20 ms until it says yes, a child exits or [`READY_TIMEOUT`] passes.
pub(crate) fn await_ready(
    what: &str,
    children: &mut [(&mut Child, &Path)],
    mut ready: impl FnMut() -> Result<bool, LabError>,
) -> Result<(), LabError> {
    let deadline = Instant::now() + READY_TIMEOUT;
    loop {
        if ready()? {
            return Ok(());
        }
        for (child, log) in children.iter_mut() {
            if let Ok(Some(status)) = child.try_wait() {
                return Err(tunnel_error(format!(
                    "{what}: a daemon exited ({status}) before the tunnel was ready; {}",
                    log_tail(log)
                )));
            }
        }
        if Instant::now() > deadline {
            let logs: Vec<String> = children.iter().map(|(_, l)| log_tail(l)).collect();
            return Err(tunnel_error(format!(
                "{what}: not ready after {} s; {}",
                READY_TIMEOUT.as_secs(),
                logs.join("\n")
            )));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Leaves `children` running (they are lab processes now) with a thread each that reaps
/// them when `lab down` kills them, so a long experiment leaves no zombies.
pub(crate) fn detach(children: Vec<Child>) {
    for mut c in children {
        std::thread::spawn(move || {
            let _ = c.wait();
        });
    }
}

/// Kills `children` (after a failed bring-up) and reaps them.
pub(crate) fn kill_all(children: &mut [Child]) {
    for c in children {
        let _ = c.kill();
        let _ = c.wait();
    }
}

/// Kills the daemons recorded in `state` that are still running the recorded program and
/// removes their control sockets (after `kill -9` of linerate the namespaces' processes are
/// found too; this catches a daemon whose namespace mount is already gone).
pub fn kill_recorded(t: &TunnelState) -> Vec<u32> {
    let mut killed = Vec::new();
    for p in &t.processes {
        let comm = std::fs::read_to_string(format!("/proc/{}/comm", p.pid)).unwrap_or_default();
        // comm is cut at 15 bytes: "wireguard-go" and "openvpn" fit.
        if comm.trim() == p.program
            && linerate_sys::process::kill(p.pid, linerate_sys::signal::Signal::SIGKILL).is_ok()
        {
            killed.push(p.pid);
        }
    }
    // SIGKILL is delivered asynchronously: return once every recorded daemon has exited (or
    // is a zombie, which runs nothing), so "down" means down.
    let deadline = Instant::now() + Duration::from_secs(3);
    while t.processes.iter().any(|p| running(p.pid)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    for s in &t.sockets {
        let _ = std::fs::remove_file(s);
    }
    killed
}

/// Whether `pid` exists and is not a zombie.
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| (*x).to_owned()).collect()
    }

    #[test]
    fn parses_kinds_and_options_and_names_bad_ones() {
        let t = TunnelSpec::parse("openvpn", &s(&["cipher=AES-128-GCM", "tun-mtu=9000"]));
        match t {
            Ok(TunnelSpec::Openvpn(o)) => {
                assert_eq!(o.cipher, "AES-128-GCM");
                assert_eq!(o.tun_mtu, Some(9000));
            }
            other => panic!("{other:?}"),
        }
        let e = TunnelSpec::parse("ipsec", &[]).err().unwrap_or_default();
        assert!(
            e.contains("ipsec") && e.contains("openvpn, wireguard"),
            "{e}"
        );
        let e = TunnelSpec::parse("openvpn", &s(&["tun-mtu=lots"]))
            .err()
            .unwrap_or_default();
        assert!(e.contains("tun-mtu") && e.contains("lots"), "{e}");
        let e = TunnelSpec::parse("wireguard", &s(&["cipher=x"]))
            .err()
            .unwrap_or_default();
        assert!(e.contains("cipher"), "{e}");
        let e = TunnelSpec::parse("wireguard", &s(&["mtu"]))
            .err()
            .unwrap_or_default();
        assert!(e.contains("KEY=VALUE"), "{e}");
    }

    #[test]
    fn default_interface_mtu_is_the_calc_prediction() -> Result<(), String> {
        let wg = TunnelSpec::parse("wireguard", &[])?;
        // IPv4 outer: 20 + 8 + 32 = 60 bytes of WireGuard overhead.
        assert_eq!(interface_mtu(&wg, 1500), 1440);
        assert_eq!(interface_mtu(&wg, 9000), 8940);
        let ovpn = TunnelSpec::parse("openvpn", &[])?;
        assert_eq!(interface_mtu(&ovpn, 1500), 1448);
        let ovpn = TunnelSpec::parse("openvpn", &s(&["tun-mtu=24000"]))?;
        assert_eq!(interface_mtu(&ovpn, 1500), 24000);
        let mss = predict(&wg, 1500).map(|r| r.tcp_mss.bytes());
        assert_eq!(mss, Some(1400));
        Ok(())
    }
}
