//! The state file of a lab: written before anything is created and updated as bring-up goes,
//! so `lab down` can remove everything even after a crash or `kill -9`.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::LabError;
use crate::impair::Impairment;
use crate::spec::NodeSysctl;
use crate::topology::Topology;

/// Schema tag of the state file (and of `lab show --json`).
pub const SCHEMA: &str = "linerate.lab/1";

/// Default directory for state files.
pub const DEFAULT_DIR: &str = "/run/linerate/lab";

/// Environment variable that overrides the state directory (tests use it).
pub const DIR_ENV: &str = "LINERATE_LAB_STATE_DIR";

/// Which emulator a lab uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EmulatorKind {
    /// No link is emulated.
    None,
    /// Kernel netem on the link's interfaces.
    Kernel,
    /// linerate's userspace emulator in a middle namespace.
    Userspace,
}

impl std::fmt::Display for EmulatorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            EmulatorKind::None => "none",
            EmulatorKind::Kernel => "kernel netem",
            EmulatorKind::Userspace => "userspace (linerate lab emulate)",
        })
    }
}

/// Bring-up progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// `lab up` is running (or died): the lab may be partial.
    Creating,
    /// Complete.
    Up,
}

/// A lab as built.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct LabState {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// The lab name.
    pub name: String,
    /// The test bed.
    pub topology: Topology,
    /// Bring-up progress.
    pub status: Status,
    /// Process id of the `lab up` that made it.
    pub creator_pid: u32,
    /// Creation time (seconds since the epoch).
    pub created_unix: u64,
    /// The emulator in use.
    pub emulator: EmulatorKind,
    /// Every namespace the lab may own (created or about to be): `down` removes these.
    pub namespaces: Vec<String>,
    /// The nodes.
    pub nodes: Vec<NodeState>,
    /// The links.
    pub links: Vec<LinkState>,
    /// Sysctls applied in nodes (at bring-up and by `lab set`).
    pub sysctls: Vec<NodeSysctl>,
    /// Bring-up time in milliseconds.
    pub bringup_ms: Option<f64>,
    /// Firewall variants applied to nodes (latest per node).
    #[serde(default)]
    pub firewalls: Vec<NodeFirewall>,
    /// The tunnel between `gen` and `recv`, when the lab has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tunnel: Option<crate::tunnel::TunnelState>,
}

impl LabState {
    /// `l0`'s emulated rate toward `recv`, when the lab gives it one (veth alone has no line
    /// rate): the path's ceiling for RFC 2544's line rate and the client's limit verdict.
    pub fn l0_rate(&self) -> Option<linerate_units::BitRate> {
        self.links
            .iter()
            .find(|l| l.id == "l0")
            .and_then(|l| l.fwd.as_ref())
            .and_then(|i| i.rate)
    }
}

/// A firewall variant applied to a node.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct NodeFirewall {
    /// The node.
    pub node: String,
    /// The variant, e.g. `stateless:100`.
    pub variant: String,
    /// Rules each packet meets (generated variants).
    pub rules: Option<u32>,
}

/// One node.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct NodeState {
    /// `gen`, `dut`, `recv`.
    pub name: String,
    /// Its namespace.
    pub netns: String,
    /// Its interfaces.
    pub interfaces: Vec<IfaceState>,
}

/// One node interface.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct IfaceState {
    /// Interface name.
    pub name: String,
    /// Address with prefix, e.g. `198.18.0.1/24`.
    pub address: String,
    /// Hardware address.
    pub mac: String,
    /// The link it belongs to.
    pub link: String,
}

/// One link.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct LinkState {
    /// `l0`, `l1`.
    pub id: String,
    /// `node:interface` toward gen.
    pub a: String,
    /// `node:interface` toward recv.
    pub b: String,
    /// MTU.
    pub mtu: u32,
    /// Offloads on the nodes' interfaces.
    pub offloads: bool,
    /// Impairment toward recv, when emulated.
    pub fwd: Option<Impairment>,
    /// Impairment toward gen, when emulated.
    pub rev: Option<Impairment>,
    /// The emulator's namespace (userspace emulator).
    pub emulator_netns: Option<String>,
    /// The emulator process (userspace emulator).
    pub emulator_pid: Option<u32>,
    /// The emulator's counters file (userspace emulator).
    pub emulator_stats: Option<PathBuf>,
}

/// The directory of state files.
#[derive(Debug, Clone)]
pub struct StateDir {
    dir: PathBuf,
}

impl StateDir {
    /// `dir`, or `$LINERATE_LAB_STATE_DIR`, or /run/linerate/lab.
    pub fn resolve(dir: Option<PathBuf>) -> StateDir {
        let dir = dir
            .or_else(|| {
                std::env::var_os(DIR_ENV)
                    .filter(|v| !v.is_empty())
                    .map(PathBuf::from)
            })
            .unwrap_or_else(|| PathBuf::from(DEFAULT_DIR));
        StateDir { dir }
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The state file of lab `name`.
    pub fn file(&self, name: &str) -> PathBuf {
        self.dir.join(format!("{name}.json"))
    }

    /// A side file of lab `name` (emulator logs and counters).
    pub fn side_file(&self, name: &str, suffix: &str) -> PathBuf {
        self.dir.join(format!("{name}.{suffix}"))
    }

    fn ensure(&self) -> Result<(), LabError> {
        fs::create_dir_all(&self.dir).map_err(LabError::io(format!(
            "create state directory {}",
            self.dir.display()
        )))
    }

    fn encode(state: &LabState) -> Result<Vec<u8>, LabError> {
        let mut bytes = serde_json::to_vec_pretty(state).map_err(|e| LabError::Io {
            what: "encode state".into(),
            source: io::Error::other(e),
        })?;
        bytes.push(b'\n');
        Ok(bytes)
    }

    /// Writes the state of a new lab; fails if a state file for that name exists (atomically:
    /// the file appears whole, and never replaces another).
    pub fn create(&self, state: &LabState) -> Result<(), LabError> {
        self.ensure()?;
        let dst = self.file(&state.name);
        match linerate_sys::atomic_create(&dst, &Self::encode(state)?) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Err(LabError::Exists {
                name: state.name.clone(),
                why: format!("state file {} exists", dst.display()),
            }),
            Err(e) => Err(LabError::Io {
                what: format!("create {}", dst.display()),
                source: e,
            }),
        }
    }

    /// Replaces the state of an existing lab (temp file + rename).
    pub fn save(&self, state: &LabState) -> Result<(), LabError> {
        self.ensure()?;
        let dst = self.file(&state.name);
        linerate_sys::atomic_write(&dst, &Self::encode(state)?).map_err(|e| LabError::Io {
            what: format!("replace {}", dst.display()),
            source: e,
        })
    }

    /// Loads lab `name`; `Ok(None)` when there is no state file.
    pub fn load(&self, name: &str) -> Result<Option<LabState>, LabError> {
        let path = self.file(name);
        let bytes = match fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(LabError::Io {
                    what: format!("read {}", path.display()),
                    source: e,
                });
            }
        };
        let state: LabState = serde_json::from_slice(&bytes).map_err(|e| LabError::BadState {
            path: path.clone(),
            reason: e.to_string(),
        })?;
        if state.schema != SCHEMA {
            return Err(LabError::BadState {
                path,
                reason: format!("schema {:?}, expected {SCHEMA:?}", state.schema),
            });
        }
        Ok(Some(state))
    }

    /// Removes the state file and side files of lab `name`.
    pub fn remove(&self, name: &str) -> Result<(), LabError> {
        if let Ok(entries) = fs::read_dir(&self.dir) {
            let prefix = format!("{name}.");
            for e in entries.flatten() {
                let fname = e.file_name();
                let fname = fname.to_string_lossy();
                if fname.starts_with(&prefix) && fname != format!("{name}.json") {
                    let _ = fs::remove_file(e.path());
                }
            }
        }
        let path = self.file(name);
        match fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(LabError::Io {
                what: format!("remove {}", path.display()),
                source: e,
            }),
        }
    }

    /// Every lab with a state file, by name.
    pub fn list(&self) -> Result<Vec<Result<LabState, LabError>>, LabError> {
        let entries = match fs::read_dir(&self.dir) {
            Ok(e) => e,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => {
                return Err(LabError::Io {
                    what: format!("read {}", self.dir.display()),
                    source: e,
                });
            }
        };
        let mut names: Vec<String> = entries
            .flatten()
            .filter_map(|e| {
                let n = e.file_name().to_string_lossy().into_owned();
                n.strip_suffix(".json")
                    .filter(|s| !s.starts_with('.') && !s.contains('.'))
                    .map(str::to_owned)
            })
            .collect();
        names.sort();
        Ok(names
            .into_iter()
            .filter_map(|n| match self.load(&n) {
                Ok(Some(s)) => Some(Ok(s)),
                Ok(None) => None,
                Err(e) => Some(Err(e)),
            })
            .collect())
    }
}
