use super::*;

fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
    p.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn backend() -> MemoryBackend {
    MemoryBackend::with(&[
        ("net.ipv4.tcp_rmem", "4096\t131072\t33554432"),
        ("net.ipv4.tcp_wmem", "4096 16384 4194304"),
        ("net.ipv4.tcp_mtu_probing", "0"),
        ("net.core.rmem_max", "4194304"),
        ("net.core.netdev_max_backlog", "1000"),
    ])
}

#[test]
fn plan_reports_diff_and_unchanged() {
    let mut b = backend();
    let p = plan(
        &mut b,
        &pairs(&[
            ("net.ipv4.tcp_rmem", "4096 131072 268435456"),
            ("net.ipv4.tcp_wmem", "4096  16384 4194304"),
        ]),
        false,
        false,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(p.changes.len(), 1);
    assert_eq!(p.changes[0].old, "4096 131072 33554432");
    assert_eq!(p.unchanged, vec!["net.ipv4.tcp_wmem".to_string()]);
}

#[test]
fn netns_skips_host_only_and_read_only_keys_with_reasons() {
    let mut b = backend();
    let wanted = pairs(&[
        ("net.ipv4.tcp_mtu_probing", "1"),
        ("net.core.rmem_max", "8388608"),
        ("net.core.netdev_max_backlog", "2048"),
    ]);
    let p = plan(&mut b, &wanted, true, false).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(p.changes.len(), 1);
    let reasons: Vec<(&str, &str)> = p
        .skipped
        .iter()
        .map(|s| (s.key.as_str(), s.reason.as_str()))
        .collect();
    assert!(reasons[0].1.starts_with("read-only inside"), "{reasons:?}");
    assert!(reasons[1].1.starts_with("host-only"), "{reasons:?}");
    // Asked for one by one, such a key is an error.
    let err = plan(
        &mut b,
        &pairs(&[("net.core.netdev_max_backlog", "2048")]),
        true,
        true,
    );
    assert!(
        matches!(err, Err(ApplyError::NotApplicable { .. })),
        "{err:?}"
    );
}

#[test]
fn a_rejected_write_restores_everything_already_changed() {
    let mut b = backend();
    b.reject.push("net.core.netdev_max_backlog".into());
    let before = b.values.clone();
    let wanted = pairs(&[
        ("net.ipv4.tcp_rmem", "4096 131072 268435456"),
        ("net.ipv4.tcp_mtu_probing", "1"),
        ("net.core.netdev_max_backlog", "2048"),
    ]);
    let p = plan(&mut b, &wanted, false, false).unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let jpath = dir.path().join("j.json");
    let err = execute(&mut b, &p, None, Some(&jpath));
    assert!(
        matches!(err, Err(ApplyError::Restored { restored: 3, .. })),
        "{err:?}"
    );
    assert_eq!(b.values, before);
    let j = Journal::load(&jpath).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(j.state, JournalState::Restored);
    assert_eq!(j.entries.len(), 3);
}

#[test]
fn a_read_back_mismatch_restores_too() {
    let mut b = backend();
    b.lie.insert("net.ipv4.tcp_mtu_probing".into(), "2".into());
    let before = b.values.clone();
    let p = plan(
        &mut b,
        &pairs(&[
            ("net.ipv4.tcp_rmem", "1 2 3"),
            ("net.ipv4.tcp_mtu_probing", "1"),
        ]),
        false,
        false,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let err = execute(&mut b, &p, None, None);
    match err {
        Err(ApplyError::Restored { cause, .. }) => {
            assert!(cause.contains("reads back `2`"), "{cause}")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(b.values, before);
}

#[test]
fn the_journal_is_written_before_the_first_change() {
    // A backend whose first write fails: the journal must already exist with the old values.
    let mut b = backend();
    b.reject.push("net.ipv4.tcp_rmem".into());
    let p = plan(
        &mut b,
        &pairs(&[("net.ipv4.tcp_rmem", "1 2 3")]),
        false,
        false,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let jpath = dir.path().join("j.json");
    let _ = execute(&mut b, &p, None, Some(&jpath));
    let j = Journal::load(&jpath).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(j.entries[0].old, "4096 131072 33554432");
}

#[test]
fn apply_then_rollback_restores_exactly() {
    let mut b = backend();
    let before = b.values.clone();
    let p = plan(
        &mut b,
        &pairs(&[
            ("net.ipv4.tcp_rmem", "4096 131072 268435456"),
            ("net.ipv4.tcp_mtu_probing", "1"),
        ]),
        false,
        false,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let mut j = execute(&mut b, &p, None, None).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(j.state, JournalState::Applied);
    assert_eq!(b.values["net.ipv4.tcp_mtu_probing"], "1");
    let restored = rollback(&mut b, &mut j).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(restored.len(), 2);
    assert_eq!(b.values, before);
    assert_eq!(j.state, JournalState::RolledBack);
}

#[test]
fn persist_is_atomic_and_touches_nothing_else() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        dir.path().join("99-user.conf"),
        "net.core.somaxconn = 8192\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let path =
        persist(dir.path(), "net.ipv4.tcp_mtu_probing = 1\n").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        path.file_name().and_then(|n| n.to_str()),
        Some("90-linerate.conf")
    );
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap_or_else(|e| panic!("{e}"))
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, vec!["90-linerate.conf", "99-user.conf"]);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("99-user.conf")).unwrap_or_default(),
        "net.core.somaxconn = 8192\n"
    );
}

#[test]
fn latest_journal_skips_rolled_back_ones() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut a = Journal::new(None, vec![]);
    a.state = JournalState::Applied;
    a.save(&dir.path().join("a.json"))
        .unwrap_or_else(|e| panic!("{e}"));
    let mut b = Journal::new(None, vec![]);
    b.state = JournalState::RolledBack;
    std::thread::sleep(std::time::Duration::from_millis(20));
    b.save(&dir.path().join("b.json"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        journal::latest(dir.path()).ok(),
        Some(dir.path().join("a.json"))
    );
    let empty = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    assert!(matches!(
        journal::latest(empty.path()),
        Err(JournalError::NoneFound(_))
    ));
}
