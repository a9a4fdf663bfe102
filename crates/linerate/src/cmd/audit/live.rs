//! The settings in force on this host, for `audit` without `--snapshot`: `/proc/sys` on Linux
//! (the host's or a named network namespace's), `sysctl(3)` on FreeBSD; other systems have
//! no live reader and say so.

use linerate_tuning::parse::Entry;
use linerate_tuning::{Context, Os};

use super::{Args, context};

/// Where the values came from, the rules' context, and the values.
#[cfg(target_os = "linux")]
pub fn settings(args: &Args) -> anyhow::Result<(String, Context, Vec<Entry>)> {
    use linerate_tuning::apply::{self, ProcSys};
    use linerate_tuning::audit;

    let ctx = context(args, Os::Linux, true);
    let (source, entries) = match &args.netns {
        None => (
            "/proc/sys".to_string(),
            audit::read_live(&mut ProcSys::new(), "/proc/sys")?,
        ),
        Some(name) => {
            let src = format!("netns {name}:/proc/sys");
            let entries =
                apply::netns::run_in(name, None, |_| audit::read_live(&mut ProcSys::new(), &src))??;
            (src, entries)
        }
    };
    Ok((source, ctx, entries))
}

/// Where the values came from, the rules' context, and the values.
#[cfg(target_os = "freebsd")]
pub fn settings(args: &Args) -> anyhow::Result<(String, Context, Vec<Entry>)> {
    use linerate_tuning::apply::freebsd::{LiveSysctls, SysctlBackend};
    use linerate_tuning::audit;

    if args.netns.is_some() {
        return Err(linerate_sys::os::NotOnThisOs::linux(
            "--netns",
            "it names a network namespace",
        )
        .instead(
            "run linerate audit inside the jail (jexec JAIL linerate audit) to judge a \
                     vnet jail's settings",
        )
        .into());
    }
    let ctx = context(args, Os::Freebsd, true);
    let devices = linerate_probe::freebsd::live::nic_nodes();
    let entries =
        audit::read_live_freebsd(&mut SysctlBackend::new(LiveSysctls), "this host:", &devices)?;
    Ok(("sysctl(3)".to_string(), ctx, entries))
}

/// Where the values came from, the rules' context, and the values.
#[cfg(not(any(target_os = "linux", target_os = "freebsd")))]
pub fn settings(_args: &Args) -> anyhow::Result<(String, Context, Vec<Entry>)> {
    Err(linerate_sys::os::NotOnThisOs::needs(
        "Linux or FreeBSD",
        "a live audit",
        "it reads /proc/sys (Linux) or sysctl(3) (FreeBSD)",
    )
    .instead("audit this host's `sysctl -a` output with --snapshot FILE")
    .into())
}
