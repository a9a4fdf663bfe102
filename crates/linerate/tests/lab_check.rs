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
