//! The agent's systemd unit in contrib/fleet/ (issue 17): `systemd-analyze verify` finds
//! nothing wrong with it (no unknown key, no bad value), and it keeps the hardening a server
//! on the internet needs: its own dynamic user, no capability, a read-only system. (The
//! server's unit has its own test, contrib_service.rs.)

#![forbid(unsafe_code)]

mod support;

use std::path::Path;
use std::process::Command;

use support::{program, require, tempdir};

fn verify(unit: &str) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(unit);
    let text = std::fs::read_to_string(&src).expect("read the unit");
    for must in [
        "DynamicUser=yes",
        "CapabilityBoundingSet=\n",
        "NoNewPrivileges=yes",
        "ProtectSystem=strict",
        "SuccessExitStatus=130 143",
    ] {
        assert!(text.contains(must), "{unit} lacks {must:?}");
    }
    // verify wants the programs to exist: point them at this build and at kill(1).
    let kill = ["/bin/kill", "/usr/bin/kill"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .unwrap_or("/bin/kill");
    let dir = tempdir();
    let name = src.file_name().expect("file name");
    let copy = dir.path().join(name);
    std::fs::write(
        &copy,
        text.replace("/usr/local/bin/linerate", support::bin::BIN)
            .replace("/bin/kill", kill),
    )
    .expect("write");
    let o = Command::new("systemd-analyze")
        .args(["verify", "--man=no"])
        .arg(&copy)
        .output()
        .expect("run systemd-analyze");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        o.status.success() && !err.contains(name.to_string_lossy().as_ref()),
        "{unit}: {err}"
    );
}

#[test]
fn the_agent_unit_verifies_and_is_hardened() {
    require!(program("systemd-analyze"));
    verify("contrib/fleet/linerate-agent.service");
}
