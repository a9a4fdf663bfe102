//! Property tests of the lab's readers of untrusted files (issue 16, item 4): experiment TOML
//! and lab state files. Arbitrary or mutated input yields an error naming the file, never a
//! panic.

#![forbid(unsafe_code)]
// The lab (and its readers) exists on Linux only.
#![cfg(target_os = "linux")]

use std::path::Path;

use linerate_lab::experiment::{NoHostCheck, parse};
use linerate_lab::state::StateDir;
use proptest::prelude::*;

/// The shipped examples: the seeds that mutations start from.
fn examples() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/lab");
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            if let Ok(t) = std::fs::read_to_string(e.path()) {
                out.push(t);
            }
        }
    }
    out
}

#[test]
fn the_examples_parse() {
    let ex = examples();
    assert!(!ex.is_empty(), "no examples/lab/*.toml found");
    for t in ex {
        parse(&t, Path::new("example.toml"), &NoHostCheck).expect("an example parses");
    }
}

proptest! {
    #[test]
    fn arbitrary_bytes_as_an_experiment_never_panic(
        bytes in proptest::collection::vec(any::<u8>(), 0..2000)
    ) {
        let text = String::from_utf8_lossy(&bytes);
        let _ = parse(&text, Path::new("x.toml"), &NoHostCheck);
    }

    #[test]
    fn mutated_examples_never_panic(
        pick in any::<usize>(),
        edits in proptest::collection::vec((any::<usize>(), any::<u8>(), 0u8..3), 1..12),
    ) {
        let ex = examples();
        prop_assume!(!ex.is_empty());
        let mut bytes = ex[pick % ex.len()].clone().into_bytes();
        for (at, b, op) in edits {
            if bytes.is_empty() {
                break;
            }
            let at = at % bytes.len();
            match op {
                0 => bytes[at] = b,
                1 => { bytes.remove(at); }
                _ => bytes.insert(at, b),
            }
        }
        let text = String::from_utf8_lossy(&bytes);
        if let Err(e) = parse(&text, Path::new("m.toml"), &NoHostCheck) {
            prop_assert!(e.to_string().contains("m.toml"), "{e}");
        }
    }

    #[test]
    fn arbitrary_lab_state_files_never_panic(
        bytes in proptest::collection::vec(any::<u8>(), 0..2000),
        json in proptest::option::of("\\{\"schema\":\"[a-z./0-9]{0,20}\",\"name\":\"[a-z0-9-]{0,12}\"(,\"[a-z_]{1,10}\":(null|[0-9]{1,25}|\"[a-z ]{0,10}\"|\\[\\]|\\{\\}))*\\}"),
    ) {
        let dir = tempfile::tempdir().expect("tempdir");
        let states = StateDir::resolve(Some(dir.path().to_path_buf()));
        let content = json.map_or(bytes, String::into_bytes);
        std::fs::write(states.file("lr-fuzz"), &content).expect("write");
        if let Err(e) = states.load("lr-fuzz") {
            prop_assert!(e.to_string().contains("lr-fuzz.json"), "{e}");
        }
    }
}
