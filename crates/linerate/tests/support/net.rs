//! Loopback ports for the traffic tests.

use std::net::{TcpListener, UdpSocket};
use std::time::{Duration, Instant};

/// A port free for both TCP and UDP right now.
pub fn free_port() -> u16 {
    for _ in 0..100 {
        // Dual-stack on Linux by default: covers IPv4 and IPv6.
        let t = TcpListener::bind("[::]:0").expect("bind tcp");
        let port = t.local_addr().expect("addr").port();
        if UdpSocket::bind(("::", port)).is_ok() {
            return port;
        }
    }
    panic!("no free port");
}

/// Whether something listens on TCP `port`, read from /proc/net/tcp{,6} so that no probe
/// connection disturbs the listener.
fn listening(port: u16) -> bool {
    let needle = format!(":{port:04X}");
    ["/proc/net/tcp", "/proc/net/tcp6"].iter().any(|p| {
        std::fs::read_to_string(p).is_ok_and(|s| {
            s.lines().any(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                f.len() > 3 && f[1].ends_with(&needle) && f[3] == "0A"
            })
        })
    })
}

/// Waits (10 s at most) until something listens on TCP `port`.
pub fn wait_listening(port: u16) {
    let t = Instant::now();
    while !listening(port) {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "nothing listens on {port}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
