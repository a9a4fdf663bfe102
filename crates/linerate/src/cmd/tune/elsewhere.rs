//! `tune --apply`, `--dry-run`, `--persist` and `--rollback` on systems linerate cannot change
//! live (neither Linux nor FreeBSD): they say so; the generated files work everywhere.

use std::path::Path;
use std::process::ExitCode;

use linerate_tuning::profile::Profile;

use super::Args;

fn unsupported() -> anyhow::Error {
    linerate_sys::os::NotOnThisOs::needs(
        "Linux or FreeBSD",
        "changing settings live",
        "it writes /proc/sys (Linux) or sysctl(3) (FreeBSD)",
    )
    .instead("install the generated files (--format … --output DIR)")
    .into()
}

pub fn act(
    _args: &Args,
    _pairs: &[(String, String)],
    _explicit: bool,
    _profile: Option<&Profile>,
) -> anyhow::Result<ExitCode> {
    Err(unsupported())
}

pub fn rollback(_args: &Args, _journal: Option<&Path>) -> anyhow::Result<ExitCode> {
    Err(unsupported())
}
