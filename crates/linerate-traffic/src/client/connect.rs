//! Reaching the server: name resolution, the control connection, and opening data streams.

use std::io::Write;
use std::net::{IpAddr, SocketAddr, TcpStream, ToSocketAddrs, UdpSocket};
use std::time::{Duration, Instant};

use socket2::{Domain, Socket, Type};

use crate::config::{ClientConfig, Family, SocketOptions};
use crate::error::TrafficError;
use crate::protocol::{Cookie, UDP_CONNECT_MSG, UDP_CONNECT_REPLY, UDP_CONNECT_REPLY_OLD};

/// Resolves the server address, honouring `-4`/`-6`.
pub fn resolve(cfg: &ClientConfig) -> Result<SocketAddr, TrafficError> {
    let addrs: Vec<SocketAddr> = (cfg.host.as_str(), cfg.port)
        .to_socket_addrs()
        .map_err(|source| TrafficError::Resolve {
            host: cfg.host.clone(),
            source,
        })?
        .collect();
    addrs
        .into_iter()
        .find(|a| match cfg.family {
            Family::Any => true,
            Family::V4 => a.is_ipv4(),
            Family::V6 => a.is_ipv6(),
        })
        .ok_or_else(|| TrafficError::Resolve {
            host: cfg.host.clone(),
            source: std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "no address of the requested family",
            ),
        })
}

fn reason(e: &std::io::Error, timeout: Duration) -> String {
    match (e.kind(), e.raw_os_error()) {
        (std::io::ErrorKind::ConnectionRefused, _) => {
            "connection refused (is a server listening on that port?)".to_owned()
        }
        (std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock, _) => format!(
            "timed out after {:.1} s while connecting (host down, unreachable or filtered)",
            timeout.as_secs_f64()
        ),
        (_, Some(libc::EHOSTUNREACH)) => "no route to host (host unreachable)".to_owned(),
        (_, Some(libc::ENETUNREACH)) => "network unreachable".to_owned(),
        _ => e.to_string(),
    }
}

fn new_socket(addr: &SocketAddr, ty: Type) -> Result<Socket, TrafficError> {
    Socket::new(Domain::for_address(*addr), ty, None)
        .map_err(|e| TrafficError::socket("creating a socket", e))
}

fn bind_local(
    sock: &Socket,
    bind: Option<IpAddr>,
    server: &SocketAddr,
) -> Result<(), TrafficError> {
    if let Some(ip) = bind {
        let local = SocketAddr::new(ip, 0);
        if local.is_ipv4() != server.is_ipv4() {
            return Err(TrafficError::Connect {
                addr: server.to_string(),
                reason: format!("--bind {ip} is not of the server's address family"),
            });
        }
        sock.bind(&local.into())
            .map_err(|e| TrafficError::socket(format!("binding to {local}"), e))?;
    }
    Ok(())
}

/// Opens a TCP connection with the options applied before `connect`.
pub fn tcp_connect(
    server: &SocketAddr,
    bind: Option<IpAddr>,
    opts: &SocketOptions,
    timeout: Duration,
) -> Result<TcpStream, TrafficError> {
    let sock = new_socket(server, Type::STREAM)?;
    crate::sockopt::apply_before_connect(&sock, opts, server.is_ipv6(), true)?;
    bind_local(&sock, bind, server)?;
    sock.connect_timeout(&(*server).into(), timeout)
        .map_err(|e| TrafficError::Connect {
            addr: server.to_string(),
            reason: reason(&e, timeout),
        })?;
    Ok(sock.into())
}

/// Opens the control connection (only `--bind-dev` and `--bind` apply) and sends the cookie.
pub fn control(
    cfg: &ClientConfig,
    server: &SocketAddr,
    cookie: &Cookie,
) -> Result<TcpStream, TrafficError> {
    let opts = SocketOptions {
        bind_dev: cfg.sock.bind_dev.clone(),
        nodelay: true,
        ..SocketOptions::default()
    };
    let mut s = tcp_connect(server, cfg.bind, &opts, cfg.connect_timeout)?;
    s.write_all(cookie.as_bytes())
        .map_err(|e| TrafficError::socket(format!("sending the cookie to {server}"), e))?;
    Ok(s)
}

/// Opens one TCP data stream: connect and send the cookie.
pub fn tcp_stream(
    cfg: &ClientConfig,
    server: &SocketAddr,
    cookie: &Cookie,
) -> Result<TcpStream, TrafficError> {
    let mut s = tcp_connect(server, cfg.bind, &cfg.sock, cfg.connect_timeout)?;
    s.write_all(cookie.as_bytes()).map_err(|e| {
        TrafficError::socket(format!("sending the cookie on a stream to {server}"), e)
    })?;
    Ok(s)
}

/// Opens one UDP stream: connect, send `9876`, wait for `6789` (retrying, bounded).
pub fn udp_stream(cfg: &ClientConfig, server: &SocketAddr) -> Result<UdpSocket, TrafficError> {
    let sock = new_socket(server, Type::DGRAM)?;
    let opts = SocketOptions {
        mss: None,
        congestion: None,
        nodelay: false,
        ..cfg.sock.clone()
    };
    crate::sockopt::apply_before_connect(&sock, &opts, server.is_ipv6(), false)?;
    bind_local(&sock, cfg.bind, server)?;
    sock.connect(&(*server).into())
        .map_err(|e| TrafficError::socket(format!("connecting a UDP socket to {server}"), e))?;
    let udp: UdpSocket = sock.into();
    let deadline = Instant::now() + cfg.connect_timeout;
    let mut buf = [0u8; 64];
    let attempt = Duration::from_millis(1000);
    while Instant::now() < deadline {
        udp.send(&UDP_CONNECT_MSG)
            .map_err(|e| TrafficError::socket(format!("sending the UDP hello to {server}"), e))?;
        let wait = attempt.min(deadline.saturating_duration_since(Instant::now()));
        let _ = udp.set_read_timeout(Some(wait.max(Duration::from_millis(1))));
        match udp.recv(&mut buf) {
            Ok(4) if buf[..4] == UDP_CONNECT_REPLY || buf[..4] == UDP_CONNECT_REPLY_OLD => {
                return Ok(udp);
            }
            Ok(_) => {}
            Err(e) if crate::stream::is_retry(&e) => {}
            Err(e) => {
                return Err(TrafficError::Connect {
                    addr: format!("{server} (UDP)"),
                    reason: reason(&e, cfg.connect_timeout),
                });
            }
        }
    }
    Err(TrafficError::Timeout {
        during: "waiting for the server's UDP stream reply",
        secs: cfg.connect_timeout.as_secs_f64(),
    })
}
