//! Renderers: pure functions from a [`Profile`] to file contents. Every value is preceded by a
//! comment line with its formula (comment lines, never inline: Linux sysctl keeps inline `#`
//! text as part of the value).

use std::fmt::Write as _;
use std::str::FromStr;

use crate::os::Os;
use crate::profile::{Profile, Setting, Target};

/// An output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// Linux `/etc/sysctl.d/90-linerate.conf`.
    SysctlD,
    /// A tuned profile (`/etc/tuned/linerate/tuned.conf`, `[sysctl]` section).
    Tuned,
    /// FreeBSD `/boot/loader.conf`, `/etc/sysctl.conf` and `/etc/rc.conf` fragments.
    Freebsd,
    /// OpenBSD `/etc/sysctl.conf`.
    Openbsd,
    /// Windows PowerShell script (`netsh` and `Set-NetTCPSetting`).
    Powershell,
}

impl FromStr for Format {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "sysctl.d" | "sysctl" => Ok(Format::SysctlD),
            "tuned" => Ok(Format::Tuned),
            "freebsd" | "loader.conf" => Ok(Format::Freebsd),
            "openbsd" => Ok(Format::Openbsd),
            "powershell" | "ps1" => Ok(Format::Powershell),
            _ => Err(format!(
                "unknown format `{s}` (expected sysctl.d, tuned, freebsd, openbsd or powershell)"
            )),
        }
    }
}

impl Format {
    /// The natural format of `os`.
    pub fn default_for(os: Os) -> Format {
        match os {
            Os::Linux => Format::SysctlD,
            Os::Freebsd => Format::Freebsd,
            Os::Openbsd => Format::Openbsd,
            Os::Windows => Format::Powershell,
        }
    }

    /// The OS the format is for.
    pub fn os(self) -> Os {
        match self {
            Format::SysctlD | Format::Tuned => Os::Linux,
            Format::Freebsd => Os::Freebsd,
            Format::Openbsd => Os::Openbsd,
            Format::Powershell => Os::Windows,
        }
    }
}

/// One rendered file.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RenderedFile {
    /// Where it is installed.
    pub path: String,
    /// Its content.
    pub content: String,
}

/// The path `--persist` writes on Linux.
pub const SYSCTL_D_PATH: &str = "/etc/sysctl.d/90-linerate.conf";

/// Renders `profile` as `format`; the format must be for the profile's OS.
pub fn render(profile: &Profile, format: Format) -> Result<Vec<RenderedFile>, String> {
    if format.os() != profile.context.os {
        return Err(format!(
            "format {format:?} is for {}, the profile is for {}",
            format.os(),
            profile.context.os
        ));
    }
    Ok(match format {
        Format::SysctlD => vec![file(SYSCTL_D_PATH, profile, "#", Target::Sysctl, |s| {
            format!("{} = {}", s.key, s.value)
        })],
        Format::Tuned => vec![tuned(profile)],
        Format::Freebsd => vec![
            file("/boot/loader.conf", profile, "#", Target::Loader, |s| {
                format!("{}=\"{}\"", s.key, s.value)
            }),
            file("/etc/sysctl.conf", profile, "#", Target::Sysctl, |s| {
                format!("{}={}", s.key, s.value)
            }),
            file("/etc/rc.conf", profile, "#", Target::RcConf, |s| {
                format!("{}=\"{}\"", s.key, s.value)
            }),
        ],
        Format::Openbsd => vec![file(
            "/etc/sysctl.conf",
            profile,
            "#",
            Target::Sysctl,
            |s| format!("{}={}", s.key, s.value),
        )],
        Format::Powershell => vec![file(
            "linerate-tuning.ps1",
            profile,
            "#",
            Target::Netsh,
            powershell,
        )],
    })
}

fn header(profile: &Profile, comment: &str, path: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{comment} {path}");
    for line in profile.header() {
        let _ = writeln!(out, "{comment} {line}");
    }
    out
}

fn file(
    path: &str,
    profile: &Profile,
    comment: &str,
    target: Target,
    line: impl Fn(&Setting) -> String,
) -> RenderedFile {
    let mut out = header(profile, comment, path);
    let mut any = false;
    for s in profile.of(target) {
        any = true;
        let _ = writeln!(out, "\n{comment} {}", s.formula);
        let _ = writeln!(out, "{}", line(s));
    }
    let commands: Vec<&Setting> = profile.of(Target::Command).collect();
    if target == Target::Loader || target == Target::Netsh {
        // pf.conf lines and similar go with the boot file they belong beside.
        for c in &commands {
            any = true;
            let _ = writeln!(out, "\n{comment} {} ({}): {}", c.key, c.formula, c.value);
        }
    }
    if !any {
        let _ = writeln!(out, "\n{comment} Nothing to set here for these inputs.");
    }
    if target == Target::Sysctl || target == Target::Netsh {
        for note in &profile.notes {
            let _ = writeln!(out, "{comment} Note: {note}");
        }
    }
    RenderedFile {
        path: path.to_string(),
        content: out,
    }
}

fn tuned(profile: &Profile) -> RenderedFile {
    let path = "/etc/tuned/linerate/tuned.conf";
    let mut out = header(profile, "#", path);
    let c = &profile.context;
    let _ = writeln!(
        out,
        "\n[main]\nsummary=linerate: {} × {} as {} (derived, not copied)",
        c.rate.unwrap_or_default(),
        c.rtt.unwrap_or_default(),
        profile.role
    );
    let _ = writeln!(out, "\n[sysctl]");
    for s in profile.of(Target::Sysctl) {
        let _ = writeln!(out, "# {}\n{}={}", s.formula, s.key, s.value);
    }
    for note in &profile.notes {
        let _ = writeln!(out, "# Note: {note}");
    }
    RenderedFile {
        path: path.to_string(),
        content: out,
    }
}

fn capitalized(v: &str) -> String {
    match v {
        "highlyrestricted" => "HighlyRestricted".into(),
        _ => {
            let mut chars = v.chars();
            chars
                .next()
                .map(|c| c.to_uppercase().collect::<String>() + chars.as_str())
                .unwrap_or_default()
        }
    }
}

fn powershell(s: &Setting) -> String {
    let param = s.key.trim_start_matches("netsh.");
    let v = s.value.as_str();
    let sets = "Set-NetTCPSetting -SettingName InternetCustom,DatacenterCustom";
    match param {
        "autotuninglevel" => format!(
            "netsh int tcp set global autotuninglevel={v}\n{sets} -AutoTuningLevelLocal {}",
            capitalized(v)
        ),
        "timestamps" => format!(
            "netsh int tcp set global timestamps={v}\n{sets} -Timestamps {}",
            capitalized(v)
        ),
        "ecncapability" => format!(
            "netsh int tcp set global ecncapability={v}\n{sets} -EcnCapability {}",
            capitalized(v)
        ),
        "congestionprovider" => format!("{sets} -CongestionProvider {}", v.to_uppercase()),
        "forwarding" => format!(
            "Get-NetIPInterface | Set-NetIPInterface -Forwarding {}",
            capitalized(v)
        ),
        "rsc" if v == "disabled" => {
            "netsh int tcp set global rsc=disabled\nGet-NetAdapter | Disable-NetAdapterRsc".into()
        }
        "rss" if v == "enabled" => {
            "netsh int tcp set global rss=enabled\nGet-NetAdapter | Enable-NetAdapterRss".into()
        }
        other => format!("netsh int tcp set global {other}={v}"),
    }
}
/// The sysctl.d drop-in of `tune --persist --set`: the pairs as given, under a header that
/// says where it goes and what wrote it.
pub fn sysctl_d_for_pairs(pairs: &[(String, String)]) -> String {
    let mut c = format!("# {SYSCTL_D_PATH}\n# Written by linerate tune --persist --set.\n");
    for (k, v) in pairs {
        c.push_str(&format!("{k} = {v}\n"));
    }
    c
}
