//! `lab down`: kill every process inside the lab's namespaces (the emulators, anything started
//! with `lab exec`), unmount the namespaces (which destroys their interfaces) and remove the
//! state file. Works from the state file alone, whatever state the lab was left in.

use std::fs;
use std::os::linux::fs::MetadataExt;
use std::time::{Duration, Instant};

use crate::name::LabName;
use crate::state::StateDir;
use crate::{LabError, netns};
use linerate_sys::signal::Signal;

/// What `down` removed.
#[derive(Debug, Clone, serde::Serialize)]
pub struct DownReport {
    /// The lab.
    pub name: String,
    /// Namespaces removed.
    pub namespaces_removed: Vec<String>,
    /// Processes killed inside them.
    pub processes_killed: Vec<u32>,
    /// Whether a state file was found.
    pub had_state: bool,
}

/// Every namespace name any lab called `name` can have.
pub fn candidate_namespaces(name: &LabName) -> Vec<String> {
    ["gen", "dut", "recv", "l0", "l1"]
        .iter()
        .map(|s| name.derived(s))
        .collect()
}

/// Processes whose network namespace is one of `ids`.
fn processes_in(ids: &[(u64, u64)]) -> Vec<u32> {
    let me = std::process::id();
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()))
        .filter(|&pid| pid != me)
        .filter(|pid| {
            fs::metadata(format!("/proc/{pid}/ns/net"))
                .is_ok_and(|m| ids.contains(&(m.st_dev(), m.st_ino())))
        })
        .collect()
}

/// Kills every process inside namespaces `names` and waits (up to 3 s) until they are gone.
pub fn kill_processes_in(names: &[String]) -> Vec<u32> {
    let ids: Vec<(u64, u64)> = names.iter().filter_map(|n| netns::identity(n)).collect();
    if ids.is_empty() {
        return Vec::new();
    }
    let mut killed = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let pids = processes_in(&ids);
        if pids.is_empty() || Instant::now() > deadline {
            break;
        }
        for pid in pids {
            if linerate_sys::process::kill(pid, Signal::SIGKILL).is_ok() && !killed.contains(&pid) {
                killed.push(pid);
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    killed
}

/// Removes lab `name` completely.
pub fn down(dir: &StateDir, name: &LabName) -> Result<DownReport, LabError> {
    if !linerate_sys::is_root() {
        return Err(LabError::NotRoot);
    }
    let state = dir.load(name.as_str());
    let prefix = name.derived("");
    let mut names = candidate_namespaces(name);
    if let Ok(Some(s)) = &state {
        for n in &s.namespaces {
            if n.starts_with(&prefix) && !names.contains(n) {
                names.push(n.clone());
            }
        }
    }
    let present: Vec<String> = names.into_iter().filter(|n| netns::exists(n)).collect();
    let had_state = !matches!(state, Ok(None));
    if !had_state && present.is_empty() {
        return Err(LabError::NoSuchLab(name.to_string()));
    }
    let mut processes_killed = kill_processes_in(&present);
    if let Ok(Some(s)) = &state
        && let Some(t) = &s.tunnel
    {
        for pid in crate::tunnel::kill_recorded(t) {
            if !processes_killed.contains(&pid) {
                processes_killed.push(pid);
            }
        }
    }
    let mut namespaces_removed = Vec::new();
    let mut first_err = None;
    for n in &present {
        match netns::remove(n) {
            Ok(true) => namespaces_removed.push(n.clone()),
            Ok(false) => {}
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
    }
    if let Some(e) = first_err {
        return Err(e);
    }
    dir.remove(name.as_str())?;
    Ok(DownReport {
        name: name.to_string(),
        namespaces_removed,
        processes_killed,
        had_state,
    })
}
