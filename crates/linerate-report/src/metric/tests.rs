//! Which value a run has in each metric, from real documents: the traffic engine's pps/rr
//! golden file, and a lab run's stored measure.

use linerate_store::{Latency, LatencyBucket, RunContext, RunRecord, RunSource};

use super::*;

/// `linerate client --mode pps --json` as the traffic engine writes it (its golden file).
fn pps_run() -> RunRecord {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../linerate-traffic/tests/data/golden/udp-pps.json");
    let text = std::fs::read_to_string(path).unwrap_or_default();
    RunRecord::from_iperf3_text(&text, &RunContext::new(RunSource::Client))
        .ok()
        .and_then(|mut r| r.pop())
        .unwrap_or_else(|| panic!("the golden pps document reads"))
}

#[test]
fn each_mode_has_its_metric_and_mixed_runs_fall_back_to_throughput() {
    assert_eq!(Metric::of_mode("tcp"), Metric::Throughput);
    assert_eq!(Metric::of_mode("udp"), Metric::Throughput);
    assert_eq!(Metric::of_mode("pps"), Metric::PacketRate);
    assert_eq!(Metric::of_mode("rr"), Metric::Transactions);
    assert_eq!(Metric::of_mode("crr"), Metric::Transactions);
    let pps = pps_run();
    assert_eq!(Metric::of_run(&pps), Metric::PacketRate);
    assert_eq!(Metric::of_runs([&pps, &pps]), Metric::PacketRate);
    let mut tcp = pps.clone();
    tcp.mode = "tcp".into();
    assert_eq!(Metric::of_runs([&pps, &tcp]), Metric::Throughput);
    assert_eq!(Metric::of_runs(std::iter::empty()), Metric::Throughput);
}

#[test]
fn a_pps_run_is_valued_in_received_packets() {
    let run = pps_run();
    let value = Metric::PacketRate.value(&run).ok().flatten();
    assert_eq!(value, Some(997.0));
    assert_eq!(packet_rate::sent(&run), Some(1000.0));
    assert_eq!(packet_rate::lost(&run), Some((3, Some(0.3))));
    assert_eq!(
        Metric::Throughput.value(&run).ok().flatten(),
        Some(run.summary.received_bps)
    );
}

#[test]
fn a_lab_run_is_valued_in_what_the_lab_compared() {
    let mut run = pps_run();
    run.mode = "udp".into(); // an iperf3 pps workload is stored as udp
    run.document["linerate"]["lab"] = serde_json::json!({
        "lab": "x", "topology": "pair", "emulator": "none", "links": [], "tunnel": null,
        "workload": "pps", "value": 990.5, "unit": "packet/s"
    });
    assert_eq!(Metric::of_run(&run), Metric::PacketRate);
    assert_eq!(Metric::PacketRate.value(&run).ok().flatten(), Some(990.5));
    // In another metric's unit the lab's value does not apply.
    assert_eq!(
        Metric::Throughput.value(&run).ok().flatten(),
        Some(run.summary.received_bps)
    );
    run.document["linerate"]["lab"]["value"] = "fast".into();
    assert!(Metric::PacketRate.value(&run).is_err());
}

#[test]
fn rr_runs_have_transactions_their_series_and_percentiles() {
    let run = pps_run(); // the golden document carries an rr result too
    assert_eq!(Metric::Transactions.value(&run).ok().flatten(), Some(10.0));
    let series = Metric::Transactions.series(&run);
    assert_eq!(
        series,
        vec![Step {
            start: 0.0,
            end: 1.0,
            value: 10.0
        }]
    );
    // Percentiles the engine stored are taken as they are; others from the buckets.
    let latency = Latency {
        buckets: [(10.0, 50), (20.0, 40), (40.0, 9), (80.0, 1)]
            .map(|(upper_us, count)| LatencyBucket { upper_us, count })
            .to_vec(),
        percentiles: vec![(50.0, 9.5)],
        mean_us: None,
    };
    assert_eq!(transactions::percentile(&latency, 50.0), Some(9.5));
    assert_eq!(transactions::percentile(&latency, 90.0), Some(20.0));
    assert_eq!(transactions::percentile(&latency, 99.0), Some(40.0));
    assert_eq!(transactions::percentile(&latency, 99.9), Some(80.0));
    assert_eq!(transactions::percentile(&Latency::default(), 50.0), None);
}

#[test]
fn columns_that_do_not_apply_have_no_cells() {
    let pps = pps_run();
    let cells = |m: Metric| -> Vec<&str> {
        m.columns()
            .iter()
            .filter(|c| (c.cell)(&pps).is_some())
            .map(|c| c.header)
            .collect()
    };
    assert_eq!(cells(Metric::PacketRate), ["Received", "Sent", "Lost"]);
    // A pps run has no TCP retransmits or RTT.
    assert!(!cells(Metric::Throughput).contains(&"RTT"));
    assert!(!cells(Metric::Throughput).contains(&"Retr"));
}
