//! A lab's namespaces as an RFC 2544 test bed: trials from `gen` through the DUT to `recv`
//! ([`super::trial`]), the generator's ceiling into the DUT with forwarding off, counted at its
//! ingress ([`super::forwarding`] puts forwarding back, also after a kill), and the link rate
//! of the lab's `l0` link (veth's nominal 10 Gbit/s when the lab emulates none).

use std::path::PathBuf;

use linerate_calc::ethernet::FrameSpec;
use linerate_explain::dut;
use linerate_iperf3::dut_limit::DutLimit;
use linerate_profile::cpus::online_cpus;
use linerate_profile::{Capture, Target};
use linerate_units::BitRate;

use super::bed::{Counted, LinkRate, TestBed};
use super::forwarding::{ForwardingOff, Restored};
use super::path::LabPath;
use super::trial::{self, Counter};
use crate::LabError;
use crate::netns::Netns;
use crate::state::{LabState, StateDir};

/// Samples per second and CPU of the DUT's profile.
const DUT_PROFILE_HZ: u64 = 199;

/// A lab as a test bed.
pub struct Namespaces<'a> {
    path: LabPath,
    lab: String,
    link: LinkRate,
    /// The path goes through a router's DUT, whose CPU can be profiled.
    router: bool,
    interrupted: &'a dyn Fn() -> bool,
}

impl<'a> Namespaces<'a> {
    /// The test bed through a `router` lab's DUT (other topologies are refused), with
    /// `threads` sending threads; `interrupted` ends a trial early. Resolving it repairs what an
    /// interrupted ceiling measurement left ([`Namespaces::restored`]).
    pub fn router(
        dir: &StateDir,
        lab: &LabState,
        binary: PathBuf,
        threads: u16,
        interrupted: &'a dyn Fn() -> bool,
    ) -> Result<Namespaces<'a>, LabError> {
        Ok(Namespaces {
            path: LabPath::of(dir, lab, binary, threads)?,
            lab: lab.name.clone(),
            link: link_rate(lab),
            router: true,
            interrupted,
        })
    }

    /// The test bed from `gen` to `recv` of any lab without a tunnel (through the DUT of a
    /// router lab, straight to `recv` in a pair).
    pub fn through(
        dir: &StateDir,
        lab: &LabState,
        binary: PathBuf,
        threads: u16,
        interrupted: &'a dyn Fn() -> bool,
    ) -> Result<Namespaces<'a>, LabError> {
        Ok(Namespaces {
            path: LabPath::through(dir, lab, binary, threads)?,
            lab: lab.name.clone(),
            link: link_rate(lab),
            router: lab.topology == crate::topology::Topology::Router,
            interrupted,
        })
    }

    /// `ip_forward` put back in the DUT when an interrupted ceiling measurement had left it
    /// off.
    pub fn restored(&self) -> Option<&Restored> {
        self.path.restored.as_ref()
    }
}

/// The lab's link rate: `l0`'s emulated rate toward `recv`, else veth's nominal 10 Gbit/s.
pub fn link_rate(lab: &LabState) -> LinkRate {
    match lab.l0_rate() {
        Some(rate) => LinkRate {
            rate,
            source: "the lab's l0 rate".into(),
        },
        None => LinkRate {
            rate: BitRate::from_bps_f64(10e9),
            source: "veth's nominal 10 Gbit/s (the lab's links have no rate)".into(),
        },
    }
}

impl TestBed for Namespaces<'_> {
    fn name(&self) -> String {
        self.lab.clone()
    }

    fn link_rate(&self) -> LinkRate {
        self.link.clone()
    }

    /// A few frames through the DUT, so that its neighbour entry for `recv` is resolved (the
    /// first frames would otherwise wait for ARP, or be lost, in a zero-loss trial).
    fn warm_up(&mut self, frame: FrameSpec) -> Result<(), LabError> {
        let c = trial::run(
            &self.path,
            &frame.to_string(),
            Some(1000.0),
            0.3,
            Counter::Recv,
            self.interrupted,
        )?;
        if c.received == 0 {
            return Err(LabError::Io {
                what: format!(
                    "no frame sent from gen ({}) reached recv ({}) through the DUT: is \
                     forwarding on and the path open?",
                    self.path.src_ip, self.path.dst_ip
                ),
                source: std::io::Error::from(std::io::ErrorKind::NotConnected),
            });
        }
        Ok(())
    }

    /// Into the DUT with forwarding off, counted at the DUT's ingress.
    fn generator_ceiling(
        &mut self,
        frame: FrameSpec,
        secs: f64,
    ) -> Result<Option<Counted>, LabError> {
        let dut = Netns::open(&self.path.dut_netns)?;
        let _off = ForwardingOff::new(&dut, &self.path.forwarding_marker)?;
        trial::run(
            &self.path,
            &frame.to_string(),
            None,
            secs,
            Counter::DutIngress,
            self.interrupted,
        )
        .map(Some)
    }

    fn trial(
        &mut self,
        frame: FrameSpec,
        load: Option<f64>,
        secs: f64,
    ) -> Result<Counted, LabError> {
        trial::run(
            &self.path,
            &frame.to_string(),
            load,
            secs,
            Counter::Recv,
            self.interrupted,
        )
    }

    /// A trial profiled on every CPU (the DUT forwards in softirq, on whichever CPU its packets
    /// arrive); a profile that cannot start says why (no `perf_event_open`, not allowed).
    fn dut_limit(
        &mut self,
        frame: FrameSpec,
        load: f64,
        secs: f64,
    ) -> Result<Option<DutLimit>, LabError> {
        if !self.router {
            return Ok(None);
        }
        let why = |e: &dyn std::error::Error| {
            let mut text = e.to_string();
            let mut cause = e.source();
            while let Some(c) = cause {
                text.push_str(&format!(": {c}"));
                cause = c.source();
            }
            format!("the DUT's CPU was not profiled: {text}")
        };
        let cpus = match online_cpus() {
            Ok(c) => c,
            Err(e) => return Ok(Some(DutLimit::not_profiled(load, why(&e)))),
        };
        let capture = match Capture::start(Target::System, &cpus, DUT_PROFILE_HZ) {
            Ok(c) => c,
            Err(e) => return Ok(Some(DutLimit::not_profiled(load, why(&e)))),
        };
        let trial = self.trial(frame, Some(load), secs);
        let captured = capture.finish();
        // Cores are counted over the generator's sending time, not the profile's (which
        // includes starting the generator in its namespace).
        let sending = trial?.seconds;
        Ok(Some(match captured {
            Ok(p) => dut::from_folded(
                load,
                if sending > 0.0 { sending } else { p.seconds },
                p.seconds,
                DUT_PROFILE_HZ,
                cpus.len(),
                &p.folded.lines(),
            ),
            Err(e) => DutLimit::not_profiled(load, why(&e)),
        }))
    }

    /// The lock taken over from a dead measurement, and `ip_forward` put back.
    fn repaired(&self) -> Option<String> {
        let notes: Vec<String> = [
            self.path.lock.took_over_note(),
            self.restored().map(ToString::to_string),
        ]
        .into_iter()
        .flatten()
        .collect();
        (!notes.is_empty()).then(|| notes.join("; "))
    }
}
