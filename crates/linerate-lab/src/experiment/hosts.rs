//! `[hosts]`: an experiment on real hosts reached over OpenSSH instead of a lab. `gen` sends,
//! `recv` receives at `address`; each names its `ssh` destination (`user@host`, or a `Host`
//! of the ssh config file `ssh_config` names), the `linerate` program there, whether settings
//! go through `sudo -n`, and the journal directory `tune --apply` keeps there.

use std::net::IpAddr;
use std::path::{Path, PathBuf};

use super::raw::{RawHost, RawHosts};
use super::{Ctx, ExperimentError};

/// Where an experiment's runs go when they go between real hosts.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct HostsSpec {
    /// The ssh config file every `ssh` is given (`-F`), when the file names one.
    pub ssh_config: Option<PathBuf>,
    /// The sending host (`[hosts.gen]`).
    #[serde(rename = "gen")]
    pub sender: HostSpec,
    /// The receiving host.
    pub recv: HostSpec,
}

impl HostsSpec {
    /// Both hosts, `gen` first.
    pub fn all(&self) -> [&HostSpec; 2] {
        [&self.sender, &self.recv]
    }
}

/// One host.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct HostSpec {
    /// Its role: `gen` or `recv` (the node name variants' sysctls use).
    pub role: String,
    /// The ssh destination.
    pub ssh: String,
    /// The address the traffic goes to (`recv`; optional for `gen`).
    pub address: Option<IpAddr>,
    /// The linerate program on the host.
    pub linerate: String,
    /// Settings and firewall through `sudo -n` (the user is not root there).
    pub sudo: bool,
    /// Where `tune --apply` journals on the host.
    pub journal_dir: String,
}

/// The default journal directory on a host, one per role (two roles may share a file system).
pub fn default_journal_dir(role: &str) -> String {
    format!("/var/lib/linerate/journal/experiment-{role}")
}

pub(super) fn parse(ctx: &Ctx<'_>, raw: &RawHosts) -> Result<HostsSpec, ExperimentError> {
    let ssh_config = raw.ssh_config.as_ref().map(|c| {
        let p = PathBuf::from(c.get_ref());
        if p.is_relative() {
            ctx.file.parent().unwrap_or(Path::new(".")).join(p)
        } else {
            p
        }
    });
    if let (Some(p), Some(c)) = (&ssh_config, &raw.ssh_config)
        && !p.is_file()
    {
        return Err(ctx.err(
            c.span(),
            "hosts.ssh_config",
            format!("{} is not a file", p.display()),
        ));
    }
    let gen_host = host(ctx, "gen", raw.sender.get_ref())?;
    let recv = host(ctx, "recv", raw.recv.get_ref())?;
    if recv.address.is_none() {
        return Err(ctx.err(
            raw.recv.span(),
            "hosts.recv.address",
            "is missing: the address on recv the traffic goes to (e.g. address = \"198.18.0.2\")",
        ));
    }
    Ok(HostsSpec {
        ssh_config,
        sender: gen_host,
        recv,
    })
}

fn host(ctx: &Ctx<'_>, role: &str, raw: &RawHost) -> Result<HostSpec, ExperimentError> {
    let field = |f: &str| format!("hosts.{role}.{f}");
    let ssh = raw.ssh.get_ref().trim().to_owned();
    if ssh.is_empty() || ssh.starts_with('-') || ssh.chars().any(char::is_whitespace) {
        return Err(ctx.err(
            raw.ssh.span(),
            &field("ssh"),
            "expected an ssh destination such as user@host (no spaces, not starting with -)",
        ));
    }
    let address = raw
        .address
        .as_ref()
        .map(|a| {
            a.get_ref().trim().parse::<IpAddr>().map_err(|_| {
                ctx.err(
                    a.span(),
                    &field("address"),
                    format!("{:?} is not an IP address", a.get_ref()),
                )
            })
        })
        .transpose()?;
    let word = |v: &Option<toml::Spanned<String>>, name: &str, default: String| match v {
        None => Ok(default),
        Some(s) if !s.get_ref().trim().is_empty() && !s.get_ref().contains(['\n', '\0']) => {
            Ok(s.get_ref().trim().to_owned())
        }
        Some(s) => Err(ctx.err(s.span(), &field(name), "must be a non-empty path")),
    };
    Ok(HostSpec {
        role: role.to_owned(),
        ssh,
        address,
        linerate: word(&raw.linerate, "linerate", "linerate".to_owned())?,
        sudo: raw.sudo.unwrap_or(false),
        journal_dir: word(&raw.journal_dir, "journal_dir", default_journal_dir(role))?,
    })
}
