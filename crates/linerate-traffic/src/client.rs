//! The client: runs one test against a linerate or iperf3 server and returns a [`RunResult`].

mod assemble;
pub mod connect;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::config::{
    ClientConfig, DEFAULT_TCP_LEN, DEFAULT_UDP_LEN, DEFAULT_UDP_RATE, Direction, MAX_EVIDENCE_HZ,
    MAX_TCP_LEN, MAX_UDP_LEN, Protocol,
};
use crate::cpu::CpuSnapshot;
use crate::error::{TrafficError, iperf_error_text};
use crate::event::Event;
use crate::evidence::{EvidenceRecorder, Side};
use crate::protocol::extension::{Extension, Hello};
use crate::protocol::{
    Control, Cookie, Incoming, MAX_PARAMS_LEN, MAX_RESULTS_LEN, PeerResults, State, TestParams,
};
use crate::result::{Connection, PeerInfo, PeerKind, RunResult, StartInfo};
use crate::sampler::Sampler;
use crate::stream::{Budget, DataSocket, StreamHandle, StreamSpec, stream_id};

/// Longest test, omitted period or interval (iperf3's limit too).
pub const MAX_TIME: Duration = Duration::from_secs(86_400);
/// Longest a byte- or block-bounded run may take when no `-t` bounds it.
pub const DEFAULT_COUNT_LIMIT: Duration = Duration::from_secs(3600);
/// Slack after the planned end for the results exchange.
const END_GRACE: Duration = Duration::from_secs(10);

/// Builds the parameters the client sends.
pub fn params_for(cfg: &ClientConfig) -> Result<TestParams, TrafficError> {
    crate::modes::check_client(cfg)?;
    let len = match (cfg.len, cfg.protocol) {
        (Some(l), _) => l.bytes(),
        (None, Protocol::Tcp) => DEFAULT_TCP_LEN,
        (None, Protocol::Udp) => DEFAULT_UDP_LEN,
    };
    let max = match cfg.protocol {
        Protocol::Tcp => MAX_TCP_LEN,
        Protocol::Udp => MAX_UDP_LEN,
    };
    let min = match cfg.protocol {
        Protocol::Tcp => 1,
        Protocol::Udp => crate::stream::udp_header::HEADER_LEN_64 as u64,
    };
    if !(min..=max).contains(&len) {
        return Err(TrafficError::BadParams(format!(
            "-l {len} is outside {min}..={max} bytes for {}",
            cfg.protocol.iperf3_name()
        )));
    }
    for (flag, d) in [("-t", cfg.duration), ("-O", cfg.omit), ("-i", cfg.interval)] {
        if d > MAX_TIME {
            return Err(TrafficError::BadParams(format!(
                "{flag} {:.0} s is above the {} s limit (as iperf3)",
                d.as_secs_f64(),
                MAX_TIME.as_secs()
            )));
        }
    }
    if cfg.parallel == 0 || cfg.parallel > 128 {
        return Err(TrafficError::BadParams(format!(
            "-P {} is outside 1..=128",
            cfg.parallel
        )));
    }
    if cfg.evidence_hz > MAX_EVIDENCE_HZ {
        return Err(TrafficError::BadParams(format!(
            "--evidence-hz {} is above {MAX_EVIDENCE_HZ} readings a second",
            cfg.evidence_hz
        )));
    }
    let bandwidth = match (cfg.bitrate, cfg.protocol) {
        (Some(b), _) => b.bps(),
        (None, Protocol::Udp) => DEFAULT_UDP_RATE,
        (None, Protocol::Tcp) => 0,
    };
    Ok(TestParams {
        protocol: cfg.protocol,
        omit: cfg.omit.as_secs_f64(),
        time: cfg.duration.as_secs_f64(),
        bytes: cfg.bytes.map_or(0, |b| b.bytes()),
        blocks: cfg.blocks.unwrap_or(0),
        parallel: cfg.parallel,
        reverse: cfg.reverse,
        bidirectional: cfg.bidir,
        window: cfg.sock.window.map(|w| w.bytes()),
        len,
        bandwidth,
        pacing_timer: 1000,
        mss: cfg.sock.mss,
        nodelay: cfg.sock.nodelay,
        tos: cfg.sock.tos,
        congestion: cfg.sock.congestion.clone(),
        get_server_output: cfg.get_server_output,
        udp_counters_64bit: cfg.protocol == Protocol::Udp,
        client_version: Some(format!("linerate {}", crate::ENGINE_VERSION)),
        extension: Some(Extension {
            evidence_hz: cfg.evidence_hz,
            ..crate::modes::extension(cfg)
        }),
    })
}

/// The directions of the streams the client opens, in the order it opens them.
pub fn stream_directions(params: &TestParams) -> Vec<Direction> {
    let p = params.parallel as usize;
    if params.bidirectional {
        let mut v = vec![Direction::Send; p];
        v.extend(std::iter::repeat_n(Direction::Receive, p));
        v
    } else if params.reverse {
        vec![Direction::Receive; p]
    } else {
        vec![Direction::Send; p]
    }
}

/// The server's hello after a linerate extension: an error when it refused the test (with
/// its reason) or the hello is not one.
pub(crate) fn accepted_hello(ctl: &mut Control, hs: Duration) -> Result<Hello, TrafficError> {
    let hello: Hello =
        serde_json::from_value(ctl.read_json(MAX_PARAMS_LEN, hs, "reading the server's hello")?)
            .map_err(|e| TrafficError::BadJson(format!("the server's hello: {e}")))?;
    if !hello.accepted {
        return Err(TrafficError::Refused {
            peer: ctl.peer.clone(),
            reason: hello.error.unwrap_or_else(|| "no reason given".to_owned()),
        });
    }
    Ok(hello)
}

fn wait_state(
    ctl: &mut Control,
    timeout: Duration,
    during: &'static str,
) -> Result<State, TrafficError> {
    match ctl.read(timeout, during)? {
        Incoming::State(State::AccessDenied) => Err(TrafficError::Busy {
            peer: ctl.peer.clone(),
        }),
        Incoming::State(State::ServerError) => {
            let (code, errno) = ctl.read_server_error(timeout)?;
            Err(TrafficError::ServerError {
                peer: ctl.peer.clone(),
                code,
                text: iperf_error_text(code),
                errno,
            })
        }
        Incoming::State(State::ServerTerminate) => Err(TrafficError::ServerTerminated {
            peer: ctl.peer.clone(),
        }),
        Incoming::State(s) => Ok(s),
        Incoming::Unknown(byte) => Err(TrafficError::UnexpectedState { byte, during }),
    }
}

fn expect(
    ctl: &mut Control,
    want: State,
    timeout: Duration,
    during: &'static str,
) -> Result<(), TrafficError> {
    let got = wait_state(ctl, timeout, during)?;
    if got == want {
        Ok(())
    } else {
        Err(TrafficError::UnexpectedState {
            byte: got.to_byte(),
            during,
        })
    }
}

/// Runs one test. `interrupt` ends it early (Ctrl-C): during the handshake with
/// [`TrafficError::Interrupted`]; once data flows, the test ends as if its time were up, with
/// the results exchange, so the caller gets the results so far (a partial run: the caller
/// knows it set the flag). `sink` sees live events.
pub fn run_client(
    cfg: &ClientConfig,
    interrupt: &AtomicBool,
    sink: &mut dyn FnMut(Event<'_>),
) -> Result<RunResult, TrafficError> {
    let params = params_for(cfg)?;
    let server = connect::resolve(cfg)?;
    let cookie = Cookie::random();
    let ctl_stream = connect::control(cfg, &server, &cookie)?;
    let tcp_mss_default = crate::sockopt::mss(&ctl_stream);
    let mut ctl = Control::new(ctl_stream, format!("{}:{}", cfg.host, cfg.port));
    let hs = cfg.connect_timeout;

    // The server speaks first: silence here means nobody runs a server there.
    expect(
        &mut ctl,
        State::ParamExchange,
        hs,
        "waiting for the server to ask for parameters",
    )
    .map_err(|e| match e {
        TrafficError::Timeout { secs, .. } => TrafficError::Silent {
            peer: ctl.peer.clone(),
            secs,
        },
        other => other,
    })?;
    match &cfg.authtoken {
        None => ctl.send_json(&params.to_wire(), "sending parameters")?,
        Some(token) => {
            let mut v = serde_json::to_value(params.to_wire())
                .map_err(|e| TrafficError::BadParams(e.to_string()))?;
            if let Some(m) = v.as_object_mut() {
                m.insert("authtoken".into(), token.clone().into());
            }
            ctl.send_json(&v, "sending parameters")?;
        }
    }

    // A linerate server answers the extension before CREATE_STREAMS; iperf3 does not.
    let mut peer_version = None;
    let mut data_port = None;
    let mut state = wait_state(
        &mut ctl,
        hs,
        "waiting for the server to accept the parameters",
    )?;
    if state == State::LinerateHello {
        let hello = accepted_hello(&mut ctl, hs)?;
        peer_version = Some(hello.engine);
        data_port = hello.data_port;
        state = wait_state(&mut ctl, hs, "waiting for the server to ask for streams")?;
    } else if !cfg.mode.iperf3_can_do() {
        let _ = ctl.send(State::ClientTerminate, "ending the test");
        return Err(TrafficError::PeerLacksFeature {
            peer: ctl.peer.clone(),
            feature: format!("--mode {}", cfg.mode.name()),
        });
    }
    if state != State::CreateStreams {
        return Err(TrafficError::UnexpectedState {
            byte: state.to_byte(),
            during: "waiting for the server to ask for streams",
        });
    }
    let peer_kind = if peer_version.is_some() {
        PeerKind::Linerate
    } else {
        PeerKind::Iperf3
    };

    // Open the streams in iperf3's order (senders first with --bidir).
    let server_addr = ctl.stream.peer_addr().unwrap_or(server);
    let mut streams = Vec::new();
    let mut bufs = (0, 0);
    for (i, dir) in stream_directions(&params).into_iter().enumerate() {
        let socket = match params.protocol {
            Protocol::Tcp => DataSocket::Tcp(connect::tcp_stream(cfg, &server_addr, &cookie)?),
            Protocol::Udp => DataSocket::Udp(connect::udp_stream(cfg, &server_addr)?),
        };
        if i == 0 {
            bufs = match &socket {
                DataSocket::Tcp(s) => crate::sockopt::buffer_sizes(s),
                DataSocket::Udp(s) => crate::sockopt::buffer_sizes(s),
            };
        }
        let spec = StreamSpec {
            id: stream_id(i),
            direction: dir,
            protocol: params.protocol,
            len: params.len as usize,
            rate_bps: params.bandwidth,
            pacing_timer: Duration::from_micros(params.pacing_timer),
            udp64: params.udp_counters_64bit,
            work: crate::modes::client_work(cfg, &params, &cookie, i, server_addr, data_port)?,
            window_set: params.window.is_some(),
        };
        streams.push(StreamHandle::new(spec, socket)?);
    }

    // The evidence starts before the server's TEST_RUNNING: a sending server sends from then
    // on, and what the kernel drops before this side's threads read (a full UDP socket
    // buffer) belongs to the test.
    let omit = cfg.omit;
    let recorder = EvidenceRecorder::start(Side::Client, cfg.evidence_hz, &streams, omit)?;
    expect(
        &mut ctl,
        State::TestStart,
        hs,
        "waiting for the test to start",
    )?;
    expect(
        &mut ctl,
        State::TestRunning,
        hs,
        "waiting for the test to run",
    )?;
    if interrupt.load(Ordering::Relaxed) {
        // Stopped before any data moved: there is nothing to report.
        let _ = ctl.send(State::ClientTerminate, "ending the test");
        return Err(TrafficError::Interrupted);
    }

    let start = StartInfo {
        engine_version: crate::ENGINE_VERSION.to_owned(),
        timestamp: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        cookie: cookie.as_str().to_owned(),
        peer: PeerInfo {
            host: cfg.host.clone(),
            addr: server_addr.ip().to_string(),
            port: server_addr.port(),
            kind: peer_kind,
            version: peer_version,
        },
        connected: streams
            .iter()
            .map(|h| Connection {
                id: h.spec.id,
                direction: h.spec.direction,
                local: h.local.map(|a| a.to_string()).unwrap_or_default(),
                remote: h.remote.map(|a| a.to_string()).unwrap_or_default(),
            })
            .collect(),
        protocol: params.protocol,
        mode: cfg.mode,
        parallel: params.parallel,
        reverse: params.reverse,
        bidir: params.bidirectional,
        blksize: params.len,
        omit_secs: params.omit,
        duration_secs: params.time,
        bytes: params.bytes,
        blocks: params.blocks,
        target_bitrate: params.bandwidth,
        tos: params.tos.unwrap_or(0),
        interval_secs: cfg.interval.as_secs_f64(),
        tcp_mss_default,
        sock_bufsize: params.window.unwrap_or(0),
        sndbuf_actual: bufs.0,
        rcvbuf_actual: bufs.1,
        system_info: crate::exchange::system_info(),
    };
    sink(Event::Start(&start));

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
    let mut intervals = Vec::new();
    let run = Running {
        cfg,
        params: &params,
        interrupt,
    };
    let outcome = run.measure(
        &mut ctl,
        &mut streams,
        &mut sampler,
        recorder.as_ref(),
        &mut intervals,
        sink,
    );
    // Stop the senders whatever happened (receivers drain until the exchange is over). The
    // last interval ends now, not when the threads have noticed: a loaded host can take a
    // while to schedule them, and that time is not test time.
    for h in streams
        .iter()
        .filter(|h| h.spec.direction == Direction::Send)
    {
        h.stop();
    }
    let last = sampler.sample(&streams);
    let local_evidence = recorder.and_then(EvidenceRecorder::finish);
    for h in streams
        .iter_mut()
        .filter(|h| h.spec.direction == Direction::Send)
    {
        h.join();
    }
    if let Err(e) = outcome {
        let _ = ctl.send(State::ClientTerminate, "ending the test");
        return Err(e);
    }
    if last.seconds() > 0.005 && !last.omitted {
        sink(Event::Interval(&last));
        intervals.push(last);
    }
    let cpu = cpu0.until(&CpuSnapshot::now());
    let congestion_local = streams
        .first()
        .and_then(|h| h.info_fd.as_ref())
        .and_then(crate::sockopt::congestion);
    let mine = crate::exchange::local_results(
        &streams,
        &sampler,
        cpu,
        params.protocol,
        congestion_local.clone(),
    );
    let (totals, secs) = sampler.totals(&streams);

    ctl.send(State::TestEnd, "ending the test")?;
    let limit = END_GRACE;
    let peer = loop {
        match wait_state(&mut ctl, limit, "waiting for the results exchange")? {
            State::ExchangeResults => {
                ctl.send_json(&mine, "sending results")?;
                let v = ctl.read_json(MAX_RESULTS_LEN, limit, "reading the server's results")?;
                break PeerResults::from_json(&v)
                    .map_err(|e| TrafficError::BadJson(e.to_string()))?;
            }
            // Old servers may repeat TEST_RUNNING; nothing to do.
            State::TestRunning => {}
            other => {
                return Err(TrafficError::UnexpectedState {
                    byte: other.to_byte(),
                    during: "waiting for the results exchange",
                });
            }
        }
    };
    expect(
        &mut ctl,
        State::DisplayResults,
        limit,
        "waiting for the server to finish",
    )?;
    let _ = ctl.send(State::IperfDone, "closing the test");
    for h in &mut streams {
        h.join();
    }
    let end = assemble::end_info(
        &streams,
        &sampler,
        &totals,
        secs,
        cpu,
        congestion_local,
        &peer,
    );
    let modes = crate::modes::result::build(cfg, &streams, &start, &intervals, &end, &peer);
    let remote_evidence = peer.linerate.and_then(|x| x.evidence);
    let evidence = crate::evidence::test_evidence(local_evidence, remote_evidence, peer_kind);
    Ok(RunResult {
        schema: crate::result::SCHEMA.to_owned(),
        start,
        intervals,
        end,
        modes,
        evidence,
    })
}

struct Running<'a> {
    cfg: &'a ClientConfig,
    params: &'a TestParams,
    interrupt: &'a AtomicBool,
}

impl Running<'_> {
    /// Samples intervals until the timer or the byte count ends the test, watching the control
    /// connection for the server's messages.
    fn measure(
        &self,
        ctl: &mut Control,
        streams: &mut [StreamHandle],
        sampler: &mut Sampler,
        recorder: Option<&EvidenceRecorder>,
        intervals: &mut Vec<crate::result::Interval>,
        sink: &mut dyn FnMut(Event<'_>),
    ) -> Result<(), TrafficError> {
        let t0 = Instant::now();
        let omit_end = t0 + self.cfg.omit;
        let count = self.params.count_bounded();
        let length = if count {
            if self.cfg.duration.is_zero() {
                DEFAULT_COUNT_LIMIT
            } else {
                self.cfg.duration
            }
        } else {
            self.cfg.duration
        };
        let mut deadline = omit_end + length;
        let interval = self.cfg.interval;
        let mut next_tick = if interval.is_zero() {
            None
        } else {
            Some(t0 + interval)
        };
        let budget = self.params.byte_budget().unwrap_or(u64::MAX);
        loop {
            let now = Instant::now();
            if self.interrupt.load(Ordering::Relaxed) {
                // End cleanly: the results so far are worth having (iperf3 prints them too).
                return Ok(());
            }
            if sampler.in_omit() && now >= omit_end {
                let iv = sampler.sample(streams);
                sink(Event::Interval(&iv));
                sampler.end_omit(streams);
                if let Some(r) = recorder {
                    r.begin_measuring();
                }
                deadline = Instant::now() + length;
                next_tick = next_tick.map(|_| Instant::now() + interval);
                continue;
            }
            if now >= deadline {
                return Ok(());
            }
            if count && !sampler.in_omit() && self.count_done(streams, budget) {
                return Ok(());
            }
            if let Some(t) = next_tick
                && now >= t
            {
                let iv = sampler.sample(streams);
                sink(Event::Interval(&iv));
                if !iv.omitted {
                    intervals.push(iv);
                }
                next_tick = Some(t + interval);
                continue;
            }
            let mut wake = deadline;
            if let Some(t) = next_tick {
                wake = wake.min(t);
            }
            if sampler.in_omit() {
                wake = wake.min(omit_end);
            }
            let mut wait = wake.saturating_duration_since(now);
            if count {
                wait = wait.min(Duration::from_millis(20));
            }
            wait = wait.min(Duration::from_millis(200));
            match ctl.poll(wait.max(Duration::from_millis(1)), "running the test")? {
                None => {}
                Some(Incoming::State(State::ServerTerminate)) => {
                    return Err(TrafficError::ServerTerminated {
                        peer: ctl.peer.clone(),
                    });
                }
                Some(Incoming::State(State::ServerError)) => {
                    let (code, errno) = ctl.read_server_error(Duration::from_secs(1))?;
                    return Err(TrafficError::ServerError {
                        peer: ctl.peer.clone(),
                        code,
                        text: iperf_error_text(code),
                        errno,
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

    /// With `-n`/`-k`: senders have spent their budget and receivers got theirs.
    fn count_done(&self, streams: &[StreamHandle], budget: u64) -> bool {
        let senders_done = streams
            .iter()
            .filter(|h| h.spec.direction == Direction::Send)
            .all(StreamHandle::finished);
        let received: u64 = streams
            .iter()
            .filter(|h| h.spec.direction == Direction::Receive)
            .map(|h| h.counters.bytes.load(Ordering::Relaxed))
            .sum();
        let any_receiver = streams
            .iter()
            .any(|h| h.spec.direction == Direction::Receive);
        let receivers_done = !any_receiver
            || received >= budget
            || streams
                .iter()
                .filter(|h| h.spec.direction == Direction::Receive)
                .all(StreamHandle::finished);
        senders_done && receivers_done
    }
}
