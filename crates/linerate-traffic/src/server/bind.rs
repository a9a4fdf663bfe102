//! Binding the server's TCP listener and the UDP socket on the same port.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener, UdpSocket};

use socket2::{Domain, Socket, Type};

use crate::error::TrafficError;

fn tcp(addr: SocketAddr) -> std::io::Result<TcpListener> {
    let s = Socket::new(Domain::for_address(addr), Type::STREAM, None)?;
    if addr.is_ipv6() && addr.ip().is_unspecified() {
        s.set_only_v6(false)?;
    }
    s.set_reuse_address(true)?;
    s.bind(&addr.into())?;
    // A deep accept queue: a burst of connections (a slowloris wave) must not overrun it before
    // the event loop accepts (the kernel caps it at net.core.somaxconn).
    s.listen(4096)?;
    Ok(s.into())
}

/// A UDP socket bound to `addr` that connected per-stream sockets can share the port with.
pub fn udp(addr: SocketAddr) -> std::io::Result<UdpSocket> {
    let s = Socket::new(Domain::for_address(addr), Type::DGRAM, None)?;
    if addr.is_ipv6() && addr.ip().is_unspecified() {
        s.set_only_v6(false)?;
    }
    share_port(&s)?;
    s.bind(&addr.into())?;
    Ok(s.into())
}

/// Lets more UDP sockets bind the same address and port (each connected one then gets its
/// peer's datagrams): Linux allows it with SO_REUSEADDR; FreeBSD's SO_REUSEADDR refuses a
/// second unicast bind and needs SO_REUSEPORT on every socket of the port.
pub fn share_port(s: &Socket) -> std::io::Result<()> {
    s.set_reuse_address(true)?;
    #[cfg(target_os = "freebsd")]
    linerate_sys::socket::reuse_port(std::os::fd::AsFd::as_fd(s))?;
    Ok(())
}

fn pair(addr: SocketAddr) -> std::io::Result<(TcpListener, UdpSocket)> {
    let t = tcp(addr)?;
    let port = t.local_addr()?.port();
    let u = udp(SocketAddr::new(addr.ip(), port))?;
    Ok((t, u))
}

/// Binds TCP and UDP on one port; with `port` 0 retries until both are free.
pub fn bind_pair(
    bind: Option<IpAddr>,
    port: u16,
) -> Result<(TcpListener, UdpSocket), TrafficError> {
    let candidates: Vec<IpAddr> = match bind {
        Some(ip) => vec![ip],
        None => vec![
            IpAddr::V6(Ipv6Addr::UNSPECIFIED),
            IpAddr::V4(Ipv4Addr::UNSPECIFIED),
        ],
    };
    let mut last = None;
    for ip in candidates {
        let tries = if port == 0 { 20 } else { 1 };
        for _ in 0..tries {
            match pair(SocketAddr::new(ip, port)) {
                Ok(p) => return Ok(p),
                Err(e) => last = Some((SocketAddr::new(ip, port), e)),
            }
        }
    }
    let (addr, e) = last.unwrap_or_else(|| {
        (
            SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), port),
            std::io::Error::other("no address to bind"),
        )
    });
    Err(TrafficError::socket(format!("listening on {addr}"), e))
}
