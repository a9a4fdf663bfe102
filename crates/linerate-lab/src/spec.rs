//! What a lab should look like, validated: topology, per-link MTU/offloads/impairments, the
//! emulator choice and per-node sysctls. Values for links come as `[TARGET=]VALUE` where
//! TARGET is a link (`l0`) or one direction of it (`l0:fwd`, `l0:rev`; fwd is toward `recv`);
//! without a target the value applies to every link (and both directions).

use std::fmt;
use std::str::FromStr;

use linerate_units::{BitRate, Duration, Percent};

use crate::impair::{Impairment, RateLayer};
use crate::name::LabName;
use crate::topology::Topology;

/// A validation error that names the flag (or spec field) and the value.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{flag} {value:?}: {reason}")]
pub struct SpecError {
    /// The flag, e.g. `--delay`.
    pub flag: String,
    /// The value as given.
    pub value: String,
    /// What is wrong and what is expected.
    pub reason: String,
}

fn spec_err(flag: &str, value: &str, reason: impl Into<String>) -> SpecError {
    SpecError {
        flag: flag.to_owned(),
        value: value.to_owned(),
        reason: reason.into(),
    }
}

/// A direction of a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dir {
    /// From the `gen` side toward `recv`.
    Fwd,
    /// From the `recv` side toward `gen`.
    Rev,
}

/// Where a value applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// Every link, both directions.
    All,
    /// One link (`l0`), both directions.
    Link(usize),
    /// One direction of one link.
    Dir(usize, Dir),
}

/// A value with an optional target, as written on the command line.
#[derive(Debug, Clone, PartialEq)]
pub struct Targeted<T> {
    /// Where it applies.
    pub target: Target,
    /// The value.
    pub value: T,
    /// The text as given (for error messages).
    pub raw: String,
}

impl<T: FromStr> FromStr for Targeted<T>
where
    T::Err: fmt::Display,
{
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        Targeted::parse_with(s, str::parse::<T>)
    }
}

impl<T> Targeted<T> {
    /// Parses `[TARGET=]VALUE` with `parse` for the value (the command line's parser, which
    /// may insist on a unit).
    pub fn parse_with<E: fmt::Display>(
        s: &str,
        parse: impl FnOnce(&str) -> Result<T, E>,
    ) -> Result<Self, String> {
        let (target, value) = match s.split_once('=') {
            None => (Target::All, s),
            Some((t, v)) => (parse_target(t)?, v),
        };
        let value = parse(value).map_err(|e| e.to_string())?;
        Ok(Targeted {
            target,
            value,
            raw: s.to_owned(),
        })
    }
}

fn parse_target(t: &str) -> Result<Target, String> {
    let (link, dir) = match t.split_once(':') {
        None => (t, None),
        Some((l, d)) => (l, Some(d)),
    };
    let idx = link
        .strip_prefix('l')
        .and_then(|n| n.parse::<usize>().ok())
        .ok_or_else(|| {
            format!("unknown link {link:?}; links are l0 (and l1 in the router topology)")
        })?;
    match dir {
        None => Ok(Target::Link(idx)),
        Some("fwd") => Ok(Target::Dir(idx, Dir::Fwd)),
        Some("rev") => Ok(Target::Dir(idx, Dir::Rev)),
        Some(d) => Err(format!(
            "unknown direction {d:?}; expected fwd (toward recv) or rev"
        )),
    }
}

/// `on` or `off`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OnOff(pub bool);

impl FromStr for OnOff {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "on" => Ok(OnOff(true)),
            "off" => Ok(OnOff(false)),
            _ => Err(format!("expected on or off, got {s:?}")),
        }
    }
}

/// Link options as given (each flag may repeat with different targets; later wins).
#[derive(Debug, Clone, Default)]
pub struct LinkOptions {
    /// `--mtu`.
    pub mtu: Vec<Targeted<u32>>,
    /// `--offloads`.
    pub offloads: Vec<Targeted<OnOff>>,
    /// `--rate`.
    pub rate: Vec<Targeted<BitRate>>,
    /// `--delay`.
    pub delay: Vec<Targeted<Duration>>,
    /// `--jitter`.
    pub jitter: Vec<Targeted<Duration>>,
    /// `--loss`.
    pub loss: Vec<Targeted<Percent>>,
    /// `--limit`.
    pub limit: Vec<Targeted<u32>>,
    /// `--reorder`: jitter may reorder frames.
    pub reorder: bool,
    /// `--rate-layer`: which bytes of a frame `--rate` counts (every link).
    pub rate_layer: RateLayer,
}

/// Which link emulator to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EmulatorChoice {
    /// Kernel netem when the kernel has it, else the userspace emulator.
    #[default]
    Auto,
    /// Kernel netem only (fails when absent).
    Kernel,
    /// linerate's userspace emulator.
    Userspace,
}

impl FromStr for EmulatorChoice {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(EmulatorChoice::Auto),
            "kernel" => Ok(EmulatorChoice::Kernel),
            "userspace" => Ok(EmulatorChoice::Userspace),
            _ => Err(format!("expected auto, kernel or userspace, got {s:?}")),
        }
    }
}

/// A resolved link.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LinkSettings {
    /// MTU of every interface on the link.
    pub mtu: u32,
    /// Segmentation/checksum offloads on the nodes' interfaces.
    pub offloads: bool,
    /// Impairments toward `recv` and toward `gen`; `None` when the link is not emulated.
    pub emulation: Option<[Impairment; 2]>,
}

/// A sysctl for one node: `NODE:KEY=VALUE`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct NodeSysctl {
    /// The node (`gen`, `dut`, `recv`).
    pub node: String,
    /// The key, dotted (`net.ipv4.tcp_rmem`).
    pub key: String,
    /// The value to write.
    pub value: String,
}

impl NodeSysctl {
    /// Parses `KEY=VALUE` for `node`.
    pub fn parse_assignment(node: &str, s: &str) -> Result<NodeSysctl, String> {
        let (key, value) = s
            .split_once('=')
            .ok_or_else(|| format!("expected KEY=VALUE, got {s:?}"))?;
        let key = key.trim();
        if key.is_empty() {
            return Err(format!("empty key in {s:?}"));
        }
        Ok(NodeSysctl {
            node: node.to_owned(),
            key: key.to_owned(),
            value: value.trim().to_owned(),
        })
    }
}

impl FromStr for NodeSysctl {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (node, rest) = s
            .split_once(':')
            .ok_or_else(|| format!("expected NODE:KEY=VALUE, got {s:?}"))?;
        NodeSysctl::parse_assignment(node, rest)
    }
}

/// A complete, validated description of a lab.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LabSpec {
    /// The lab's name.
    pub name: LabName,
    /// The test bed.
    pub topology: Topology,
    /// One entry per link (`l0`, `l1`).
    pub links: Vec<LinkSettings>,
    /// Emulator choice.
    pub emulator: EmulatorChoice,
    /// Sysctls applied after bring-up.
    pub sysctls: Vec<NodeSysctl>,
    /// A tunnel between `gen` and `recv` over the links.
    #[serde(default)]
    pub tunnel: Option<crate::tunnel::TunnelSpec>,
}

impl LabSpec {
    /// Resolves and validates options against the topology.
    pub fn new(
        name: LabName,
        topology: Topology,
        opts: &LinkOptions,
        emulator: EmulatorChoice,
        sysctls: Vec<NodeSysctl>,
    ) -> Result<LabSpec, SpecError> {
        let n = topology.link_count();
        for s in &sysctls {
            if !topology.nodes().contains(&s.node.as_str()) {
                return Err(spec_err(
                    "--sysctl",
                    &format!("{}:{}={}", s.node, s.key, s.value),
                    format!(
                        "no node {:?} in the {topology} topology (nodes: {})",
                        s.node,
                        topology.nodes().join(", ")
                    ),
                ));
            }
        }
        let check_target =
            |flag: &str, raw: &str, t: Target, dirs_ok: bool| -> Result<(), SpecError> {
                let (idx, is_dir) = match t {
                    Target::All => return Ok(()),
                    Target::Link(i) => (i, false),
                    Target::Dir(i, _) => (i, true),
                };
                if idx >= n {
                    let links = (0..n)
                        .map(|i| format!("l{i}"))
                        .collect::<Vec<_>>()
                        .join(", ");
                    return Err(spec_err(
                        flag,
                        raw,
                        format!("no link l{idx} in the {topology} topology (links: {links})"),
                    ));
                }
                if is_dir && !dirs_ok {
                    return Err(spec_err(
                        flag,
                        raw,
                        "applies to a whole link; drop the :fwd/:rev",
                    ));
                }
                Ok(())
            };
        let applies = |t: Target, link: usize, dir: Option<Dir>| match t {
            Target::All => true,
            Target::Link(i) => i == link,
            Target::Dir(i, d) => i == link && dir.is_none_or(|x| x == d),
        };

        let mut links = Vec::with_capacity(n);
        for t in &opts.mtu {
            check_target("--mtu", &t.raw, t.target, false)?;
            if !(68..=65535).contains(&t.value) {
                return Err(spec_err(
                    "--mtu",
                    &t.raw,
                    "an MTU must be between 68 and 65535 bytes",
                ));
            }
        }
        for t in &opts.offloads {
            check_target("--offloads", &t.raw, t.target, false)?;
        }
        for t in &opts.rate {
            check_target("--rate", &t.raw, t.target, true)?;
            if t.value.as_f64() < 8.0 * 100.0 {
                return Err(spec_err(
                    "--rate",
                    &t.raw,
                    "a link rate must be at least 800 bit/s",
                ));
            }
        }
        for (flag, list) in [("--delay", &opts.delay), ("--jitter", &opts.jitter)] {
            for t in list {
                check_target(flag, &t.raw, t.target, true)?;
                if t.value > Duration::from_secs(60) {
                    return Err(spec_err(flag, &t.raw, "at most 60s"));
                }
            }
        }
        for t in &opts.loss {
            check_target("--loss", &t.raw, t.target, true)?;
            if t.value.percent() >= 100.0 {
                return Err(spec_err("--loss", &t.raw, "loss must be below 100%"));
            }
        }
        for t in &opts.limit {
            check_target("--limit", &t.raw, t.target, true)?;
            if t.value == 0 {
                return Err(spec_err(
                    "--limit",
                    &t.raw,
                    "the queue limit must be at least 1 frame",
                ));
            }
        }

        for link in 0..n {
            let mtu = last(&opts.mtu, |t| applies(t, link, None)).unwrap_or(1500);
            let named = |dir: Dir| {
                let hit = |t: Target| applies(t, link, Some(dir));
                opts.rate.iter().any(|t| hit(t.target))
                    || opts.delay.iter().any(|t| hit(t.target))
                    || opts.jitter.iter().any(|t| hit(t.target))
                    || opts.loss.iter().any(|t| hit(t.target))
                    || opts.limit.iter().any(|t| hit(t.target))
            };
            let emulated = named(Dir::Fwd) || named(Dir::Rev);
            // Emulated links default to offloads off: the emulator then sees wire-size frames,
            // so loss, serialisation and the queue limit act per frame as on a real wire.
            let offloads =
                last(&opts.offloads, |t| applies(t, link, None)).map_or(!emulated, |o| o.0);
            let emulation = emulated.then(|| {
                [Dir::Fwd, Dir::Rev].map(|dir| {
                    let hit = |t: Target| applies(t, link, Some(dir));
                    let rate = last(&opts.rate, hit);
                    let delay = last(&opts.delay, hit).unwrap_or_default();
                    let jitter = last(&opts.jitter, hit).unwrap_or_default();
                    let loss = last(&opts.loss, hit).unwrap_or_default();
                    let limit = last(&opts.limit, hit)
                        .unwrap_or_else(|| Impairment::default_limit(rate, delay, jitter, mtu));
                    Impairment {
                        rate,
                        delay,
                        jitter,
                        loss,
                        limit,
                        reorder: opts.reorder,
                        rate_layer: opts.rate_layer,
                    }
                })
            });
            links.push(LinkSettings {
                mtu,
                offloads,
                emulation,
            });
        }
        Ok(LabSpec {
            name,
            topology,
            links,
            emulator,
            sysctls,
            tunnel: None,
        })
    }

    /// Whether any link is emulated.
    pub fn any_emulated(&self) -> bool {
        self.links.iter().any(|l| l.emulation.is_some())
    }
}

fn last<T: Clone>(list: &[Targeted<T>], applies: impl Fn(Target) -> bool) -> Option<T> {
    list.iter()
        .rev()
        .find(|t| applies(t.target))
        .map(|t| t.value.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t<T: FromStr>(s: &str) -> Targeted<T>
    where
        T::Err: fmt::Display,
    {
        match s.parse() {
            Ok(v) => v,
            Err(e) => panic!("{s}: {e}"),
        }
    }

    fn name() -> LabName {
        match "x".parse() {
            Ok(n) => n,
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn untargeted_values_apply_everywhere_and_targets_override() -> Result<(), SpecError> {
        let opts = LinkOptions {
            delay: vec![t("10ms"), t("l1:rev=30ms")],
            rate: vec![t("l1=1G")],
            mtu: vec![t("9000"), t("l0=1500")],
            ..LinkOptions::default()
        };
        let spec = LabSpec::new(
            name(),
            Topology::Router,
            &opts,
            EmulatorChoice::Auto,
            vec![],
        )?;
        assert_eq!(spec.links[0].mtu, 1500);
        assert_eq!(spec.links[1].mtu, 9000);
        let l0 = spec.links[0].emulation.clone().unwrap_or_default();
        assert_eq!(l0[0].delay, Duration::from_millis(10));
        assert_eq!(l0[0].rate, None);
        let l1 = spec.links[1].emulation.clone().unwrap_or_default();
        assert_eq!(l1[0].delay, Duration::from_millis(10));
        assert_eq!(l1[1].delay, Duration::from_millis(30));
        assert_eq!(l1[1].rate, Some(BitRate::from_gbps(1)));
        Ok(())
    }

    #[test]
    fn a_link_without_impairment_flags_is_not_emulated() -> Result<(), SpecError> {
        let opts = LinkOptions {
            loss: vec![t("l1=1%")],
            ..LinkOptions::default()
        };
        let spec = LabSpec::new(
            name(),
            Topology::Router,
            &opts,
            EmulatorChoice::Auto,
            vec![],
        )?;
        assert!(spec.links[0].emulation.is_none());
        assert!(spec.links[1].emulation.is_some());
        Ok(())
    }

    #[test]
    fn errors_name_the_flag_and_value() {
        let opts = LinkOptions {
            delay: vec![t("l1=5ms")],
            ..LinkOptions::default()
        };
        let err = LabSpec::new(name(), Topology::Pair, &opts, EmulatorChoice::Auto, vec![]).err();
        let msg = err.map(|e| e.to_string()).unwrap_or_default();
        assert!(
            msg.contains("--delay") && msg.contains("l1=5ms") && msg.contains("no link l1"),
            "{msg}"
        );
        let opts = LinkOptions {
            mtu: vec![t("20")],
            ..LinkOptions::default()
        };
        let msg = LabSpec::new(name(), Topology::Pair, &opts, EmulatorChoice::Auto, vec![])
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(msg.contains("--mtu"), "{msg}");
        assert!("l0:up=1ms".parse::<Targeted<Duration>>().is_err());
        assert!("bogus=1ms".parse::<Targeted<Duration>>().is_err());
    }

    #[test]
    fn default_limit_covers_twice_the_bdp() {
        let l = Impairment::default_limit(
            Some(BitRate::from_gbps(1)),
            Duration::from_millis(20),
            Duration::ZERO,
            1500,
        );
        // 1 Gbit/s × 20 ms = 2.5 MB = 1651 frames of 1514 bytes; twice that.
        assert_eq!(l, 3303);
        assert_eq!(
            Impairment::default_limit(
                Some(BitRate::from_mbps(1)),
                Duration::from_millis(1),
                Duration::ZERO,
                1500
            ),
            1000
        );
    }
}
