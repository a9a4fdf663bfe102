//! `lab up`: builds a lab from a [`LabSpec`] over netlink. The state file is written before
//! anything exists; stop signals are held back while building so that Ctrl-C or SIGTERM
//! removes what was made instead of leaving half a lab; any error tears everything down.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::emulator::EmulatorConfig;
use crate::netns::{self, Netns};
use crate::spec::LabSpec;
use crate::state::{
    EmulatorKind, IfaceState, LabState, LinkState, NodeState, SCHEMA, StateDir, Status,
};
use crate::sysctl::{self, SysctlWrite};
use crate::teardown;
use crate::topology::{mac, mac_string};
use crate::{LabError, netem};
use linerate_sys::ethtool::{Ethtool, Offload};
use linerate_sys::netlink::{Rtnl, VethEnd};
use linerate_sys::signal::{self, STOP_SIGNALS};

/// Test hook: milliseconds to pause right after the namespaces exist (signals held back), so
/// tests can kill `lab up` at a known point.
pub const PAUSE_ENV: &str = "LINERATE_LAB_PAUSE_MS";

/// How to build.
#[derive(Debug, Clone)]
pub struct UpOptions {
    /// Where state files go.
    pub state_dir: StateDir,
    /// The `linerate` executable that runs `lab emulate`.
    pub emulator_exe: PathBuf,
}

/// A built lab.
#[derive(Debug, Clone, serde::Serialize)]
pub struct UpReport {
    /// Its state (also in the state file).
    pub state: LabState,
    /// Sysctls written at bring-up.
    pub sysctls: Vec<SysctlWrite>,
}

struct Node {
    ns: Netns,
    rtnl: Rtnl,
    ctl: Ethtool,
}

fn initial_state(spec: &LabSpec) -> LabState {
    let name = &spec.name;
    let plan = spec.topology.plan();
    let tag = name.tag_byte();
    let nodes = spec
        .topology
        .nodes()
        .iter()
        .map(|&node| NodeState {
            name: node.to_owned(),
            netns: name.derived(node),
            interfaces: plan
                .links
                .iter()
                .enumerate()
                .flat_map(|(i, l)| {
                    [(i, &l.a, 0u8), (i, &l.b, 1u8)]
                        .into_iter()
                        .map(move |(i, e, end)| (i, l.id, e, end))
                })
                .filter(|(_, _, e, _)| e.node == node)
                .map(|(i, id, e, end)| IfaceState {
                    name: name.derived(e.suffix),
                    address: format!("{}/{}", e.addr, e.prefix),
                    mac: mac_string(&mac(tag, i, end)),
                    link: id.to_owned(),
                })
                .collect(),
        })
        .collect();
    let links = plan
        .links
        .iter()
        .zip(&spec.links)
        .map(|(l, s)| LinkState {
            id: l.id.to_owned(),
            a: format!("{}:{}", l.a.node, name.derived(l.a.suffix)),
            b: format!("{}:{}", l.b.node, name.derived(l.b.suffix)),
            mtu: s.mtu,
            offloads: s.offloads,
            fwd: s.emulation.as_ref().map(|e| e[0].clone()),
            rev: s.emulation.as_ref().map(|e| e[1].clone()),
            emulator_netns: None,
            emulator_pid: None,
            emulator_stats: None,
        })
        .collect();
    LabState {
        schema: SCHEMA.to_owned(),
        name: name.to_string(),
        topology: spec.topology,
        status: Status::Creating,
        creator_pid: std::process::id(),
        created_unix: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        emulator: EmulatorKind::None,
        namespaces: teardown::candidate_namespaces(name),
        nodes,
        links,
        sysctls: spec.sysctls.clone(),
        bringup_ms: None,
        firewalls: Vec::new(),
        tunnel: None,
    }
}

/// Builds the lab described by `spec`.
pub fn up(spec: &LabSpec, opts: &UpOptions) -> Result<UpReport, LabError> {
    if !linerate_sys::is_root() {
        return Err(LabError::NotRoot);
    }
    let started = Instant::now();
    let name = spec.name.as_str();
    if opts.state_dir.load(name)?.is_some() {
        return Err(LabError::Exists {
            name: name.to_owned(),
            why: format!("state file {} exists", opts.state_dir.file(name).display()),
        });
    }
    if let Some(ns) = teardown::candidate_namespaces(&spec.name)
        .into_iter()
        .find(|n| netns::exists(n))
    {
        return Err(LabError::Exists {
            name: name.to_owned(),
            why: format!("namespace {ns} exists"),
        });
    }
    // Refuse host-wide and unknown keys before anything exists.
    for s in &spec.sysctls {
        sysctl::probe_scope(&s.key)?;
    }
    let mut state = initial_state(spec);
    opts.state_dir.create(&state)?;
    let blocked = signal::Blocked::new(&STOP_SIGNALS);
    let built = build(spec, opts, &mut state);
    let signal = signal::take_pending(&STOP_SIGNALS).map(|s| s as i32);
    let outcome = match (built, signal) {
        (Ok(sysctls), None) => {
            state.status = Status::Up;
            state.bringup_ms = Some(started.elapsed().as_secs_f64() * 1e3);
            match opts.state_dir.save(&state) {
                Ok(()) => Ok(UpReport { state, sysctls }),
                Err(e) => Err(e),
            }
        }
        (_, Some(sig)) => Err(LabError::Interrupted(sig)),
        (Err(e), None) => Err(e),
    };
    if outcome.is_err() {
        let _ = teardown::down(&opts.state_dir, &spec.name);
    }
    drop(blocked);
    outcome
}

fn write_proc(path: &str, value: &str) -> Result<(), LabError> {
    std::fs::write(path, value).map_err(LabError::io(format!("write {value:?} to {path}")))
}

fn build(
    spec: &LabSpec,
    opts: &UpOptions,
    state: &mut LabState,
) -> Result<Vec<SysctlWrite>, LabError> {
    netns::prepare_dir()?;
    let name = &spec.name;
    let plan = spec.topology.plan();
    let tag = name.tag_byte();
    let mut nodes: HashMap<&str, Node> = HashMap::new();
    for &node in spec.topology.nodes() {
        let forwarding = plan.forwarding.contains(&node);
        let (ns, (rtnl, ctl)) = Netns::create(&name.derived(node), || {
            let mut rtnl = Rtnl::open().map_err(LabError::io("open a netlink socket"))?;
            rtnl.set_up(1, "lo")?;
            if forwarding {
                write_proc("/proc/sys/net/ipv4/ip_forward", "1")?;
            }
            let ctl = Ethtool::open().map_err(LabError::io("open a control socket"))?;
            Ok((rtnl, ctl))
        })?;
        nodes.insert(node, Node { ns, rtnl, ctl });
    }
    if let Some(ms) = std::env::var(PAUSE_ENV)
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        std::thread::sleep(Duration::from_millis(ms));
    }

    let kind = if !spec.any_emulated() {
        EmulatorKind::None
    } else {
        let gen_rtnl = &mut nodes.get_mut("gen").ok_or_else(|| missing("gen"))?.rtnl;
        let jitter_in_order = spec
            .links
            .iter()
            .filter_map(|l| l.emulation.as_ref())
            .flatten()
            .any(|i| i.jitter.as_nanos() > 0 && !i.reorder);
        match spec.emulator {
            crate::spec::EmulatorChoice::Userspace => EmulatorKind::Userspace,
            crate::spec::EmulatorChoice::Kernel => {
                if netem::available(gen_rtnl)? {
                    EmulatorKind::Kernel
                } else {
                    return Err(LabError::NoNetem);
                }
            }
            // netem reorders frames under jitter; keep order with the userspace emulator.
            crate::spec::EmulatorChoice::Auto if jitter_in_order => EmulatorKind::Userspace,
            crate::spec::EmulatorChoice::Auto => {
                if netem::available(gen_rtnl)? {
                    EmulatorKind::Kernel
                } else {
                    EmulatorKind::Userspace
                }
            }
        }
    };
    state.emulator = kind;
    opts.state_dir.save(state)?;

    let mut index: HashMap<&str, (&str, u32)> = HashMap::new();
    let mut middles: Vec<(usize, Netns)> = Vec::new();
    for (i, (lp, ls)) in plan.links.iter().zip(&spec.links).enumerate() {
        let a_if = name.derived(lp.a.suffix);
        let b_if = name.derived(lp.b.suffix);
        let (mac_a, mac_b) = (mac(tag, i, 0), mac(tag, i, 1));
        let userspace = ls.emulation.is_some() && kind == EmulatorKind::Userspace;
        {
            let a = nodes.get(lp.a.node).ok_or_else(|| missing(lp.a.node))?;
            let b = nodes.get(lp.b.node).ok_or_else(|| missing(lp.b.node))?;
            let end_a = VethEnd {
                name: &a_if,
                netns: a.ns.fd(),
                mtu: ls.mtu,
                mac: mac_a,
            };
            let end_b = VethEnd {
                name: &b_if,
                netns: b.ns.fd(),
                mtu: ls.mtu,
                mac: mac_b,
            };
            let mut creator = Rtnl::open().map_err(LabError::io("open a netlink socket"))?;
            if userspace {
                let (mns, mut mrtnl) = Netns::create(&name.derived(lp.id), || {
                    // Keep the wire quiet: no IPv6 link-local chatter from the emulator's ends.
                    let _ = write_proc("/proc/sys/net/ipv6/conf/default/disable_ipv6", "1");
                    let _ = write_proc("/proc/sys/net/ipv6/conf/all/disable_ipv6", "1");
                    Rtnl::open().map_err(LabError::io("open a netlink socket"))
                })?;
                let (mid_a, mid_b) = (
                    name.derived(&format!("{}a", lp.id)),
                    name.derived(&format!("{}b", lp.id)),
                );
                let m_a = VethEnd {
                    name: &mid_a,
                    netns: mns.fd(),
                    mtu: ls.mtu,
                    mac: mac(tag, i, 2),
                };
                let m_b = VethEnd {
                    name: &mid_b,
                    netns: mns.fd(),
                    mtu: ls.mtu,
                    mac: mac(tag, i, 3),
                };
                creator.create_veth(&end_a, &m_a).map_err(veth_error)?;
                creator.create_veth(&m_b, &end_b).map_err(veth_error)?;
                mrtnl.set_up_by_name(&mid_a)?;
                state.links[i].emulator_netns = Some(mns.name.clone());
                middles.push((i, mns));
            } else {
                creator.create_veth(&end_a, &end_b).map_err(veth_error)?;
            }
        }
        nodes
            .get_mut(lp.b.node)
            .ok_or_else(|| missing(lp.b.node))?
            .rtnl
            .set_up_by_name(&b_if)?;
        for (end, ifname, peer_addr, peer_mac) in [
            (&lp.a, &a_if, lp.b.addr, mac_b),
            (&lp.b, &b_if, lp.a.addr, mac_a),
        ] {
            let node = nodes.get_mut(end.node).ok_or_else(|| missing(end.node))?;
            if !ls.offloads {
                offloads_off(&node.ctl, ifname)?;
            }
            let idx = node.rtnl.link_index(ifname)?;
            node.rtnl.add_address(idx, end.addr, end.prefix)?;
            node.rtnl.add_neighbour(idx, peer_addr, peer_mac)?;
            if kind == EmulatorKind::Kernel
                && let Some(emu) = &ls.emulation
            {
                let dir = if std::ptr::eq(end, &lp.a) {
                    &emu[0]
                } else {
                    &emu[1]
                };
                node.rtnl
                    .add_root_qdisc(idx, "netem", Some(&netem::options(dir)))?;
            }
            index.insert(end.suffix, (end.node, idx));
        }
    }
    for r in &plan.routes {
        let (_, idx) = index
            .get(r.suffix)
            .copied()
            .ok_or_else(|| missing(r.suffix))?;
        nodes
            .get_mut(r.node)
            .ok_or_else(|| missing(r.node))?
            .rtnl
            .add_route(r.dst, r.prefix, r.via, idx)?;
    }
    let mut writes = Vec::new();
    for s in &spec.sysctls {
        let node = nodes.get(s.node.as_str()).ok_or_else(|| missing(&s.node))?;
        writes.push(sysctl::apply_in_node(&node.ns, &s.node, &s.key, &s.value)?);
    }
    for (i, mns) in &middles {
        let lp = &plan.links[*i];
        let emu = spec.links[*i].emulation.clone().unwrap_or_default();
        let stats = opts
            .state_dir
            .side_file(name.as_str(), &format!("{}.stats.json", lp.id));
        let cfg = EmulatorConfig {
            lab: name.to_string(),
            link: lp.id.to_owned(),
            netns: mns.name.clone(),
            iface_a: name.derived(&format!("{}a", lp.id)),
            iface_b: name.derived(&format!("{}b", lp.id)),
            fwd: emu[0].clone(),
            rev: emu[1].clone(),
            stats_file: Some(stats.clone()),
            seed: u64::from(std::process::id()) << 8 | *i as u64,
        };
        let log = opts
            .state_dir
            .side_file(name.as_str(), &format!("{}.log", lp.id));
        let pid = spawn_emulator(&opts.emulator_exe, &cfg, &log)?;
        state.links[*i].emulator_pid = Some(pid);
        state.links[*i].emulator_stats = Some(stats);
        opts.state_dir.save(state)?;
    }
    if let Some(t) = &spec.tunnel {
        let gen_ns = &nodes.get("gen").ok_or_else(|| missing("gen"))?.ns;
        let recv_ns = &nodes.get("recv").ok_or_else(|| missing("recv"))?.ns;
        let recv_underlay = plan
            .links
            .last()
            .map(|l| l.b.addr)
            .ok_or_else(|| missing("link"))?;
        let ctx = crate::tunnel::TunnelCtx {
            dir: opts.state_dir.dir().to_owned(),
            lab: name.as_str(),
            gen_ns,
            recv_ns,
            recv_underlay,
            gen_if: name.derived("tg"),
            recv_if: name.derived("tr"),
            link_mtu: spec.links.iter().map(|l| l.mtu).min().unwrap_or(1500),
        };
        let dir = &opts.state_dir;
        let built = crate::tunnel::up(t, &ctx, &mut |t| {
            state.tunnel = Some(t.clone());
            dir.save(state)
        })?;
        state.tunnel = Some(built);
    }
    Ok(writes)
}

fn missing(what: &str) -> LabError {
    LabError::Io {
        what: format!("internal: no {what} in the plan"),
        source: std::io::Error::other("topology plan mismatch"),
    }
}

fn veth_error(e: linerate_sys::netlink::NetlinkError) -> LabError {
    if e.errno() == Some(libc::EOPNOTSUPP) {
        LabError::NoVeth(e)
    } else {
        LabError::Netlink(e)
    }
}

/// Turns segmentation and checksum offloads off on `ifname` (TSO, GSO, GRO, SG, tx checksum).
fn offloads_off(ctl: &Ethtool, ifname: &str) -> Result<(), LabError> {
    for (offload, what) in [
        (Offload::Gro, "gro"),
        (Offload::Gso, "gso"),
        (Offload::Tso, "tso"),
        (Offload::ScatterGather, "sg"),
        (Offload::TxChecksum, "tx-checksumming"),
    ] {
        ctl.set_offload(ifname, offload, false)
            .map_err(LabError::io(format!("turn {what} off on {ifname}")))?;
    }
    Ok(())
}

fn spawn_emulator(exe: &Path, cfg: &EmulatorConfig, log: &Path) -> Result<u32, LabError> {
    let err = |reason: String| LabError::Emulator {
        link: cfg.link.clone(),
        reason,
    };
    let json = serde_json::to_string(cfg).map_err(|e| err(e.to_string()))?;
    let log_file = File::create(log).map_err(LabError::io(format!("create {}", log.display())))?;
    let mut child = Command::new(exe)
        .args(["lab", "emulate", "--config"])
        .arg(json)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(log_file)
        .process_group(0)
        .spawn()
        .map_err(|e| err(format!("start {}: {e}", exe.display())))?;
    let pid = child.id();
    let Some(stdout) = child.stdout.take() else {
        return Err(err("no stdout pipe".into()));
    };
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    match rx.recv_timeout(Duration::from_secs(10)) {
        Ok(line) if line.trim() == "ready" => Ok(pid),
        _ => {
            let _ = child.kill();
            let _ = child.wait();
            let log_text = std::fs::read_to_string(log).unwrap_or_default();
            Err(err(format!("did not start: {}", log_text.trim())))
        }
    }
}
