//! The experiment file as written: every value keeps its byte span so that errors can name
//! the line. Unknown keys are refused by serde with their position.

use serde::Deserialize;
use toml::Spanned;

/// A scalar as TOML allows it; quantities may be written `"1G"` or `1000000000`.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum Scalar {
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// A boolean.
    Bool(bool),
    /// A string.
    Str(String),
}

impl Scalar {
    /// The value as text, for the unit parsers.
    pub fn text(&self) -> String {
        match self {
            Scalar::Int(i) => i.to_string(),
            Scalar::Float(f) => f.to_string(),
            Scalar::Bool(b) => b.to_string(),
            Scalar::Str(s) => s.clone(),
        }
    }
}

/// One value or a list of `[TARGET=]VALUE` strings (`rate = ["l0=1G", "l1:rev=100M"]`).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum OneOrMany {
    /// One value for every link.
    One(Scalar),
    /// Several targeted values.
    Many(Vec<Scalar>),
}

impl OneOrMany {
    /// The values as text.
    pub fn texts(&self) -> Vec<String> {
        match self {
            OneOrMany::One(s) => vec![s.text()],
            OneOrMany::Many(v) => v.iter().map(Scalar::text).collect(),
        }
    }
}

/// The whole file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawFile {
    pub experiment: RawExperiment,
    pub lab: Option<RawLab>,
    pub workload: RawWorkload,
    #[serde(default)]
    pub variant: Vec<RawVariant>,
    pub sweep: Option<RawSweep>,
    pub hosts: Option<RawHosts>,
}

/// `[hosts]`: real hosts reached over SSH instead of a lab.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawHosts {
    pub ssh_config: Option<Spanned<String>>,
    #[serde(rename = "gen")]
    pub sender: Spanned<RawHost>,
    pub recv: Spanned<RawHost>,
}

/// `[hosts.gen]`, `[hosts.recv]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawHost {
    pub ssh: Spanned<String>,
    pub address: Option<Spanned<String>>,
    pub linerate: Option<Spanned<String>>,
    pub sudo: Option<bool>,
    pub journal_dir: Option<Spanned<String>>,
}

/// `[experiment]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawExperiment {
    pub name: Spanned<String>,
    pub description: Option<String>,
    pub repetitions: Option<Spanned<i64>>,
    pub lab_name: Option<Spanned<String>>,
}

/// Link options, in `[lab]` and in a variant's `link` table.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLink {
    pub rate: Option<Spanned<OneOrMany>>,
    pub delay: Option<Spanned<OneOrMany>>,
    pub jitter: Option<Spanned<OneOrMany>>,
    pub loss: Option<Spanned<OneOrMany>>,
    pub limit: Option<Spanned<OneOrMany>>,
    pub mtu: Option<Spanned<OneOrMany>>,
    pub offloads: Option<Spanned<OneOrMany>>,
    pub reorder: Option<Spanned<bool>>,
    pub rate_layer: Option<Spanned<String>>,
}

/// `[lab]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLab {
    pub topology: Option<Spanned<String>>,
    pub emulator: Option<Spanned<String>>,
    pub rate: Option<Spanned<OneOrMany>>,
    pub delay: Option<Spanned<OneOrMany>>,
    pub jitter: Option<Spanned<OneOrMany>>,
    pub loss: Option<Spanned<OneOrMany>>,
    pub limit: Option<Spanned<OneOrMany>>,
    pub mtu: Option<Spanned<OneOrMany>>,
    pub offloads: Option<Spanned<OneOrMany>>,
    pub reorder: Option<Spanned<bool>>,
    pub rate_layer: Option<Spanned<String>>,
    pub tunnel: Option<Spanned<String>>,
    #[serde(default)]
    pub tunnel_options: Vec<Spanned<String>>,
}

impl RawLab {
    /// The link options of `[lab]`.
    pub fn link(&self) -> RawLink {
        RawLink {
            rate: self.rate.clone(),
            delay: self.delay.clone(),
            jitter: self.jitter.clone(),
            loss: self.loss.clone(),
            limit: self.limit.clone(),
            mtu: self.mtu.clone(),
            offloads: self.offloads.clone(),
            reorder: self.reorder.clone(),
            rate_layer: self.rate_layer.clone(),
        }
    }
}

/// `[workload]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawWorkload {
    pub mode: Spanned<String>,
    pub duration: Spanned<Scalar>,
    pub streams: Option<Spanned<i64>>,
    pub length: Option<Spanned<Scalar>>,
    pub rate: Option<Spanned<Scalar>>,
    pub frame: Option<Spanned<Scalar>>,
    pub generator: Option<Spanned<String>>,
    pub pdr: Option<Spanned<Scalar>>,
    pub width: Option<Spanned<Scalar>>,
    pub phases: Option<Spanned<i64>>,
    pub repeat: Option<Spanned<i64>>,
    pub initial_trial: Option<Spanned<Scalar>>,
    pub latency: Option<Spanned<bool>>,
}

/// `[[variant]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawVariant {
    pub name: Spanned<String>,
    #[serde(default)]
    pub sysctl: Vec<Spanned<String>>,
    pub link: Option<RawLink>,
    pub firewall: Option<Spanned<String>>,
    pub streams: Option<Spanned<i64>>,
    pub tunnel: Option<Spanned<String>>,
    #[serde(default)]
    pub tunnel_options: Vec<Spanned<String>>,
}

/// `[sweep]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSweep {
    pub parameter: Spanned<String>,
    pub values: Spanned<Vec<Scalar>>,
    pub template: Option<Spanned<String>>,
}
