//! One test on the server, from `PARAM_EXCHANGE` to `IPERF_DONE`.

use std::fmt;
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::{Shared, udp};
use crate::config::{Direction, MAX_TCP_LEN, MAX_UDP_LEN, Protocol, SocketOptions};
use crate::cpu::CpuSnapshot;
use crate::error::TrafficError;
use crate::evidence::{EvidenceRecorder, Side};
use crate::protocol::extension::Hello;
use crate::protocol::{
    Control, Cookie, Incoming, MAX_PARAMS_LEN, MAX_RESULTS_LEN, PeerResults, State, TestParams,
    ierr,
};
use crate::sampler::Sampler;
use crate::stream::{Budget, DataSocket, StreamHandle, StreamSpec, stream_id};

/// What a finished test moved, for the log.
#[derive(Debug, Clone)]
pub struct TestSummary {
    /// TCP or UDP.
    pub protocol: Protocol,
    /// Streams.
    pub streams: usize,
    /// Whether the client is linerate.
    pub linerate_client: bool,
    /// Bytes the server received.
    pub received: u64,
    /// Bytes the server sent.
    pub sent: u64,
    /// Seconds measured.
    pub seconds: f64,
    /// UDP datagrams lost on the server's receiving streams.
    pub lost: u64,
}

impl fmt::Display for TestSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rate = |b: u64| {
            if self.seconds > 0.0 {
                linerate_units::BitRate::from_bps_f64(b as f64 * 8.0 / self.seconds)
            } else {
                linerate_units::BitRate::ZERO
            }
        };
        write!(
            f,
            "done: {} {} stream(s){}, {:.2} s, received {:.2} ({:.3}), sent {:.2} ({:.3})",
            self.protocol.iperf3_name(),
            self.streams,
            if self.linerate_client {
                " from linerate"
            } else {
                ""
            },
            self.seconds,
            linerate_units::ByteSize::from_bytes(self.received),
            rate(self.received),
            linerate_units::ByteSize::from_bytes(self.sent),
            rate(self.sent),
        )?;
        if self.protocol == Protocol::Udp {
            write!(f, ", {} datagram(s) lost", self.lost)?;
        }
        Ok(())
    }
}

/// What a finished session was, for the log.
#[derive(Debug, Clone)]
pub enum Served {
    /// A test with streams.
    Test(TestSummary),
    /// A frame-counter session.
    FrameCounter(super::frames::FrameCounterSummary),
}

impl fmt::Display for Served {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Served::Test(t) => t.fmt(f),
            Served::FrameCounter(c) => c.fmt(f),
        }
    }
}

/// Why a test is refused: an iperf3 error code and a sentence.
struct Refusal(i32, String);

fn check(sh: &Shared, p: &TestParams) -> Result<(), Refusal> {
    let cfg = &sh.cfg;
    if let Err(why) = crate::modes::check_server(p) {
        return Err(Refusal(ierr::RECV_PARAMS, why));
    }
    if p.parallel == 0 || p.total_streams() > u64::from(cfg.max_streams) {
        return Err(Refusal(
            ierr::NUM_STREAMS,
            format!(
                "{} streams asked, the server allows 1 to {}",
                p.total_streams(),
                cfg.max_streams
            ),
        ));
    }
    let max = cfg.max_duration.as_secs_f64();
    if p.omit > max || (!p.count_bounded() && p.time + p.omit > max) {
        return Err(Refusal(
            ierr::DURATION,
            format!(
                "{} s asked, the server allows at most {max} s",
                p.time + p.omit
            ),
        ));
    }
    let asked = u128::from(p.bandwidth) * u128::from(p.total_streams());
    if cfg.bitrate_limit > 0 && asked > u128::from(cfg.bitrate_limit) {
        return Err(Refusal(
            ierr::TOTAL_RATE,
            format!(
                "{asked} bit/s asked in all, the server allows at most {} bit/s \
                 (--server-bitrate-limit)",
                cfg.bitrate_limit
            ),
        ));
    }
    let (lo, hi) = match p.protocol {
        Protocol::Tcp => (1, MAX_TCP_LEN),
        Protocol::Udp => (crate::stream::udp_header::HEADER_LEN_64 as u64, MAX_UDP_LEN),
    };
    if !(lo..=hi).contains(&p.len) {
        return Err(Refusal(
            ierr::BLOCK_SIZE,
            format!("block size {} is outside {lo}..={hi}", p.len),
        ));
    }
    Ok(())
}

/// Checks the parameters' `authtoken` when the server requires authentication.
fn authenticate(sh: &Shared, v: &serde_json::Value) -> Result<(), Refusal> {
    let Some(auth) = &sh.cfg.auth else {
        return Ok(());
    };
    let refuse = |why: String| Refusal(ierr::AUTH_TEST, format!("authentication failed: {why}"));
    let Some(token) = v.get("authtoken").and_then(serde_json::Value::as_str) else {
        return Err(refuse(
            "the client sent no credentials (--username and --rsa-public-key-path)".into(),
        ));
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    auth.check(token, now)
        .map(|_| ())
        .map_err(|why| refuse(why.to_string()))
}

/// Runs one test on an admitted control connection.
pub fn run(
    sh: &Shared,
    stream: TcpStream,
    cookie: Cookie,
    peer: SocketAddr,
    test: u64,
) -> Result<Served, TrafficError> {
    let hs = sh.cfg.handshake_timeout;
    let mut ctl = Control::new(stream, peer.to_string());
    ctl.send(State::ParamExchange, "asking for parameters")?;
    let v = match ctl.read_json(MAX_PARAMS_LEN, hs, "reading parameters") {
        Ok(v) => v,
        Err(e @ (TrafficError::MessageTooLong { .. } | TrafficError::BadJson(_))) => {
            let _ = ctl.send_server_error(ierr::RECV_PARAMS);
            return Err(e);
        }
        Err(e) => return Err(e),
    };
    let params = match TestParams::from_json(&v) {
        Ok(p) => p,
        Err(msg) => {
            let _ = ctl.send_server_error(ierr::RECV_PARAMS);
            return Err(TrafficError::BadParams(msg));
        }
    };
    let linerate = params.extension.is_some();
    let checked = authenticate(sh, &v)
        .and_then(|()| check(sh, &params))
        .and_then(|()| {
            super::frames::admit(sh, &params).map_err(|why| Refusal(ierr::UNIMPLEMENTED, why))
        });
    if let Err(Refusal(code, msg)) = checked {
        if linerate {
            let _ = ctl.send(State::LinerateHello, "refusing");
            let _ = ctl.send_json(&Hello::refuse(msg.clone()), "refusing");
            ctl.linger_close();
        } else {
            let _ = ctl.send_server_error(code);
        }
        return Err(TrafficError::BadParams(msg));
    }
    if params.extension.as_ref().is_some_and(|x| x.frame_counter) {
        return super::frames::serve(sh, &mut ctl, &params, peer, test).map(Served::FrameCounter);
    }
    let modes = crate::modes::ServerSide::prepare(&params, ctl.stream.local_addr().ok())?;
    if linerate {
        ctl.send(State::LinerateHello, "greeting a linerate client")?;
        let hello = Hello {
            data_port: modes.data_port(),
            ..Hello::accept()
        };
        ctl.send_json(&hello, "greeting a linerate client")?;
    }
    sh.log(
        super::Level::Info,
        Some(test),
        Some(peer),
        format!(
            "test started: {} {} stream(s){}{}, {}",
            params.protocol.iperf3_name(),
            params.parallel,
            if params.bidirectional {
                " each way"
            } else if params.reverse {
                " server→client"
            } else {
                " client→server"
            },
            crate::modes::describe(&params),
            match params.byte_budget() {
                Some(b) => format!("{} bytes", b),
                None => format!("{} s", params.time),
            }
        ),
    );

    let mut streams = create_streams(sh, &mut ctl, &cookie, peer, &params)?;
    for (i, h) in streams.iter_mut().enumerate() {
        h.spec.work = modes.work(&params, &cookie, i);
    }
    let omit = Duration::try_from_secs_f64(params.omit).unwrap_or(sh.cfg.max_duration);
    // Evidence only for a linerate client that asks: no one else reads it. Started before
    // TEST_RUNNING: the client sends from then on, and what the kernel drops before the
    // streams' threads read (a full UDP socket buffer) belongs to the test. Its own timer
    // ends the omitted period (the watch below looks only every 100 ms).
    let evidence_hz = params.extension.as_ref().map_or(0, |x| x.evidence_hz);
    let recorder = EvidenceRecorder::start(Side::Server, evidence_hz, &streams, omit)?;
    ctl.send(State::TestStart, "starting the test")?;
    ctl.send(State::TestRunning, "starting the test")?;
    let budget = params.byte_budget().map(|b| Arc::new(Budget::new(b)));
    let cpu0 = CpuSnapshot::now();
    // The sampler's baseline is taken before any thread can move a byte.
    let mut sampler = Sampler::new(&streams, omit);
    for h in &mut streams {
        let b = (h.spec.direction == Direction::Send)
            .then(|| budget.clone())
            .flatten();
        h.start(b)?;
    }
    let outcome = watch(sh, &mut ctl, &streams, &mut sampler, &params, omit);
    // The measurement ends at TEST_END, not when the threads have noticed it.
    for h in &streams {
        h.stop();
    }
    let _ = sampler.sample(&streams);
    let evidence = recorder.and_then(EvidenceRecorder::finish);
    for h in streams
        .iter_mut()
        .filter(|h| h.spec.direction == Direction::Send)
    {
        h.join();
    }
    if let Err(e) = outcome {
        if matches!(e, TrafficError::ServerTerminated { .. }) {
            let _ = ctl.send(State::ServerTerminate, "terminating the test");
        }
        return Err(e);
    }
    for h in &mut streams {
        h.close();
    }
    let cpu = cpu0.until(&CpuSnapshot::now());
    let congestion = streams
        .first()
        .and_then(|h| h.info_fd.as_ref())
        .and_then(crate::sockopt::congestion);
    let mut mine =
        crate::exchange::local_results(&streams, &sampler, cpu, params.protocol, congestion);
    if let Some(x) = mine.linerate.as_mut() {
        x.evidence = evidence;
    }
    let (totals, secs) = sampler.totals(&streams);
    let idle = sh.cfg.idle_timeout;
    ctl.send(State::ExchangeResults, "asking for results")?;
    let theirs = ctl.read_json(MAX_RESULTS_LEN, idle, "reading the client's results")?;
    PeerResults::from_json(&theirs).map_err(|e| TrafficError::BadJson(e.to_string()))?;
    let summary = TestSummary {
        protocol: params.protocol,
        streams: streams.len(),
        linerate_client: linerate,
        received: sum(&streams, &totals, Direction::Receive, |t| t.bytes),
        sent: sum(&streams, &totals, Direction::Send, |t| t.bytes),
        seconds: secs,
        lost: sum(&streams, &totals, Direction::Receive, |t| t.lost),
    };
    if params.get_server_output {
        mine.server_output_text = Some(format!("linerate server test {test}: {summary}\n"));
    }
    ctl.send_json(&mine, "sending results")?;
    ctl.send(State::DisplayResults, "finishing")?;
    // The client answers IPERF_DONE; a client that just closes is fine too.
    let _ = ctl.read(idle, "waiting for the client to finish");
    for h in &mut streams {
        h.join();
    }
    Ok(Served::Test(summary))
}

fn sum(
    streams: &[StreamHandle],
    totals: &[crate::stream::CounterSnapshot],
    dir: Direction,
    f: impl Fn(&crate::stream::CounterSnapshot) -> u64,
) -> u64 {
    streams
        .iter()
        .zip(totals)
        .filter(|(h, _)| h.spec.direction == dir)
        .map(|(_, t)| f(t))
        .sum()
}

/// The server's view of the stream directions, in the client's opening order.
fn server_directions(p: &TestParams) -> Vec<Direction> {
    crate::client::stream_directions(p)
        .into_iter()
        .map(|d| match d {
            Direction::Send => Direction::Receive,
            Direction::Receive => Direction::Send,
        })
        .collect()
}

fn create_streams(
    sh: &Shared,
    ctl: &mut Control,
    cookie: &Cookie,
    peer: SocketAddr,
    p: &TestParams,
) -> Result<Vec<StreamHandle>, TrafficError> {
    let dirs = server_directions(p);
    let deadline = Instant::now() + sh.cfg.handshake_timeout;
    let opts = SocketOptions {
        window: p.window.map(linerate_units::ByteSize::from_bytes),
        mss: None,
        congestion: p.congestion.clone(),
        tos: p.tos,
        bind_dev: sh.cfg.sock.bind_dev.clone(),
        nodelay: p.nodelay,
    };
    let mut sockets = Vec::with_capacity(dirs.len());
    match p.protocol {
        Protocol::Tcp => {
            let (tx, rx) = std::sync::mpsc::sync_channel(dirs.len());
            sh.registry.set_accepting(cookie, Some(tx));
            let mut result = ctl.send(State::CreateStreams, "asking for streams");
            let mut tcp = Vec::with_capacity(dirs.len());
            while result.is_ok() && tcp.len() < dirs.len() {
                let left = deadline.saturating_duration_since(Instant::now());
                match rx.recv_timeout(left) {
                    Ok((seq, s)) => {
                        let s: TcpStream = s;
                        let _ = s.set_read_timeout(None);
                        let v6 = s.local_addr().is_ok_and(|a| a.is_ipv6());
                        if let Err(e) = crate::sockopt::apply_accepted(&s, &opts, v6) {
                            result = Err(e);
                        }
                        tcp.push((seq, s));
                    }
                    Err(_) => {
                        result = Err(TrafficError::Timeout {
                            during: "waiting for the client's TCP streams",
                            secs: sh.cfg.handshake_timeout.as_secs_f64(),
                        });
                    }
                }
            }
            sh.registry.set_accepting(cookie, None);
            result?;
            tcp.sort_by_key(|(seq, _)| *seq);
            sockets.extend(tcp.into_iter().map(|(_, s)| DataSocket::Tcp(s)));
        }
        Protocol::Udp => {
            let guard = match sh.udp_create.lock() {
                Ok(g) => g,
                Err(poisoned) => poisoned.into_inner(),
            };
            udp::drain(&sh.udp);
            ctl.send(State::CreateStreams, "asking for streams")?;
            for _ in &dirs {
                let s = udp::accept_stream(&sh.udp, peer.ip(), deadline)?;
                if let Some(w) = opts.window {
                    let r = socket2::SockRef::from(&s);
                    let _ = r.set_send_buffer_size(w.bytes() as usize);
                    let _ = r.set_recv_buffer_size(w.bytes() as usize);
                }
                if let Some(tos) = opts.tos {
                    let r = socket2::SockRef::from(&s);
                    if s.local_addr().is_ok_and(|a| a.is_ipv6()) {
                        let _ = r.set_tclass_v6(u32::from(tos));
                    }
                    let _ = r.set_tos_v4(u32::from(tos));
                }
                sockets.push(DataSocket::Udp(s));
            }
            drop(guard);
        }
    }
    sockets
        .into_iter()
        .zip(dirs)
        .enumerate()
        .map(|(i, (s, dir))| {
            StreamHandle::new(
                StreamSpec {
                    id: stream_id(i),
                    direction: dir,
                    protocol: p.protocol,
                    len: p.len as usize,
                    rate_bps: p.bandwidth,
                    pacing_timer: Duration::from_micros(p.pacing_timer),
                    udp64: p.udp_counters_64bit,
                    work: crate::modes::Work::default(),
                    window_set: p.window.is_some(),
                },
                s,
            )
        })
        .collect()
}

/// Runs the test until the client's `TEST_END`, watching limits and the shutdown flag.
fn watch(
    sh: &Shared,
    ctl: &mut Control,
    streams: &[StreamHandle],
    sampler: &mut Sampler,
    p: &TestParams,
    omit: Duration,
) -> Result<(), TrafficError> {
    let t0 = Instant::now();
    let planned = if p.count_bounded() {
        sh.cfg.max_duration
    } else {
        Duration::try_from_secs_f64(p.time + p.omit)
            .unwrap_or(sh.cfg.max_duration)
            .min(sh.cfg.max_duration)
    };
    // The client's timer ends the test; the server allows some slack, then ends it itself.
    let hard_end = t0 + planned + Duration::from_secs(5).max(planned / 10);
    let idle = sh.cfg.idle_timeout;
    let mut last_bytes = 0u64;
    let mut last_change = t0;
    let mut rate = RateWindow::new(sh.cfg.bitrate_limit, sh.cfg.bitrate_limit_interval);
    loop {
        let now = Instant::now();
        if sh.shutdown.load(Ordering::Relaxed) || now >= hard_end {
            return Err(TrafficError::ServerTerminated {
                peer: ctl.peer.clone(),
            });
        }
        if sampler.in_omit() && now >= t0 + omit {
            sampler.end_omit(streams);
        }
        let bytes: u64 = streams
            .iter()
            .map(|h| h.counters.bytes.load(Ordering::Relaxed))
            .sum();
        if bytes != last_bytes {
            last_bytes = bytes;
            last_change = now;
        } else if now.duration_since(last_change) > idle {
            return Err(TrafficError::Timeout {
                during: "running a test that moves no data (idle timeout)",
                secs: idle.as_secs_f64(),
            });
        }
        if let Some(e) = rate.exceeded(now, bytes) {
            let _ = ctl.send_server_error(ierr::TOTAL_RATE);
            return Err(e);
        }
        match ctl.poll(Duration::from_millis(100), "running the test")? {
            None => {}
            Some(Incoming::State(State::TestEnd)) => return Ok(()),
            Some(Incoming::State(State::ClientTerminate)) => {
                return Err(TrafficError::Closed {
                    peer: ctl.peer.clone(),
                    during: "running the test (the client ended it)",
                });
            }
            Some(Incoming::State(s)) => {
                return Err(TrafficError::UnexpectedState {
                    byte: s.to_byte(),
                    during: "running the test",
                });
            }
            Some(Incoming::Unknown(byte)) => {
                return Err(TrafficError::UnexpectedState {
                    byte,
                    during: "running the test",
                });
            }
        }
    }
}

/// The total byte count of a test over the last averaging interval, for the server's rate
/// limit: the test is over the limit when the bytes moved since the oldest sample at least one
/// interval old exceed the limit's share of that time.
struct RateWindow {
    limit: u64,
    interval: Duration,
    samples: std::collections::VecDeque<(Instant, u64)>,
}

impl RateWindow {
    fn new(limit: u64, interval: Duration) -> RateWindow {
        RateWindow {
            limit,
            interval,
            samples: std::collections::VecDeque::new(),
        }
    }

    /// Records `bytes` (the running total) at `now`; an error when the average over the last
    /// interval is above the limit.
    fn exceeded(&mut self, now: Instant, bytes: u64) -> Option<TrafficError> {
        if self.limit == 0 {
            return None;
        }
        self.samples.push_back((now, bytes));
        // Keep only one sample older than the interval: the start of the window.
        while self
            .samples
            .get(1)
            .is_some_and(|(t, _)| now.duration_since(*t) >= self.interval)
        {
            self.samples.pop_front();
        }
        let (t, b) = *self.samples.front()?;
        let span = now.duration_since(t);
        if span < self.interval {
            return None;
        }
        let bps = bytes.saturating_sub(b) as f64 * 8.0 / span.as_secs_f64();
        let over = bps > self.limit as f64;
        over.then_some(TrafficError::RateLimit {
            bps,
            limit: self.limit,
            secs: span.as_secs_f64(),
        })
    }
}

#[cfg(test)]
mod rate_tests {
    use super::*;

    #[test]
    fn the_rate_limit_averages_over_its_interval() {
        let t0 = Instant::now();
        let s = Duration::from_secs;
        let mut w = RateWindow::new(8_000, s(2));
        // 1000 bytes/s = 8000 bit/s: at the limit, not above it.
        for i in 0..=4u64 {
            assert!(w.exceeded(t0 + s(i), i * 1000).is_none(), "{i}");
        }
        // A burst of 3000 bytes in one second after that puts the 2 s average above it.
        assert!(w.exceeded(t0 + s(5), 4000 + 3000).is_some());
        // Nothing is judged before one interval has passed.
        let mut w = RateWindow::new(8, s(2));
        assert!(w.exceeded(t0, 0).is_none());
        assert!(w.exceeded(t0 + s(1), 1_000_000).is_none());
        assert!(w.exceeded(t0 + s(2), 2_000_000).is_some());
        // No limit: never.
        let mut w = RateWindow::new(0, s(1));
        assert!(w.exceeded(t0 + s(9), u64::MAX).is_none());
    }
}
