//! Opening UDP streams on the server: wait for `9876` from the client's address on the shared
//! socket, answer from a socket connected to that peer on the same port.

use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use socket2::{Domain, Socket, Type};

use crate::error::TrafficError;
use crate::protocol::{UDP_CONNECT_MSG, UDP_CONNECT_REPLY};

fn same_host(a: IpAddr, b: IpAddr) -> bool {
    let canon = |ip: IpAddr| match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    };
    canon(a) == canon(b)
}

/// Throws away datagrams left on the shared socket by earlier tests.
pub fn drain(shared: &UdpSocket) {
    let mut buf = [0u8; 64];
    let _ = shared.set_nonblocking(true);
    for _ in 0..10_000 {
        if shared.recv_from(&mut buf).is_err() {
            break;
        }
    }
    let _ = shared.set_nonblocking(false);
}

/// Accepts one UDP stream from `client` before `deadline`.
pub fn accept_stream(
    shared: &UdpSocket,
    client: IpAddr,
    deadline: Instant,
) -> Result<UdpSocket, TrafficError> {
    let local = shared
        .local_addr()
        .map_err(|e| TrafficError::socket("reading the UDP socket address", e))?;
    let mut buf = [0u8; 64];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(TrafficError::Timeout {
                during: "waiting for the client's UDP stream datagram",
                secs: 0.0,
            });
        }
        let _ = shared.set_read_timeout(Some(left.max(Duration::from_millis(1))));
        let (n, from) = match shared.recv_from(&mut buf) {
            Ok(x) => x,
            Err(e) if crate::stream::is_retry(&e) => continue,
            Err(e) => return Err(TrafficError::socket("receiving a UDP stream datagram", e)),
        };
        if n != 4 || buf[..4] != UDP_CONNECT_MSG || !same_host(from.ip(), client) {
            continue;
        }
        return connected(local, from);
    }
}

fn connected(local: SocketAddr, peer: SocketAddr) -> Result<UdpSocket, TrafficError> {
    let s = Socket::new(Domain::for_address(local), Type::DGRAM, None)
        .map_err(|e| TrafficError::socket("creating a UDP stream socket", e))?;
    if local.is_ipv6() && local.ip().is_unspecified() {
        let _ = s.set_only_v6(false);
    }
    super::bind::share_port(&s)
        .map_err(|e| TrafficError::socket("sharing the port with a UDP stream socket", e))?;
    s.bind(&local.into())
        .map_err(|e| TrafficError::socket(format!("binding a UDP stream socket to {local}"), e))?;
    s.connect(&peer.into()).map_err(|e| {
        TrafficError::socket(format!("connecting a UDP stream socket to {peer}"), e)
    })?;
    let u: UdpSocket = s.into();
    u.send(&UDP_CONNECT_REPLY)
        .map_err(|e| TrafficError::socket(format!("answering the UDP stream of {peer}"), e))?;
    Ok(u)
}
