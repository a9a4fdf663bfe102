//! An external DUT as an RFC 2544 test bed: a device (a router, a firewall) cabled between two
//! tester ports, `tx → DUT → rx`, both on this host, or `rx` on another host whose `linerate
//! server` counts for us ([`super::counter`]). Trials run in this process: the receive
//! counter opened first, the generator (`linerate_traffic::generator::send`, its sending
//! threads) offering the load to the DUT's MAC for the trial's time, a short drain, the
//! counter stopped. The DUT's MAC is given or learnt by ARP from its address on tx's side;
//! the frames' addresses default to the ports' own. The generator's ceiling is measured the
//! way the user gives ([`super::ceiling`]) or stated unknown. The ports are locked while
//! measured ([`super::guard`]), so a second run on them is refused naming this one.

use std::net::Ipv4Addr;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use linerate_calc::ethernet::FrameSpec;
use linerate_store::rfc2544::Latency;
use linerate_traffic::generator::{
    self, Engine, Placement, Rate, Received, SendConfig, Sent, link,
};
use linerate_units::BitRate;

use super::bed::{Counted, LinkRate, TestBed};
use super::ceiling::{self, Ceiling, Dropping};
use super::counter::Counter;
use super::guard::Measuring;
use crate::LabError;
use crate::state::StateDir;

/// Time left for frames in flight to arrive before the counter is stopped.
const DRAIN: Duration = Duration::from_millis(250);

/// Seconds a count may run past its trial (the counter's own bound: the drain, a slow start).
pub const COUNT_SLACK_S: f64 = 30.0;

/// How long ARP may take to resolve the DUT's MAC.
const ARP_WAIT: Duration = Duration::from_secs(3);

/// A share of the frames sent above which the DUT still forwarded while told to drop.
const STILL_FORWARDING: f64 = 0.01;

/// How the tester sends, as `linerate gen` takes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Sending {
    /// Sending threads.
    pub threads: u16,
    /// The engine.
    pub engine: Engine,
    /// Where the threads run.
    pub placement: Placement,
    /// Flows (UDP source ports).
    pub flows: u16,
    /// UDP destination port.
    pub port: u16,
}

/// Where the frames go; what is not given is found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Addressing {
    /// The DUT's address on tx's side, whose MAC ARP resolves (when `dst_mac` is not given).
    pub next_hop: Option<Ipv4Addr>,
    /// The DUT's MAC on tx's side.
    pub dst_mac: Option<[u8; 6]>,
    /// The frames' source address (default: tx's first IPv4 address).
    pub src_ip: Option<Ipv4Addr>,
    /// Their destination beyond the DUT (default: rx's first IPv4 address, when rx is here).
    pub dst_ip: Option<Ipv4Addr>,
}

/// What the test bed is asked to be.
#[derive(Debug, Clone, PartialEq)]
pub struct Setup {
    /// Its name, for the record.
    pub name: String,
    /// The sending port.
    pub tx: String,
    /// The counting port (on the counter's host).
    pub rx: String,
    /// Whether rx is on this host (its address and speed can be read here).
    pub rx_local: bool,
    /// Where the frames go.
    pub addressing: Addressing,
    /// How the tester sends.
    pub sending: Sending,
    /// How the generator's ceiling is measured.
    pub ceiling: Ceiling,
    /// The link rate, when the user gives it (else the ports' speed).
    pub link: Option<LinkRate>,
}

/// An external DUT between two tester ports.
pub struct External<'a> {
    name: String,
    send: SendConfig,
    rx: String,
    counter: Box<dyn Counter + 'a>,
    ceiling: Ceiling,
    link: LinkRate,
    stop: &'a AtomicBool,
    repaired: Option<String>,
    /// Latency trials whose figures the clocks' judgment left out.
    latency_left_out: u32,
    _locks: Vec<Measuring>,
}

fn gen_error(what: String) -> impl FnOnce(generator::GenError) -> LabError {
    move |e| LabError::Io {
        what,
        source: std::io::Error::other(e),
    }
}

fn needed(what: String) -> LabError {
    LabError::Io {
        what,
        source: std::io::Error::from(std::io::ErrorKind::InvalidInput),
    }
}

/// The ports' link rate: the lower of the speeds tx (and rx, when here) negotiated.
fn ports_rate(setup: &Setup) -> Result<LinkRate, LabError> {
    let mut ports = vec![setup.tx.as_str()];
    if setup.rx_local {
        ports.push(setup.rx.as_str());
    }
    let mut slowest = u64::MAX;
    let mut said = Vec::new();
    for p in ports {
        let Some(mbps) = link::speed_mbps(p) else {
            return Err(needed(format!(
                "cannot read the speed of {p} (/sys/class/net/{p}/speed: link down, or a \
                 driver that does not say): give --line-rate"
            )));
        };
        slowest = slowest.min(mbps);
        said.push(format!("{p} {mbps} Mbit/s"));
    }
    Ok(LinkRate {
        rate: BitRate::from_bps_f64(slowest as f64 * 1e6),
        source: format!("the ports' negotiated speed ({})", said.join(", ")),
    })
}

/// The frames' addresses, with what was not given found: the DUT's MAC by ARP on tx, the
/// addresses from the ports.
fn resolve(setup: &Setup) -> Result<(Ipv4Addr, Ipv4Addr, [u8; 6]), LabError> {
    let a = &setup.addressing;
    let tx = &setup.tx;
    let first = |dev: &str| {
        link::first_ipv4(dev).map_err(gen_error(format!("reading the addresses of {dev}")))
    };
    let src = match a.src_ip {
        Some(ip) => ip,
        None => first(tx)?.ok_or_else(|| {
            needed(format!(
                "{tx} has no IPv4 address: give --src-ip (the frames' source address)"
            ))
        })?,
    };
    let dst = match (a.dst_ip, setup.rx_local) {
        (Some(ip), _) => ip,
        (None, true) => first(&setup.rx)?.ok_or_else(|| {
            needed(format!(
                "{} has no IPv4 address: give --dst-ip (the address beyond the DUT the frames \
                 go to)",
                setup.rx
            ))
        })?,
        (None, false) => {
            return Err(needed(
                "--dst-ip is needed with a counter on another host (the address beyond the DUT \
                 the frames go to, normally the counting port's)"
                    .into(),
            ));
        }
    };
    let mac = match (a.dst_mac, a.next_hop) {
        (Some(m), _) => m,
        (None, Some(hop)) => link::resolve_neighbour(tx, hop, ARP_WAIT).map_err(gen_error(
            format!("learning the DUT's MAC ({hop} on {tx}) by ARP"),
        ))?,
        (None, None) => {
            return Err(needed(format!(
                "give --next-hop (the DUT's address on {tx}'s side, whose MAC ARP learns) or \
                 --dst-mac (the DUT's MAC there)"
            )));
        }
    };
    Ok((src, dst, mac))
}

impl<'a> External<'a> {
    /// The test bed: addresses resolved, the ports locked in `dir`, what an interrupted
    /// ceiling measurement left undone (`--ceiling-undo`) run; `stop` ends a trial early.
    pub fn new(
        dir: &StateDir,
        setup: Setup,
        counter: Box<dyn Counter + 'a>,
        stop: &'a AtomicBool,
    ) -> Result<External<'a>, LabError> {
        let mut locks = Vec::new();
        let mut ports = vec![setup.tx.clone()];
        if setup.rx_local {
            ports.push(setup.rx.clone());
        }
        if let Ceiling::BackToBack { tx, rx } = &setup.ceiling {
            ports.push(tx.clone());
            if setup.rx_local {
                ports.push(rx.clone());
            }
        }
        ports.sort();
        ports.dedup();
        let mut notes = Vec::new();
        for p in &ports {
            let lock = Measuring::take_named(dir, &format!("port-{p}"), &format!("port {p}"))?;
            notes.extend(lock.took_over_note());
            locks.push(lock);
        }
        if let Ceiling::DutDrops { marker, .. } = &setup.ceiling {
            notes.extend(ceiling::undo_interrupted(marker)?);
        }
        let (src, dst, mac) = resolve(&setup)?;
        let link = match &setup.link {
            Some(l) => l.clone(),
            None => ports_rate(&setup)?,
        };
        let s = &setup.sending;
        let send = SendConfig {
            dev: setup.tx.clone(),
            frames: vec![64],
            rate: Rate::Max,
            threads: s.threads,
            engine: s.engine,
            placement: s.placement.clone(),
            flows: s.flows,
            dst_mac: Some(mac),
            src_ip: Some(src),
            dst_ip: dst,
            port: s.port,
            duration: None,
            count: None,
        };
        Ok(External {
            name: setup.name,
            send,
            rx: setup.rx,
            counter,
            ceiling: setup.ceiling,
            link,
            stop,
            repaired: (!notes.is_empty()).then(|| notes.join("; ")),
            latency_left_out: 0,
            _locks: locks,
        })
    }

    /// The DUT's MAC the frames go to.
    pub fn dut_mac(&self) -> Option<[u8; 6]> {
        self.send.dst_mac
    }

    /// One count: the counter opened on `rx`, `frame` sent from `tx` at `rate` for `secs` to
    /// `to` (`None`: `rx`'s own MAC, back to back), drained, the counter stopped.
    fn count(
        &mut self,
        tx: &str,
        rx: &str,
        to: Option<[u8; 6]>,
        frame: FrameSpec,
        rate: Rate,
        secs: f64,
    ) -> Result<(Sent, Received), LabError> {
        let frames = linerate_traffic::frame::parse_sizes(&frame.to_string())
            .map_err(|e| needed(format!("frame {frame}: {e}")))?;
        let rx_mac = self.counter.open(rx, secs + COUNT_SLACK_S)?;
        let cfg = SendConfig {
            dev: tx.to_owned(),
            frames,
            rate,
            dst_mac: Some(to.unwrap_or(rx_mac)),
            duration: Some(Duration::from_secs_f64(secs)),
            ..self.send.clone()
        };
        let sent = generator::send(&cfg, self.stop);
        if sent.is_ok() {
            std::thread::sleep(DRAIN);
        }
        let received = self.counter.stop();
        let sent = sent.map_err(gen_error(format!("sending from {tx}")))?;
        Ok((sent, received?))
    }

    /// The latency figures of `received`, unless the clocks' judgment leaves them out.
    fn latency(&mut self, received: &Received) -> Option<Latency> {
        let l = received.latency_us?;
        if let Some(check) = self.counter.clock()
            && !check.keeps(l.min)
        {
            self.latency_left_out += 1;
            return None;
        }
        Some(Latency {
            min: l.min,
            p50: l.p50,
            p90: l.p90,
            p99: l.p99,
            max: l.max,
        })
    }
}

impl TestBed for External<'_> {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn link_rate(&self) -> LinkRate {
        self.link.clone()
    }

    /// A few frames through the DUT, so that it has resolved rx's address and learnt its
    /// tables; a DUT still resolving may drop the first ones, so up to three tries.
    fn warm_up(&mut self, frame: FrameSpec) -> Result<(), LabError> {
        self.counter.judge_clock()?;
        let (tx, rx) = (self.send.dev.clone(), self.rx.clone());
        let to = self.send.dst_mac;
        for _ in 0..3 {
            let (_, r) = self.count(&tx, &rx, to, frame, Rate::Pps(1000.0), 0.3)?;
            if r.received_frames > 0 {
                return Ok(());
            }
        }
        Err(LabError::Io {
            what: format!(
                "no frame sent from {tx} ({} → {}) to the DUT reached {}: is the DUT forwarding \
                 to that address, and does it resolve it on rx's side?",
                self.send.src_ip.map_or("?".to_owned(), |i| i.to_string()),
                self.send.dst_ip,
                self.counter.place(&rx)
            ),
            source: std::io::Error::from(std::io::ErrorKind::NotConnected),
        })
    }

    fn generator_ceiling(
        &mut self,
        frame: FrameSpec,
        secs: f64,
    ) -> Result<Option<Counted>, LabError> {
        match self.ceiling.clone() {
            Ceiling::Unknown => Ok(None),
            Ceiling::BackToBack { tx, rx } => {
                let (s, r) = self.count(&tx, &rx, None, frame, Rate::Max, secs)?;
                Ok(Some(Counted {
                    sent: s.sent_frames,
                    seconds: s.seconds,
                    received: r.received_frames,
                    ring_drops: r.ring_drops,
                    latency: None,
                }))
            }
            Ceiling::DutDrops { drop, undo, marker } => {
                let (tx, rx) = (self.send.dev.clone(), self.rx.clone());
                let to = self.send.dst_mac;
                let dropping = Dropping::start(&drop, &undo, &marker)?;
                let before = link::tx_packets(&tx).map_err(gen_error(format!("reading {tx}")))?;
                let counted = self.count(&tx, &rx, to, frame, Rate::Max, secs);
                let after = link::tx_packets(&tx).map_err(gen_error(format!("reading {tx}")));
                dropping.finish()?;
                let (s, r) = counted?;
                let left = after?.saturating_sub(before);
                if r.received_frames as f64 > s.sent_frames as f64 * STILL_FORWARDING {
                    return Err(LabError::Io {
                        what: format!(
                            "the DUT still forwarded {} of {} frames while told to drop: \
                             --ceiling-cmd `{drop}` did not stop it",
                            r.received_frames, s.sent_frames
                        ),
                        source: std::io::Error::other("ceiling"),
                    });
                }
                Ok(Some(Counted {
                    sent: s.sent_frames,
                    seconds: s.seconds,
                    // What left the tester's port: the sink's count.
                    received: left.min(s.sent_frames),
                    ring_drops: 0,
                    latency: None,
                }))
            }
        }
    }

    fn trial(
        &mut self,
        frame: FrameSpec,
        load: Option<f64>,
        secs: f64,
    ) -> Result<Counted, LabError> {
        let (tx, rx) = (self.send.dev.clone(), self.rx.clone());
        let to = self.send.dst_mac;
        let rate = load.map_or(Rate::Max, |p| Rate::Pps(p.max(1.0)));
        let (s, r) = self.count(&tx, &rx, to, frame, rate, secs)?;
        let latency = self.latency(&r);
        Ok(Counted {
            sent: s.sent_frames,
            seconds: s.seconds,
            received: r.received_frames,
            ring_drops: r.ring_drops,
            latency,
        })
    }

    fn repaired(&self) -> Option<String> {
        self.repaired.clone()
    }

    fn clock(&self) -> Option<String> {
        let check = self.counter.clock()?;
        let mut text = check.describe();
        if self.latency_left_out > 0 {
            text.push_str(&format!(
                "; the latency of {} trial(s) was left out, its clocks' uncertainty more than {:.0} \
                 % of it",
                self.latency_left_out,
                linerate_traffic::frame_counter::clock::MAX_SHARE * 100.0
            ));
        }
        Some(text)
    }
}
