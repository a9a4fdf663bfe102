//! The engine end to end on loopback, through its public entry point: two agents test each
//! other and hand their result documents to the sink; a bad reload is reported through the
//! sink and counted, the running configuration kept; raising the stop flag ends `run`.

use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use linerate_agent::{Event, Sink};

/// What a sink was given, kept for the test to read.
#[derive(Default)]
struct Recorder {
    results: Mutex<Vec<linerate_iperf3::Document>>,
    lines: Mutex<Vec<String>>,
}

impl Sink for Recorder {
    fn result(&self, document: &linerate_iperf3::Document) {
        self.results
            .lock()
            .expect("not poisoned")
            .push(document.clone());
    }

    fn event(&self, event: &Event<'_>) {
        self.lines
            .lock()
            .expect("not poisoned")
            .push(event.to_string());
    }
}

impl Recorder {
    fn has_line(&self, part: &str) -> bool {
        self.lines
            .lock()
            .expect("not poisoned")
            .iter()
            .any(|l| l.contains(part))
    }
}

/// A loopback address with a port nobody listens on now, and none handed out before in this
/// process (tests run in parallel: two of them must not get the same port).
fn free_addr() -> SocketAddr {
    static GIVEN: Mutex<Vec<u16>> = Mutex::new(Vec::new());
    let mut given = GIVEN.lock().expect("not poisoned");
    loop {
        let addr = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free loopback port");
        if !given.contains(&addr.port()) {
            given.push(addr.port());
            return addr;
        }
    }
}

fn wait_for(what: &str, limit: Duration, mut ready: impl FnMut() -> bool) {
    let until = Instant::now() + limit;
    while !ready() {
        assert!(Instant::now() < until, "no {what} within {limit:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `GET /metrics` in the older text format; `None` while nothing answers there yet.
fn try_scrape(addr: SocketAddr) -> Option<String> {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(2)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    s.write_all(b"GET /metrics HTTP/1.0\r\nHost: agent\r\n\r\n")
        .ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    Some(text)
}

/// `GET /metrics` of an agent that is up.
fn scrape(addr: SocketAddr) -> String {
    try_scrape(addr).unwrap_or_else(|| panic!("{addr}/metrics does not answer"))
}

struct Running {
    sink: Arc<Recorder>,
    stop: Arc<AtomicBool>,
    reload: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<Result<(), linerate_agent::AgentError>>,
}

fn start(path: &Path) -> Running {
    let cfg = linerate_agent::load(path).expect("a valid configuration");
    let sink = Arc::new(Recorder::default());
    let stop = Arc::new(AtomicBool::new(false));
    let reload = Arc::new(AtomicBool::new(false));
    let thread = {
        let (path, sink, stop, reload) = (
            path.to_path_buf(),
            Arc::clone(&sink),
            Arc::clone(&stop),
            Arc::clone(&reload),
        );
        std::thread::spawn(move || linerate_agent::run(&path, cfg, &stop, &reload, sink))
    };
    Running {
        sink,
        stop,
        reload,
        thread,
    }
}

impl Running {
    /// Raises the stop flag; `run` must return, and return `Ok`, within a few seconds.
    fn stop(self) -> Arc<Recorder> {
        self.stop.store(true, Ordering::Relaxed);
        let asked = Instant::now();
        while !self.thread.is_finished() {
            assert!(
                asked.elapsed() < Duration::from_secs(10),
                "run did not return after stop"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        self.thread
            .join()
            .expect("run did not panic")
            .expect("run ended without an error");
        self.sink
    }
}

#[test]
fn two_agents_hand_each_tests_documents_to_the_sink() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (free_addr(), free_addr());
    let write = |name: &str, listen: SocketAddr, metrics: SocketAddr, peer: SocketAddr| {
        let path = dir.path().join(name);
        std::fs::write(
            &path,
            format!(
                "listen = \"{listen}\"\nmetrics = \"{metrics}\"\n[[peer]]\nhost = \"{peer}\"\n\
                 name = \"peer\"\n[[test]]\nmode = \"tcp\"\nevery = \"2s\"\nduration = \"200ms\"\n"
            ),
        )
        .expect("configuration written");
        path
    };
    let (ma, mb) = (free_addr(), free_addr());
    let agent_a = start(&write("a.toml", a, ma, b));
    let agent_b = start(&write("b.toml", b, mb, a));
    // Both directions of a's test to b (a direction that meets b's test to a is tried again
    // later): counted on a's /metrics, each with its document in the sink.
    let gauge = |direction: &str| {
        format!(
            "linerate_test_throughput_bytes_per_second{{peer=\"peer\",test=\"tcp\",direction=\"{direction}\"}}"
        )
    };
    wait_for(
        "both directions on a's /metrics",
        Duration::from_secs(30),
        || {
            let text = try_scrape(ma).unwrap_or_default();
            text.contains(&gauge("send")) && text.contains(&gauge("receive"))
        },
    );
    assert!(scrape(ma).contains("linerate_test_runs_total{peer=\"peer\",test=\"tcp\"}"));
    let a_sink = agent_a.stop();
    let b_sink = agent_b.stop();
    let docs = a_sink.results.lock().expect("not poisoned");
    assert!(docs.len() >= 2, "{} results", docs.len());
    assert!(
        docs.iter().all(|d| d
            .end
            .sum_received
            .as_ref()
            .is_some_and(|r| r.bits_per_second > 0.0)),
        "a result without throughput"
    );
    assert!(a_sink.has_line(&format!("serving tests on {a}")));
    // b served a's tests: its server's records reach its sink too.
    assert!(b_sink.has_line("server: "), "{:?}", b_sink.lines);
}

#[test]
fn a_bad_reload_is_reported_and_the_running_configuration_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mesh.toml");
    let metrics = free_addr();
    let good = format!("listen = \"{}\"\nmetrics = \"{metrics}\"\n", free_addr());
    std::fs::write(&path, &good).unwrap();
    let agent = start(&path);
    wait_for("the serving line", Duration::from_secs(10), || {
        agent.sink.has_line("serving tests on")
    });
    std::fs::write(
        &path,
        format!("{good}[[test]]\nmode = \"tcp\"\nevery = \"5\"\n"),
    )
    .unwrap();
    agent.reload.store(true, Ordering::Relaxed);
    let located = format!("{}:5:9: test.every: ", path.display());
    wait_for("the reload warning", Duration::from_secs(10), || {
        agent.sink.has_line(&located)
    });
    assert!(agent.sink.has_line("keeping the configuration in use"));
    assert!(
        scrape(metrics).contains("linerate_agent_config_reloads_total{result=\"error\"} 1"),
        "{}",
        scrape(metrics)
    );
    // A good file again: reloaded, counted as ok.
    std::fs::write(&path, &good).unwrap();
    agent.reload.store(true, Ordering::Relaxed);
    wait_for("the reload line", Duration::from_secs(10), || {
        agent.sink.has_line("reloaded the configuration")
    });
    assert!(scrape(metrics).contains("linerate_agent_config_reloads_total{result=\"ok\"} 1"));
    agent.stop();
}

#[test]
fn an_address_in_use_is_a_typed_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mesh.toml");
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let busy = taken.local_addr().unwrap();
    std::fs::write(
        &path,
        format!("listen = \"{}\"\nmetrics = \"{busy}\"\n", free_addr()),
    )
    .unwrap();
    let cfg = linerate_agent::load(&path).unwrap();
    let e = linerate_agent::run(
        &path,
        cfg,
        &AtomicBool::new(false),
        &AtomicBool::new(false),
        Arc::new(Recorder::default()),
    )
    .unwrap_err();
    assert!(
        matches!(e, linerate_agent::AgentError::Metrics { addr, .. } if addr == busy),
        "{e:?}"
    );
    assert_eq!(e.to_string(), format!("serving metrics on {busy}"));
}
