//! Profile generation: every value is a formula of the inputs (rate, RTT, role, RAM, version),
//! and the formula travels with the value so renderers can write it beside it.

mod bsd;
mod linux;
mod windows;

use linerate_units::ByteSize;

use crate::catalogue::{CatalogueError, catalogue};
use crate::context::{Context, Role};
use crate::finding::Severity;
use crate::os::Os;
use crate::value::{Value, normalize};

/// Which file or mechanism a setting belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Target {
    /// A sysctl (Linux sysctl.d / tuned, BSD sysctl.conf).
    Sysctl,
    /// FreeBSD `/boot/loader.conf`.
    Loader,
    /// FreeBSD `/etc/rc.conf` variable.
    RcConf,
    /// Windows `netsh int tcp set global` / `Set-NetTCPSetting` parameter.
    Netsh,
    /// A command to run (ethtool, pf.conf line), not a key=value.
    Command,
}

/// One generated setting.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Setting {
    /// Knob name (or rc.conf variable, or a label for a command).
    pub key: String,
    /// Value (or the command line).
    pub value: String,
    /// How the value follows from the inputs, written beside it.
    pub formula: String,
    /// Where it goes.
    pub target: Target,
    /// How much it matters when the live value differs (audit).
    pub need: Severity,
}

/// A generated tuning profile.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Profile {
    /// The inputs.
    pub context: Context,
    /// Role used.
    pub role: Role,
    /// Bandwidth-delay product of the path.
    pub bdp: ByteSize,
    /// The settings, in output order.
    pub settings: Vec<Setting>,
    /// Things considered and left alone, with why.
    pub notes: Vec<String>,
}

/// Inputs that cannot make a profile.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// `--rate` or `--rtt` is missing.
    #[error("a profile needs the path: {0} is missing (e.g. --rate 10G --rtt 80ms)")]
    MissingInput(&'static str),
    /// The rate is zero.
    #[error("the rate must be above 0")]
    ZeroRate,
    /// An interface name that no OS accepts (and that would break the generated rc.conf).
    #[error(
        "--iface {0:?}: not an interface name (1-15 letters, digits, `_`, `.` or `-`, starting with a letter)"
    )]
    BadInterface(String),
    /// Catalogue failure.
    #[error(transparent)]
    Catalogue(#[from] CatalogueError),
}

/// Interface names as FreeBSD and Linux make them: a letter, then letters, digits, `_`, `.`
/// (VLANs) or `-`; at most 15 characters.
fn valid_interface_name(name: &str) -> bool {
    name.len() <= 15
        && name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

/// Generates the profile for `ctx` (role defaults to host).
pub fn generate(ctx: &Context) -> Result<Profile, ProfileError> {
    let rate = ctx.rate.ok_or(ProfileError::MissingInput("--rate"))?;
    if rate.bps() == 0 {
        return Err(ProfileError::ZeroRate);
    }
    let _ = ctx.rtt.ok_or(ProfileError::MissingInput("--rtt"))?;
    if let Some(bad) = ctx.ifaces.iter().find(|i| !valid_interface_name(i)) {
        return Err(ProfileError::BadInterface(bad.clone()));
    }
    let bdp = ctx.bdp().unwrap_or_default();
    let role = ctx.role.unwrap_or(Role::Host);
    let mut p = Profile {
        context: ctx.clone(),
        role,
        bdp,
        settings: Vec::new(),
        notes: Vec::new(),
    };
    match ctx.os {
        Os::Linux => linux::generate(&mut p),
        Os::Freebsd => bsd::freebsd(&mut p),
        Os::Openbsd => bsd::openbsd(&mut p),
        Os::Windows => windows::generate(&mut p),
    }
    drop_defaults(&mut p)?;
    Ok(p)
}

impl Profile {
    pub(crate) fn set(
        &mut self,
        target: Target,
        key: &str,
        value: impl ToString,
        need: Severity,
        formula: String,
    ) {
        self.settings.push(Setting {
            key: key.to_string(),
            value: value.to_string(),
            formula,
            target,
            need,
        });
    }

    /// The catalogue default of `key` on the target version, as integers.
    pub(crate) fn default_numbers(&self, key: &str) -> Vec<i64> {
        catalogue(self.context.os)
            .ok()
            .and_then(|c| c.get(key))
            .and_then(|k| Some((k.ty, k.default_on(&self.context.version)?)))
            .and_then(|(ty, d)| Value::parse(ty, d).ok())
            .map(|v| v.numbers())
            .unwrap_or_default()
    }

    /// The settings of one target.
    pub fn of(&self, target: Target) -> impl Iterator<Item = &Setting> {
        self.settings.iter().filter(move |s| s.target == target)
    }

    /// Human summary of the inputs, for file headers.
    pub fn header(&self) -> Vec<String> {
        let c = &self.context;
        let mut lines = vec![
            format!(
                "Generated by linerate tune for {} {} as {}.",
                c.os, c.version, self.role
            ),
            format!(
                "Path: {} × {} ⇒ BDP = rate × RTT / 8 = {}.",
                c.rate.unwrap_or_default(),
                c.rtt.unwrap_or_default(),
                crate::wording::bytes(self.bdp.bytes())
            ),
        ];
        let mut known = Vec::new();
        if let Some(ram) = c.ram {
            known.push(format!("RAM {}", crate::wording::bytes(ram.bytes())));
        }
        if let Some(cores) = c.cores {
            known.push(format!("{cores} cores"));
        }
        known.push(format!("MTU {}", c.mtu));
        lines.push(format!("Host: {}.", known.join(", ")));
        lines
    }
}

/// Settings equal to the target's default, or absent from the target version, are dropped (and
/// noted): the profile changes only what needs changing, so `lint` never calls it redundant.
fn drop_defaults(p: &mut Profile) -> Result<(), CatalogueError> {
    let cat = catalogue(p.context.os)?;
    let version = p.context.version.clone();
    let os = p.context.os;
    let mut notes = Vec::new();
    p.settings.retain(|s| {
        if !matches!(s.target, Target::Sysctl | Target::Loader | Target::Netsh) {
            return true;
        }
        let knob = cat.get(&s.key);
        if knob.is_some_and(|k| !k.exists_on(&version)) {
            notes.push(format!(
                "{} does not exist on {os} {version}; not set ({})",
                s.key, s.formula
            ));
            return false;
        }
        let default = knob.and_then(|k| k.default_on(&version));
        let same = default.is_some_and(|d| normalize(d) == normalize(&s.value));
        if same {
            notes.push(format!(
                "{} = {} is already the default; left alone ({})",
                s.key, s.value, s.formula
            ));
        }
        !same
    });
    p.notes.extend(notes);
    Ok(())
}

#[cfg(test)]
mod tests;
