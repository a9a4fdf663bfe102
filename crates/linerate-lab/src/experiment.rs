//! Experiment specs (TOML): a lab, a workload, repetitions, named variants (per-node sysctls,
//! link parameters, MTU, offloads, DUT firewall) and an optional sweep of one parameter.
//! Everything is validated before anything is built; each error names the file, the line and
//! the field. See `examples/lab/*.toml` for annotated examples.

pub mod hosts;
mod link;
mod raw;
pub mod schedule;
mod search;

use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use linerate_units::{BitRate, ByteSize, Duration, Percent};
use toml::Spanned;

use crate::firewall::Firewall;
use crate::name::LabName;
use crate::spec::{EmulatorChoice, LabSpec, NodeSysctl};
use crate::topology::Topology;
pub use hosts::{HostSpec, HostsSpec};
use link::{Entry, LinkTexts};
use raw::RawFile;

/// An invalid experiment file: where and what.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub struct ExperimentError {
    /// The file.
    pub file: PathBuf,
    /// 1-based line (0 when the file could not be read).
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// The field, e.g. `variant[2].sysctl`.
    pub field: String,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ExperimentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Line 0: the file itself (could not be read); the message names it.
        if self.line == 0 {
            return f.write_str(&self.message);
        }
        write!(f, "{}:{}:{}: ", self.file.display(), self.line, self.column)?;
        if !self.field.is_empty() {
            write!(f, "{}: ", self.field)?;
        }
        f.write_str(&self.message)
    }
}

/// What load each run generates (through the traffic engine).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WorkloadMode {
    /// TCP throughput.
    Tcp,
    /// UDP throughput at a rate.
    Udp,
    /// Packets per second of small frames.
    Pps,
    /// Request/response latency.
    Rr,
    /// RFC 2544 throughput: NDR of `frame`-byte frames through the DUT (router labs), by the
    /// MLRsearch-style search with `duration` as the final trial.
    Rfc2544,
}

/// What sends a `pps` workload's frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PpsGenerator {
    /// `linerate gen` (raw frames from a TX ring), counted by `linerate gen --receive`.
    Frames,
    /// The traffic engine's UDP sockets (`linerate client --mode pps`), as before.
    Socket,
}

impl FromStr for PpsGenerator {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "frames" => Ok(PpsGenerator::Frames),
            "socket" => Ok(PpsGenerator::Socket),
            _ => Err(format!(
                "unknown generator {s:?}; expected frames or socket"
            )),
        }
    }
}

impl FromStr for WorkloadMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "tcp" => Ok(WorkloadMode::Tcp),
            "udp" => Ok(WorkloadMode::Udp),
            "pps" => Ok(WorkloadMode::Pps),
            "rr" => Ok(WorkloadMode::Rr),
            "rfc2544" => Ok(WorkloadMode::Rfc2544),
            _ => Err(format!(
                "unknown mode {s:?}; expected tcp, udp, pps, rr or rfc2544"
            )),
        }
    }
}

impl fmt::Display for WorkloadMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            WorkloadMode::Tcp => "tcp",
            WorkloadMode::Udp => "udp",
            WorkloadMode::Pps => "pps",
            WorkloadMode::Rr => "rr",
            WorkloadMode::Rfc2544 => "rfc2544",
        })
    }
}

/// One run's load: from `gen` to `recv`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Workload {
    /// The mode.
    pub mode: WorkloadMode,
    /// How long each run lasts.
    pub duration: Duration,
    /// Parallel streams.
    pub streams: u32,
    /// Write size.
    pub length: Option<ByteSize>,
    /// Target rate (udp).
    pub rate: Option<BitRate>,
    /// Frame size (pps, rfc2544).
    pub frame: Option<ByteSize>,
    /// What sends a pps workload (frames unless the file says socket); `None` for other modes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generator: Option<PpsGenerator>,
    /// PDR's loss ratio (rfc2544; `None`: the search's default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pdr: Option<Percent>,
    /// Width goal of the search (rfc2544).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub width: Option<Percent>,
    /// Phases of the search (rfc2544).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phases: Option<u32>,
    /// Final trials each bound must pass (rfc2544).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<u32>,
    /// Duration of the first phase's trials (rfc2544; at most `duration`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_trial: Option<Duration>,
    /// Latency trials at 10/50/90 % of NDR (rfc2544; `None`: yes, `false` skips them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<bool>,
}

/// One variant: the lab it needs, its firewall and its workload.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Variant {
    /// Its name.
    pub name: String,
    /// The complete lab for this variant (topology, links, sysctls).
    pub spec: LabSpec,
    /// Firewall on the DUT (or `recv` in a pair).
    pub firewall: Option<Firewall>,
    /// The load.
    pub workload: Workload,
}

/// A sweep of one parameter.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Sweep {
    /// The parameter, e.g. `recv:net.ipv4.tcp_rmem` or `link.mtu`.
    pub parameter: String,
    /// The values, as written.
    pub values: Vec<String>,
    /// The variants swept when there are several (a grid: variant `b`, value `v` is variant
    /// number `b × values + v`); empty when one base variant is swept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bases: Vec<String>,
}

/// A validated experiment. The first variant is the baseline.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Experiment {
    /// Its name.
    pub name: String,
    /// What it shows.
    pub description: Option<String>,
    /// Runs per variant.
    pub repetitions: u32,
    /// The lab's name.
    pub lab_name: LabName,
    /// The variants (one per sweep value when sweeping).
    pub variants: Vec<Variant>,
    /// The sweep, if any.
    pub sweep: Option<Sweep>,
    /// Real hosts over SSH instead of a lab (`[hosts]`); `None`: a lab.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hosts: Option<HostsSpec>,
}

/// Checks against the live host, injected so that parsing stays testable.
pub trait HostCheck {
    /// `Ok` when `key` can be set per network namespace; else the reason.
    fn sysctl(&self, key: &str) -> Result<(), String>;
    /// Whether the program `name` can be run.
    fn tool(&self, name: &str) -> bool;
}

/// No host checks (syntax and values only).
#[derive(Debug, Default)]
pub struct NoHostCheck;

impl HostCheck for NoHostCheck {
    fn sysctl(&self, _key: &str) -> Result<(), String> {
        Ok(())
    }
    fn tool(&self, _name: &str) -> bool {
        true
    }
}

/// The live host: sysctl keys are probed in a throw-away namespace.
#[derive(Debug, Default)]
pub struct LiveHost;

impl HostCheck for LiveHost {
    fn sysctl(&self, key: &str) -> Result<(), String> {
        crate::sysctl::probe_scope(key).map_err(|e| e.to_string())
    }
    fn tool(&self, name: &str) -> bool {
        std::process::Command::new(name)
            .arg("--version")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok()
    }
}

struct Ctx<'a> {
    text: &'a str,
    file: &'a Path,
}

impl Ctx<'_> {
    fn err(&self, span: Range<usize>, field: &str, message: impl Into<String>) -> ExperimentError {
        let start = span.start.min(self.text.len());
        let before = &self.text[..start];
        let line = before.matches('\n').count() + 1;
        let column = before.rfind('\n').map_or(start, |nl| start - nl - 1) + 1;
        ExperimentError {
            file: self.file.to_owned(),
            line,
            column,
            field: field.to_owned(),
            message: message.into(),
        }
    }
}

/// Everything a variant is made of before validation.
struct Draft {
    name: String,
    name_span: Range<usize>,
    link: LinkTexts,
    sysctls: Vec<Entry>,
    firewall: Option<Entry>,
    streams: Option<(i64, Range<usize>, String)>,
    /// The tunnel kind (the variant's, else `[lab]`'s).
    tunnel: Option<Entry>,
    /// Its options, `KEY=VALUE`, later entries winning.
    tunnel_options: Vec<Entry>,
}

fn entry(s: &Spanned<String>, field: String) -> Entry {
    Entry {
        text: s.get_ref().clone(),
        span: s.span(),
        field,
    }
}

/// Reads and validates an experiment file.
pub fn load(path: &Path, host: &dyn HostCheck) -> Result<Experiment, ExperimentError> {
    let text = std::fs::read_to_string(path).map_err(|e| ExperimentError {
        file: path.to_owned(),
        line: 0,
        column: 0,
        field: String::new(),
        message: format!("cannot open {}: {}", path.display(), os_reason(&e)),
    })?;
    parse(&text, path, host)
}

/// The operating system's reason without Rust's ` (os error N)` suffix.
fn os_reason(e: &std::io::Error) -> String {
    let text = e.to_string();
    match e.raw_os_error() {
        Some(code) => text
            .strip_suffix(&format!(" (os error {code})"))
            .unwrap_or(&text)
            .to_owned(),
        None => text,
    }
}

/// Validates experiment `text` (read from `file`, used in messages and for relative paths).
pub fn parse(text: &str, file: &Path, host: &dyn HostCheck) -> Result<Experiment, ExperimentError> {
    let ctx = Ctx { text, file };
    let raw: RawFile = toml::from_str(text).map_err(|e| {
        let span = e.span().unwrap_or(0..0);
        ctx.err(span, "", e.message().trim().to_owned())
    })?;
    let exp = &raw.experiment;
    let name = exp.name.get_ref().trim().to_owned();
    if name.is_empty() {
        return Err(ctx.err(exp.name.span(), "experiment.name", "must not be empty"));
    }
    let repetitions = match &exp.repetitions {
        None => 5,
        Some(r) => match u32::try_from(*r.get_ref()) {
            Ok(n) if (1..=1000).contains(&n) => n,
            _ => {
                return Err(ctx.err(
                    r.span(),
                    "experiment.repetitions",
                    "must be between 1 and 1000",
                ));
            }
        },
    };
    let lab_name = match &exp.lab_name {
        Some(n) => n
            .get_ref()
            .parse::<LabName>()
            .map_err(|e| ctx.err(n.span(), "experiment.lab_name", e.to_string()))?,
        None => format!("x{}", std::process::id() % 1_000_000)
            .parse::<LabName>()
            .map_err(|e| ctx.err(0..0, "experiment.lab_name", e.to_string()))?,
    };
    let hosts = match &raw.hosts {
        None => None,
        Some(h) => {
            if raw.lab.is_some() {
                return Err(ctx.err(
                    h.sender.span(),
                    "hosts",
                    "[hosts] runs between real hosts; [lab] (topology, links, tunnels) builds namespaces: an experiment has one or the other",
                ));
            }
            Some(hosts::parse(&ctx, h)?)
        }
    };
    let lab = raw.lab.unwrap_or_default();
    let topology = match &lab.topology {
        None => Topology::Pair,
        Some(t) => t
            .get_ref()
            .parse::<Topology>()
            .map_err(|e| ctx.err(t.span(), "lab.topology", e))?,
    };
    let emulator = match &lab.emulator {
        None => EmulatorChoice::Auto,
        Some(t) => t
            .get_ref()
            .parse::<EmulatorChoice>()
            .map_err(|e| ctx.err(t.span(), "lab.emulator", e))?,
    };
    let workload = workload(&ctx, &raw.workload)?;
    if workload.mode == WorkloadMode::Rfc2544 && topology != Topology::Router {
        return Err(ctx.err(
            raw.workload.mode.span(),
            "workload.mode",
            "rfc2544 measures a device under test: it needs lab.topology = \"router\"",
        ));
    }
    let base_link = LinkTexts::from_raw(&lab.link(), "lab.");
    let lab_tunnel = lab.tunnel.as_ref().map(|t| entry(t, "lab.tunnel".into()));
    let lab_tunnel_options: Vec<Entry> = lab
        .tunnel_options
        .iter()
        .map(|t| entry(t, "lab.tunnel_options".into()))
        .collect();

    let mut drafts: Vec<Draft> =
        raw.variant
            .iter()
            .enumerate()
            .map(|(i, v)| Draft {
                name: v.name.get_ref().trim().to_owned(),
                name_span: v.name.span(),
                link: v
                    .link
                    .as_ref()
                    .map(|l| LinkTexts::from_raw(l, &format!("variant[{i}].link.")))
                    .unwrap_or_default(),
                sysctls: v
                    .sysctl
                    .iter()
                    .map(|s| Entry {
                        text: s.get_ref().clone(),
                        span: s.span(),
                        field: format!("variant[{i}].sysctl"),
                    })
                    .collect(),
                firewall: v.firewall.as_ref().map(|f| Entry {
                    text: f.get_ref().clone(),
                    span: f.span(),
                    field: format!("variant[{i}].firewall"),
                }),
                streams: v
                    .streams
                    .as_ref()
                    .map(|s| (*s.get_ref(), s.span(), format!("variant[{i}].streams"))),
                tunnel: v
                    .tunnel
                    .as_ref()
                    .map(|t| entry(t, format!("variant[{i}].tunnel")))
                    .or_else(|| lab_tunnel.clone()),
                tunnel_options: {
                    // A variant naming another kind of tunnel does not inherit [lab]'s options.
                    let same_kind = v.tunnel.as_ref().is_none_or(|t| {
                        lab_tunnel.as_ref().is_some_and(|l| l.text == *t.get_ref())
                    });
                    let mut opts = if same_kind {
                        lab_tunnel_options.clone()
                    } else {
                        Vec::new()
                    };
                    opts.extend(
                        v.tunnel_options
                            .iter()
                            .map(|t| entry(t, format!("variant[{i}].tunnel_options"))),
                    );
                    opts
                },
            })
            .collect();
    if drafts.is_empty() {
        drafts.push(Draft {
            name: "baseline".into(),
            name_span: 0..0,
            link: LinkTexts::default(),
            sysctls: vec![],
            firewall: None,
            streams: None,
            tunnel: lab_tunnel.clone(),
            tunnel_options: lab_tunnel_options.clone(),
        });
    }

    let mut sweep_info = None;
    if let Some(sw) = &raw.sweep {
        // With several [[variant]]s the sweep runs over each of them (a grid: e.g. tun-mtu
        // values × ciphers); variant names then carry both.
        let bases = std::mem::take(&mut drafts);
        let several = bases.len() > 1;
        let param = sw.parameter.get_ref().trim().to_owned();
        let values: Vec<String> = sw.values.get_ref().iter().map(raw::Scalar::text).collect();
        if values.is_empty() {
            return Err(ctx.err(sw.values.span(), "sweep.values", "needs at least one value"));
        }
        let template = sw
            .template
            .as_ref()
            .map(|t| (t.get_ref().clone(), t.span()));
        if let Some((t, span)) = &template
            && !t.contains("{}")
        {
            return Err(ctx.err(
                span.clone(),
                "sweep.template",
                "must contain {} where the value goes",
            ));
        }
        for base in &bases {
            for v in &values {
                let filled = template
                    .as_ref()
                    .map_or(v.clone(), |(t, _)| t.replace("{}", v));
                let entry = Entry {
                    text: filled.clone(),
                    span: sw.values.span(),
                    field: "sweep.values".into(),
                };
                let mut d = Draft {
                    name: if several {
                        format!("{} {param}={v}", base.name)
                    } else {
                        format!("{param}={v}")
                    },
                    name_span: sw.values.span(),
                    link: base.link.clone(),
                    sysctls: base.sysctls.clone(),
                    firewall: base.firewall.clone(),
                    streams: base.streams.clone(),
                    tunnel: base.tunnel.clone(),
                    tunnel_options: base.tunnel_options.clone(),
                };
                if let Some(key) = param.strip_prefix("tunnel.") {
                    if d.tunnel.is_none() {
                        return Err(ctx.err(
                        sw.parameter.span(),
                        "sweep.parameter",
                        format!("{param:?} sweeps a tunnel option, but no tunnel is set (lab.tunnel = \"openvpn\" or \"wireguard\")"),
                    ));
                    }
                    d.tunnel_options.push(Entry {
                        text: format!("{key}={filled}"),
                        ..entry
                    });
                } else if let Some(field) = param.strip_prefix("link.") {
                    let Some(list) = d.link.list(field) else {
                        return Err(ctx.err(sw.parameter.span(), "sweep.parameter", format!("unknown link parameter {field:?}; expected rate, delay, jitter, loss, limit, mtu or offloads")));
                    };
                    list.push(entry);
                } else if param == "firewall" {
                    d.firewall = Some(entry);
                } else if param == "streams" {
                    let n = filled.parse::<i64>().map_err(|_| {
                        ctx.err(
                            sw.values.span(),
                            "sweep.values",
                            format!("streams must be integers, got {filled:?}"),
                        )
                    })?;
                    d.streams = Some((n, sw.values.span(), "sweep.values".into()));
                } else if param.contains(':') {
                    d.sysctls.push(Entry {
                        text: format!("{param}={filled}"),
                        ..entry
                    });
                } else {
                    return Err(ctx.err(
                    sw.parameter.span(),
                    "sweep.parameter",
                    format!("unknown parameter {param:?}; expected NODE:SYSCTL (e.g. recv:net.ipv4.tcp_rmem), link.rate, link.delay, link.loss, link.mtu, firewall, streams or tunnel.OPTION (e.g. tunnel.tun-mtu)"),
                ));
                }
                drafts.push(d);
            }
        }
        sweep_info = Some(Sweep {
            parameter: param,
            bases: if several {
                bases.iter().map(|b| b.name.clone()).collect()
            } else {
                Vec::new()
            },
            values,
        });
    }

    let mut variants = Vec::with_capacity(drafts.len());
    for (i, d) in drafts.iter().enumerate() {
        if hosts.is_some() {
            on_hosts(&ctx, d)?;
        }
        if d.name.is_empty() {
            return Err(ctx.err(
                d.name_span.clone(),
                &format!("variant[{i}].name"),
                "must not be empty",
            ));
        }
        if variants.iter().any(|v: &Variant| v.name == d.name) {
            return Err(ctx.err(
                d.name_span.clone(),
                &format!("variant[{i}].name"),
                format!("duplicate variant name {:?}", d.name),
            ));
        }
        let live: &dyn HostCheck = if hosts.is_some() { &NoHostCheck } else { host };
        variants.push(variant(
            &ctx,
            live,
            d,
            &lab_name,
            topology,
            emulator,
            &base_link,
            &workload,
            hosts.is_some(),
        )?);
    }
    Ok(Experiment {
        name,
        description: exp.description.clone(),
        repetitions,
        lab_name,
        variants,
        sweep: sweep_info,
        hosts,
    })
}

/// Refuses what only a lab can do in a variant on real hosts: emulated links, tunnels, a
/// user's nftables file (it flushes the host's whole ruleset, which a rollback cannot restore).
fn on_hosts(ctx: &Ctx<'_>, d: &Draft) -> Result<(), ExperimentError> {
    if let Some(e) = d.link.first() {
        return Err(ctx.err(
            e.span.clone(),
            &e.field,
            "links are emulated in a lab; on real hosts ([hosts]) the path is the real one",
        ));
    }
    if let Some(t) = &d.tunnel {
        return Err(ctx.err(
            t.span.clone(),
            &t.field,
            "tunnels are built in a lab; on real hosts ([hosts]) there is none to build",
        ));
    }
    if let Some(f) = &d.firewall
        && matches!(f.text.parse::<Firewall>(), Ok(Firewall::File(_)))
    {
        return Err(ctx.err(
            f.span.clone(),
            &f.field,
            "on real hosts only the generated firewalls (none, stateless:N, stateful) run: \
             they live in their own table, which the rollback removes; a file may flush the \
             host's own ruleset",
        ));
    }
    Ok(())
}

fn workload(ctx: &Ctx<'_>, w: &raw::RawWorkload) -> Result<Workload, ExperimentError> {
    let mode = w
        .mode
        .get_ref()
        .parse::<WorkloadMode>()
        .map_err(|e| ctx.err(w.mode.span(), "workload.mode", e))?;
    let duration = w
        .duration
        .get_ref()
        .text()
        .parse::<Duration>()
        .map_err(|e| ctx.err(w.duration.span(), "workload.duration", e.to_string()))?;
    if duration == Duration::ZERO || duration > Duration::from_secs(3600) {
        return Err(ctx.err(
            w.duration.span(),
            "workload.duration",
            "must be more than 0 and at most 1 hour",
        ));
    }
    let streams = match &w.streams {
        None => 1,
        Some(s) => streams(ctx, *s.get_ref(), s.span(), "workload.streams")?,
    };
    fn quantity<T: FromStr>(
        ctx: &Ctx<'_>,
        v: &Option<Spanned<raw::Scalar>>,
        field: &str,
    ) -> Result<Option<T>, ExperimentError>
    where
        T::Err: fmt::Display,
    {
        v.as_ref()
            .map(|s| {
                s.get_ref()
                    .text()
                    .parse::<T>()
                    .map_err(|e| ctx.err(s.span(), field, e.to_string()))
            })
            .transpose()
    }
    let length = quantity::<ByteSize>(ctx, &w.length, "workload.length")?;
    let rate = quantity::<BitRate>(ctx, &w.rate, "workload.rate")?;
    let mut frame = quantity::<ByteSize>(ctx, &w.frame, "workload.frame")?;
    let generator = match (&w.generator, mode) {
        (None, WorkloadMode::Pps) => Some(PpsGenerator::Frames),
        (None, _) => None,
        (Some(g), WorkloadMode::Pps) => Some(
            g.get_ref()
                .parse::<PpsGenerator>()
                .map_err(|e| ctx.err(g.span(), "workload.generator", e))?,
        ),
        (Some(g), _) => {
            return Err(ctx.err(
                g.span(),
                "workload.generator",
                format!("chooses what sends a pps workload; mode {mode} has none to choose"),
            ));
        }
    };
    if matches!(mode, WorkloadMode::Pps | WorkloadMode::Rfc2544) && frame.is_none() {
        frame = Some(ByteSize::from_bytes(64));
    }
    if let (Some(f), Some(s)) = (frame, &w.frame)
        && !(60..=9216).contains(&f.bytes())
    {
        return Err(ctx.err(
            s.span(),
            "workload.frame",
            "an Ethernet frame is 60 to 9216 bytes",
        ));
    }
    let search = search::options(ctx, w, mode, duration)?;
    Ok(Workload {
        mode,
        duration,
        streams,
        length,
        rate,
        frame,
        generator,
        pdr: search.pdr,
        width: search.width,
        phases: search.phases,
        repeat: search.repeat,
        initial_trial: search.initial_trial,
        latency: search.latency,
    })
}

fn streams(ctx: &Ctx<'_>, n: i64, span: Range<usize>, field: &str) -> Result<u32, ExperimentError> {
    match u32::try_from(n) {
        Ok(n) if (1..=128).contains(&n) => Ok(n),
        _ => Err(ctx.err(span, field, "must be between 1 and 128")),
    }
}

#[allow(clippy::too_many_arguments)]
fn variant(
    ctx: &Ctx<'_>,
    host: &dyn HostCheck,
    d: &Draft,
    lab_name: &LabName,
    topology: Topology,
    emulator: EmulatorChoice,
    base_link: &LinkTexts,
    base_workload: &Workload,
    on_hosts: bool,
) -> Result<Variant, ExperimentError> {
    let link = base_link.with(&d.link);
    let opts = link.options(ctx)?;
    let mut sysctls = Vec::new();
    for s in &d.sysctls {
        let parsed = s
            .text
            .parse::<NodeSysctl>()
            .map_err(|e| ctx.err(s.span.clone(), &s.field, e))?;
        if !topology.nodes().contains(&parsed.node.as_str()) {
            return Err(ctx.err(
                s.span.clone(),
                &s.field,
                format!(
                    "no node {:?} in the {topology} topology (nodes: {})",
                    parsed.node,
                    topology.nodes().join(", ")
                ),
            ));
        }
        // A real host takes any key; a lab's nodes only per-namespace ones.
        if !on_hosts {
            crate::sysctl::check_scope(&parsed.key)
                .map_err(|e| ctx.err(s.span.clone(), &s.field, e.to_string()))?;
        }
        host.sysctl(&parsed.key)
            .map_err(|e| ctx.err(s.span.clone(), &s.field, e))?;
        sysctls.push(parsed);
    }
    let mut spec = LabSpec::new(lab_name.clone(), topology, &opts, emulator, sysctls).map_err(
        |e| match link.blame(&e.flag) {
            Some(entry) => ctx.err(
                entry.span.clone(),
                &entry.field,
                format!("{:?}: {}", e.value, e.reason),
            ),
            None => ctx.err(d.name_span.clone(), "variant", e.to_string()),
        },
    )?;
    if let Some(kind) = &d.tunnel {
        let texts: Vec<String> = d.tunnel_options.iter().map(|e| e.text.clone()).collect();
        spec.tunnel = Some(
            crate::tunnel::TunnelSpec::parse(&kind.text, &texts).map_err(|e| {
                // Blame the option the message names, else the kind.
                let blamed = d
                    .tunnel_options
                    .iter()
                    .rev()
                    .find(|o| {
                        o.text.split('=').next().is_some_and(|k| {
                            e.contains(&format!("{}=", k.trim()))
                                || e.contains(&format!("{:?}", k.trim()))
                        })
                    })
                    .unwrap_or(kind);
                ctx.err(blamed.span.clone(), &blamed.field, e)
            })?,
        );
        let tool = match &spec.tunnel {
            Some(crate::tunnel::TunnelSpec::Openvpn(_)) => "openvpn",
            _ => "wg",
        };
        if !host.tool(tool) {
            return Err(ctx.err(
                kind.span.clone(),
                &kind.field,
                format!(
                    "needs {tool}, which is not installed: apt-get install {}",
                    if tool == "wg" {
                        "wireguard-tools"
                    } else {
                        tool
                    }
                ),
            ));
        }
    }
    let firewall = match &d.firewall {
        None => None,
        Some(f) => {
            let mut fw = f
                .text
                .parse::<Firewall>()
                .map_err(|e| ctx.err(f.span.clone(), &f.field, e))?;
            if let Firewall::File(p) = &fw
                && p.is_relative()
            {
                fw = Firewall::File(ctx.file.parent().unwrap_or(Path::new(".")).join(p));
            }
            if let Firewall::File(p) = &fw
                && !p.exists()
            {
                return Err(ctx.err(
                    f.span.clone(),
                    &f.field,
                    format!("firewall file {} does not exist", p.display()),
                ));
            }
            if fw != Firewall::None && !host.tool("nft") {
                return Err(ctx.err(
                    f.span.clone(),
                    &f.field,
                    "needs nft, which is not installed: apt-get install nftables",
                ));
            }
            Some(fw)
        }
    };
    let mut workload = base_workload.clone();
    if let Some((n, span, field)) = &d.streams {
        workload.streams = streams(ctx, *n, span.clone(), field)?;
    }
    Ok(Variant {
        name: d.name.clone(),
        spec,
        firewall,
        workload,
    })
}

#[cfg(test)]
mod tests;
