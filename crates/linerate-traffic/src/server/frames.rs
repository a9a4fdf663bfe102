//! The server's side of a frame-counter session ([`crate::protocol::frames`]): admitted only
//! when the server was told it may (`--allow-frame-counter`, the interfaces it names), after
//! the allow-list and authentication every test passes. It answers clock exchanges and runs
//! one count at a time: the receive ring opened on the asked interface, counted on a thread of
//! its own until the client's stop (or the count's own bound), the counter's document sent
//! back. Each count lasts at most the `time` the parameters asked for (within the server's
//! `--max-duration`, checked as any test's), the session at most [`SESSION_LIMIT`], and it
//! ends when the client is silent for the idle timeout between requests.

use std::fmt;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use super::{FrameCounterAccess, Level, Shared};
use crate::error::TrafficError;
use crate::protocol::extension::Hello;
use crate::protocol::frames::{Reply, Request, now_ns, this_kernel};
use crate::protocol::{Control, MAX_PARAMS_LEN, State, TestParams};

/// Time a count may run past the seconds it was opened for, waiting for the client's stop.
#[cfg(target_os = "linux")]
const STOP_GRACE: Duration = Duration::from_secs(10);

/// The longest a frame-counter session lasts (an RFC 2544 run of many frame sizes with long
/// trials takes hours; its every count is bounded by the parameters' `time`).
pub const SESSION_LIMIT: Duration = Duration::from_secs(86_400);

/// What a frame-counter session did, for the log.
#[derive(Debug, Clone, Default)]
pub struct FrameCounterSummary {
    /// Counts run.
    pub counts: u32,
    /// Signed frames counted over all of them.
    pub frames: u64,
    /// Clock exchanges answered.
    pub clock_exchanges: u32,
    /// The interfaces counted on.
    pub devs: Vec<String>,
}

impl fmt::Display for FrameCounterSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "done: frame counter, {} count(s) on {}, {} frame(s) counted, {} clock exchange(s)",
            self.counts,
            if self.devs.is_empty() {
                "no interface".to_owned()
            } else {
                self.devs.join(", ")
            },
            self.frames,
            self.clock_exchanges
        )
    }
}

/// Whether the parameters may run here: `Err` says why not (the client is told). Only a
/// session that asks for the frame counter is looked at.
pub(super) fn admit(sh: &Shared, p: &TestParams) -> Result<(), String> {
    if !p.extension.as_ref().is_some_and(|x| x.frame_counter) {
        return Ok(());
    }
    match sh.cfg.frame_counter {
        FrameCounterAccess::Refused => Err(
            "this server does not count frames for clients: start it with \
             --allow-frame-counter (it then opens a raw packet socket on request)"
                .to_owned(),
        ),
        _ if !cfg!(target_os = "linux") => Err(format!(
            "this server runs on {}: counting frames needs Linux (AF_PACKET receive rings)",
            linerate_sys::os::this_os()
        )),
        _ => Ok(()),
    }
}

/// Whether the server lets clients count on `dev`.
fn allowed(access: &FrameCounterAccess, dev: &str) -> Result<(), String> {
    match access {
        FrameCounterAccess::Refused => Err("this server does not count frames".to_owned()),
        FrameCounterAccess::AnyInterface => Ok(()),
        FrameCounterAccess::Interfaces(list) if list.iter().any(|d| d == dev) => Ok(()),
        FrameCounterAccess::Interfaces(list) => Err(format!(
            "this server counts frames only on {} (--allow-frame-counter), not on {dev}",
            list.join(", ")
        )),
    }
}

/// Runs an admitted session: the hello, then requests until `Done`, the client's close, its
/// silence or the session's end.
pub(super) fn serve(
    sh: &Shared,
    ctl: &mut Control,
    params: &TestParams,
    peer: SocketAddr,
    test: u64,
) -> Result<FrameCounterSummary, TrafficError> {
    ctl.send(State::LinerateHello, "greeting a frame-counter client")?;
    let hello = Hello {
        frame_counter: true,
        ..Hello::accept()
    };
    ctl.send_json(&hello, "greeting a frame-counter client")?;
    let end = Instant::now() + SESSION_LIMIT;
    sh.log(
        Level::Info,
        Some(test),
        Some(peer),
        format!(
            "frame counter started, counts of at most {:.0} s",
            params.time
        ),
    );
    let mut summary = FrameCounterSummary::default();
    loop {
        let left = end.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(TrafficError::Timeout {
                during: "a frame-counter session, past its limit",
                secs: SESSION_LIMIT.as_secs_f64(),
            });
        }
        let wait = left.min(sh.cfg.idle_timeout);
        let request = match next(ctl, wait) {
            Ok(Some(r)) => r,
            // The client closed: the session is over.
            Ok(None) => break,
            Err(e) => return Err(e),
        };
        let arrived = now_ns();
        match request {
            Request::Done => break,
            Request::Clock => {
                summary.clock_exchanges += 1;
                let (boot_id, kernel) = this_kernel();
                ctl.send_json(
                    &Reply::Clock {
                        t2_ns: arrived,
                        t3_ns: now_ns(),
                        boot_id,
                        kernel,
                    },
                    "answering a clock exchange",
                )?;
            }
            Request::Stop => ctl.send_json(
                &Reply::Error {
                    error: "no count is open".into(),
                },
                "refusing a stop",
            )?,
            Request::Open { dev, seconds } => {
                let room = end
                    .saturating_duration_since(Instant::now())
                    .as_secs_f64()
                    .min(params.time);
                if let Err(error) = allowed(&sh.cfg.frame_counter, &dev).and_then(|()| {
                    if seconds.is_finite() && seconds > 0.0 && seconds <= room {
                        Ok(())
                    } else {
                        Err(format!(
                            "a count of {seconds} s is longer than the {room:.0} s a count of \
                             this session may last"
                        ))
                    }
                }) {
                    ctl.send_json(&Reply::Error { error }, "refusing a count")?;
                    continue;
                }
                let frames = count::run(ctl, &dev, seconds)?;
                summary.counts += 1;
                summary.frames += frames;
                if !summary.devs.contains(&dev) {
                    summary.devs.push(dev);
                }
            }
        }
    }
    Ok(summary)
}

/// The next request; `None` when the client closed the connection.
fn next(ctl: &mut Control, wait: Duration) -> Result<Option<Request>, TrafficError> {
    let v = match ctl.read_json(MAX_PARAMS_LEN, wait, "waiting for a frame-counter request") {
        Ok(v) => v,
        Err(TrafficError::Closed { .. }) => return Ok(None),
        Err(e) => return Err(e),
    };
    serde_json::from_value(v)
        .map(Some)
        .map_err(|e| TrafficError::BadJson(format!("a frame-counter request: {e}")))
}

#[cfg(target_os = "linux")]
mod count {
    //! One count on Linux: the ring opened here, counted on a thread until the client's stop.

    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Duration;

    use super::{Reply, Request, STOP_GRACE, next};
    use crate::error::TrafficError;
    use crate::generator::{ReceiveConfig, Receiver, link};
    use crate::protocol::Control;

    fn mac_text(m: [u8; 6]) -> String {
        m.iter()
            .map(|b| format!("{b:02x}"))
            .collect::<Vec<_>>()
            .join(":")
    }

    /// Opens the counter on `dev`, says so, waits for the stop and sends what it counted;
    /// returns the frames counted (0 when the count failed, which the client was told).
    pub(super) fn run(ctl: &mut Control, dev: &str, seconds: f64) -> Result<u64, TrafficError> {
        let limit = Duration::from_secs_f64(seconds) + STOP_GRACE;
        let cfg = ReceiveConfig {
            dev: dev.to_owned(),
            duration: Some(limit),
            count: None,
        };
        let opened = link::read_mac(dev).and_then(|mac| Receiver::open(&cfg).map(|r| (mac, r)));
        let (mac, receiver) = match opened {
            Ok(o) => o,
            Err(e) => {
                ctl.send_json(&Reply::Error { error: e.chain() }, "refusing a count")?;
                return Ok(0);
            }
        };
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let counting = std::thread::Builder::new()
            .name("lr-frame-count".into())
            .spawn(move || receiver.count(&flag))
            .map_err(|e| TrafficError::socket("starting a counting thread", e))?;
        let ready = ctl.send_json(&Reply::Ready { mac: mac_text(mac) }, "opening a count");
        // The client's stop, or its silence until the count's own end.
        let asked = ready.and_then(|()| next(ctl, limit));
        stop.store(true, Ordering::Relaxed);
        let counted = counting
            .join()
            .unwrap_or(Err(crate::generator::GenError::Panicked));
        match asked? {
            Some(Request::Stop) => {}
            Some(other) => {
                return Err(TrafficError::BadJson(format!(
                    "a frame-counter request {other:?} while a count was open (only stop is)"
                )));
            }
            None => {
                return Err(TrafficError::BadJson(
                    "the client closed during a count".into(),
                ));
            }
        }
        match counted {
            Ok(received) => {
                let frames = received.received_frames;
                ctl.send_json(
                    &Reply::Counted {
                        received: Box::new(received),
                    },
                    "sending a count",
                )?;
                Ok(frames)
            }
            Err(e) => {
                ctl.send_json(&Reply::Error { error: e.chain() }, "sending a count")?;
                Ok(0)
            }
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod count {
    use super::Reply;
    use crate::error::TrafficError;
    use crate::protocol::Control;

    /// Never reached ([`super::admit`] refuses the session here); says so if it were.
    pub(super) fn run(ctl: &mut Control, _dev: &str, _seconds: f64) -> Result<u64, TrafficError> {
        ctl.send_json(
            &Reply::Error {
                error: "counting frames needs Linux".into(),
            },
            "refusing a count",
        )?;
        Ok(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_named_interfaces_are_counted_on() {
        let any = FrameCounterAccess::AnyInterface;
        assert!(allowed(&any, "eth1").is_ok());
        let some = FrameCounterAccess::Interfaces(vec!["eth1".into(), "eth2".into()]);
        assert!(allowed(&some, "eth2").is_ok());
        let err = allowed(&some, "eth0").expect_err("not named");
        assert!(
            err.contains("only on eth1, eth2") && err.contains("eth0"),
            "{err}"
        );
        assert!(allowed(&FrameCounterAccess::Refused, "eth1").is_err());
    }
}
