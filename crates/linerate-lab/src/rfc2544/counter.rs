//! Where an external test bed counts what the DUT forwarded: the receive counter of
//! `linerate_traffic::generator` on a port of this host, on a thread of this process
//! ([`Local`]), or on a port of another host through its `linerate server
//! --allow-frame-counter` ([`Remote`], which also judges the two hosts' clocks for one-way
//! latency). Either is opened before the generator sends (its ring holds the first frames)
//! and stopped after the drain.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use linerate_traffic::frame_counter::{ClockCheck, RemoteConfig, RemoteCounter};
use linerate_traffic::generator::{GenError, ReceiveConfig, Received, Receiver, link};

use crate::LabError;

/// Clock exchanges per judgment of the clocks (the one with the least round trip is kept).
pub const CLOCK_EXCHANGES: u32 = 16;

/// A receive counter the test bed drives.
pub trait Counter {
    /// Where `dev` is, for messages: `eth2`, `eth2 on 198.18.0.9:5201`.
    fn place(&self, dev: &str) -> String;
    /// Opens a count on `dev` for at most `secs` seconds; returns `dev`'s MAC.
    fn open(&mut self, dev: &str, secs: f64) -> Result<[u8; 6], LabError>;
    /// Stops the open count; what it counted.
    fn stop(&mut self) -> Result<Received, LabError>;
    /// The clocks' judgment when the counter reads another host's clock (`None`: this host's).
    fn clock(&self) -> Option<&ClockCheck> {
        None
    }
    /// Judges the clocks again (before each frame size: a run lasts long enough to drift).
    fn judge_clock(&mut self) -> Result<(), LabError> {
        Ok(())
    }
}

fn gen_error(what: &str) -> impl FnOnce(GenError) -> LabError + '_ {
    move |e| LabError::Io {
        what: what.to_owned(),
        source: std::io::Error::other(e),
    }
}

/// A count running on its thread: the thread, its stop flag, the interface.
#[derive(Debug)]
struct Running {
    thread: JoinHandle<Result<Received, GenError>>,
    stop: Arc<AtomicBool>,
    dev: String,
}

/// The counter on a port of this host, on a thread.
#[derive(Debug, Default)]
pub struct Local {
    running: Option<Running>,
}

impl Counter for Local {
    fn place(&self, dev: &str) -> String {
        dev.to_owned()
    }

    fn open(&mut self, dev: &str, secs: f64) -> Result<[u8; 6], LabError> {
        if self.running.is_some() {
            self.stop()?;
        }
        let what = format!("counting on {dev}");
        let mac = link::read_mac(dev).map_err(gen_error(&what))?;
        let cfg = ReceiveConfig {
            dev: dev.to_owned(),
            duration: Some(Duration::from_secs_f64(secs)),
            count: None,
        };
        let receiver = Receiver::open(&cfg).map_err(gen_error(&what))?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let handle = std::thread::Builder::new()
            .name("lr-rx-count".into())
            .spawn(move || receiver.count(&flag))
            .map_err(LabError::io("start the receive counter's thread"))?;
        self.running = Some(Running {
            thread: handle,
            stop,
            dev: dev.to_owned(),
        });
        Ok(mac)
    }

    fn stop(&mut self) -> Result<Received, LabError> {
        let Some(Running { thread, stop, dev }) = self.running.take() else {
            return Err(LabError::Io {
                what: "no count is open".into(),
                source: std::io::Error::other("receive counter"),
            });
        };
        stop.store(true, Ordering::Relaxed);
        thread
            .join()
            .unwrap_or(Err(GenError::Panicked))
            .map_err(gen_error(&format!("counting on {dev}")))
    }
}

impl Drop for Local {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

/// The counter on another host, through its server.
#[derive(Debug)]
pub struct Remote {
    session: Option<RemoteCounter>,
    peer: String,
    clock: Option<ClockCheck>,
}

fn traffic(what: String) -> impl FnOnce(linerate_traffic::TrafficError) -> LabError {
    move |e| LabError::Io {
        what,
        source: std::io::Error::other(e),
    }
}

impl Remote {
    /// Opens the session and judges the clocks once.
    pub fn connect(cfg: &RemoteConfig) -> Result<Remote, LabError> {
        let peer = format!("{}:{}", cfg.host, cfg.port);
        let session =
            RemoteCounter::connect(cfg).map_err(traffic(format!("the frame counter at {peer}")))?;
        let mut r = Remote {
            session: Some(session),
            peer,
            clock: None,
        };
        r.judge_clock()?;
        Ok(r)
    }

    fn session(&mut self) -> Result<&mut RemoteCounter, LabError> {
        self.session.as_mut().ok_or_else(|| LabError::Io {
            what: format!("the frame-counter session with {} is closed", self.peer),
            source: std::io::Error::other("frame-counter session"),
        })
    }
}

impl Counter for Remote {
    fn place(&self, dev: &str) -> String {
        format!("{dev} on {}", self.peer)
    }

    fn open(&mut self, dev: &str, secs: f64) -> Result<[u8; 6], LabError> {
        let what = format!("opening a count on {}", self.place(dev));
        self.session()?.open(dev, secs).map_err(traffic(what))
    }

    fn stop(&mut self) -> Result<Received, LabError> {
        let what = format!("stopping the count at {}", self.peer);
        self.session()?.stop().map_err(traffic(what))
    }

    fn clock(&self) -> Option<&ClockCheck> {
        self.clock.as_ref()
    }

    fn judge_clock(&mut self) -> Result<(), LabError> {
        let what = format!("exchanging clock times with {}", self.peer);
        let check = self
            .session()?
            .clock(CLOCK_EXCHANGES)
            .map_err(traffic(what))?;
        self.clock = Some(check);
        Ok(())
    }
}

impl Drop for Remote {
    fn drop(&mut self) {
        if let Some(s) = self.session.take() {
            s.done();
        }
    }
}
