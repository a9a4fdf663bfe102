//! What the RFC 2544 procedure needs from a test bed, and nothing more: trials of a frame size
//! at a load through the DUT, the generator's own ceiling into a sink (when the bed has a way
//! to measure it), a warm-up, and the link's rate. A lab's namespaces are one test bed
//! ([`super::namespaces`]); an external DUT cabled between two tester ports, or a receiver on
//! another host, are others.

use linerate_calc::ethernet::FrameSpec;
use linerate_iperf3::dut_limit::DutLimit;
use linerate_store::rfc2544::Latency;
use linerate_units::BitRate;

use crate::LabError;

/// What one trial counted.
#[derive(Debug, Clone, PartialEq)]
pub struct Counted {
    /// Frames the generator sent.
    pub sent: u64,
    /// The generator's own time, seconds.
    pub seconds: f64,
    /// Distinct frames the receiver counted.
    pub received: u64,
    /// Frames the receiver's own ring dropped (the counter's loss, not the DUT's).
    pub ring_drops: u64,
    /// One-way latency, when frames arrived and the bed can measure it.
    pub latency: Option<Latency>,
}

/// The rate of the link the DUT is measured on, and where that figure came from.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkRate {
    /// L1 bit rate.
    pub rate: BitRate,
    /// Where it came from (`the lab's l0 rate`).
    pub source: String,
}

/// A test bed the RFC 2544 procedure drives.
pub trait TestBed {
    /// The test bed's name, for the record (the lab's name).
    fn name(&self) -> String;

    /// The link rate that line rate is computed from.
    fn link_rate(&self) -> LinkRate;

    /// Sends a few frames through the DUT before measuring, so that it has learnt what it
    /// needs (neighbour entries, flow tables); an error when none arrive.
    fn warm_up(&mut self, frame: FrameSpec) -> Result<(), LabError>;

    /// The generator alone, as fast as it goes for `secs` seconds, counted where it arrives
    /// without the DUT forwarding; `None` when the test bed has no way to measure it.
    fn generator_ceiling(
        &mut self,
        frame: FrameSpec,
        secs: f64,
    ) -> Result<Option<Counted>, LabError>;

    /// Offers `frame` at `load` frames/s (`None`: as fast as the generator goes) through the
    /// DUT for `secs` seconds and counts what arrived.
    fn trial(
        &mut self,
        frame: FrameSpec,
        load: Option<f64>,
        secs: f64,
    ) -> Result<Counted, LabError>;

    /// Profiles every CPU during a trial at `load` frames/s for `secs` seconds and judges the
    /// DUT's CPU from it ([`linerate_explain::dut`]), when the DUT runs on this host (a lab's
    /// router); `None` when the test bed's DUT cannot be profiled from here (another host).
    /// A profile that cannot be taken is a [`DutLimit`] that says why, not an error.
    fn dut_limit(
        &mut self,
        _frame: FrameSpec,
        _load: f64,
        _secs: f64,
    ) -> Result<Option<DutLimit>, LabError> {
        Ok(None)
    }

    /// What resolving the test bed repaired before the first trial, for the record.
    fn repaired(&self) -> Option<String> {
        None
    }

    /// How the clocks of one-way latency were judged, when sender and receiver are not on
    /// one host's clock (a receiver on another host), for the record.
    fn clock(&self) -> Option<String> {
        None
    }
}
