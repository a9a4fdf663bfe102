//! `linerate lab check`: experiment files are validated against the live host before anything
//! is built (sysctl scope probed in a throw-away namespace, which needs root).

#![forbid(unsafe_code)]

mod support;

use std::path::Path;

use support::bin::linerate;
use support::{require, root, tempdir};

fn check(file: &Path) -> std::process::Output {
    linerate()
        .args(["lab", "check"])
        .arg(file)
        .output()
        .expect("run linerate")
}

#[test]
fn the_examples_pass_and_a_host_only_key_is_refused_with_its_line() {
    require!(root());
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/lab");
    for name in [
        "window-buffers.toml",
        "router-firewall.toml",
        "rmem-sweep.toml",
    ] {
        let o = check(&examples.join(name));
        assert!(
            o.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(String::from_utf8_lossy(&o.stdout).contains("interleaved"));
    }
    let dir = tempdir();
    let bad = dir.path().join("bad.toml");
    let text = "[experiment]\nname = \"x\"\n[workload]\nmode = \"tcp\"\nduration = \"1s\"\n\
                [[variant]]\nname = \"a\"\nsysctl = [\"recv:net.core.netdev_max_backlog=1\"]\n";
    std::fs::write(&bad, text).expect("write the experiment file");
    let o = check(&bad);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!("{}:8:", bad.display())) && err.contains("variant[0].sysctl"),
        "{err}"
    );
    assert!(err.contains("not per network namespace"), "{err}");
}

#[test]
fn the_rfc2544_search_settings_are_planned_and_refused_where_they_do_not_belong() {
    require!(root());
    let example =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/lab/router-rfc2544.toml");
    let o = check(&example);
    let plan = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        plan.contains("search: pdr 0.5%, width 0.5%, phases 2, repeat 2"),
        "{plan}"
    );

    let dir = tempdir();
    let file = dir.path().join("tcp.toml");
    let text = "[experiment]\nname = \"x\"\n[workload]\nmode = \"tcp\"\nduration = \"1s\"\n\
                phases = 3\n";
    std::fs::write(&file, text).expect("write the experiment file");
    let o = check(&file);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!("{}:6:10: workload.phases", file.display())),
        "{err}"
    );
    assert!(err.contains("mode = \"rfc2544\""), "{err}");

    // `lab run --duration` may not cut the final trials below the file's first ones.
    let file = dir.path().join("rfc.toml");
    let text = "[experiment]\nname = \"x\"\n[lab]\ntopology = \"router\"\n[workload]\nmode = \
                \"rfc2544\"\nduration = \"2s\"\ninitial_trial = \"500ms\"\n";
    std::fs::write(&file, text).expect("write the experiment file");
    let o = linerate()
        .args(["lab", "run"])
        .arg(&file)
        .args(["--duration", "200ms", "--no-store"])
        .env("LINERATE_LAB_STATE_DIR", dir.path())
        .output()
        .expect("run linerate");
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--duration") && err.contains("initial_trial"),
        "{err}"
    );
}
