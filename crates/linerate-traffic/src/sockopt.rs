//! Socket options on data streams and TCP_INFO sampling.

use std::os::fd::AsFd;

use socket2::SockRef;

use crate::config::SocketOptions;
use crate::error::TrafficError;

/// Applies the options that must be set before `connect`/`bind` (buffers, MSS, device, TOS).
pub fn apply_before_connect(
    sock: &socket2::Socket,
    opts: &SocketOptions,
    ipv6: bool,
    tcp: bool,
) -> Result<(), TrafficError> {
    if let Some(w) = opts.window {
        let size = usize::try_from(w.bytes()).unwrap_or(usize::MAX);
        sock.set_send_buffer_size(size)
            .map_err(|e| TrafficError::socket(format!("setting SO_SNDBUF to {w}"), e))?;
        sock.set_recv_buffer_size(size)
            .map_err(|e| TrafficError::socket(format!("setting SO_RCVBUF to {w}"), e))?;
    }
    if let Some(dev) = &opts.bind_dev {
        #[cfg(target_os = "linux")]
        let bound = sock.bind_device(Some(dev.as_bytes()));
        #[cfg(not(target_os = "linux"))]
        let bound: std::io::Result<()> = Err(linerate_sys::os::NotOnThisOs::linux(
            "binding a socket to a device (--bind-dev)",
            "SO_BINDTODEVICE is Linux's",
        )
        .instead("the BSDs pick the interface by route (or FreeBSD's setfib)")
        .into());
        bound.map_err(|e| TrafficError::socket(format!("binding to device {dev}"), e))?;
    }
    if let Some(tos) = opts.tos {
        let r = if ipv6 {
            sock.set_tclass_v6(u32::from(tos))
        } else {
            sock.set_tos_v4(u32::from(tos))
        };
        r.map_err(|e| TrafficError::socket(format!("setting TOS {tos:#04x}"), e))?;
    }
    if tcp {
        if let Some(mss) = opts.mss {
            sock.set_tcp_mss(mss)
                .map_err(|e| TrafficError::socket(format!("setting TCP MSS {mss}"), e))?;
        }
        if let Some(cc) = &opts.congestion {
            sock.set_tcp_congestion(cc.as_bytes()).map_err(|e| {
                TrafficError::socket(format!("setting TCP congestion control {cc:?}"), e)
            })?;
        }
        if opts.nodelay {
            sock.set_tcp_nodelay(true)
                .map_err(|e| TrafficError::socket("setting TCP_NODELAY", e))?;
        }
    }
    Ok(())
}

/// Applies the options to an already accepted TCP socket (server side).
pub fn apply_accepted<F: AsFd>(
    fd: &F,
    opts: &SocketOptions,
    ipv6: bool,
) -> Result<(), TrafficError> {
    let s = SockRef::from(fd);
    if let Some(w) = opts.window {
        let size = usize::try_from(w.bytes()).unwrap_or(usize::MAX);
        let _ = s.set_send_buffer_size(size);
        let _ = s.set_recv_buffer_size(size);
    }
    if let Some(tos) = opts.tos {
        // A dual-stack socket may carry IPv4 (mapped) traffic: set both where it is IPv6.
        if ipv6 {
            let _ = s.set_tclass_v6(u32::from(tos));
        }
        let _ = s.set_tos_v4(u32::from(tos));
    }
    if let Some(cc) = &opts.congestion {
        s.set_tcp_congestion(cc.as_bytes()).map_err(|e| {
            TrafficError::socket(format!("setting TCP congestion control {cc:?}"), e)
        })?;
    }
    if opts.nodelay {
        let _ = s.set_tcp_nodelay(true);
    }
    Ok(())
}

/// The congestion control algorithm of a TCP socket.
pub fn congestion<F: AsFd>(fd: &F) -> Option<String> {
    let name = SockRef::from(fd).tcp_congestion().ok()?;
    let end = name.iter().position(|b| *b == 0).unwrap_or(name.len());
    Some(String::from_utf8_lossy(&name[..end]).into_owned())
}

/// The MSS of a TCP socket.
pub fn mss<F: AsFd>(fd: &F) -> Option<u32> {
    SockRef::from(fd).tcp_mss().ok()
}

/// The actual SO_SNDBUF and SO_RCVBUF sizes.
pub fn buffer_sizes<F: AsFd>(fd: &F) -> (u64, u64) {
    let s = SockRef::from(fd);
    (
        s.send_buffer_size().map_or(0, |v| v as u64),
        s.recv_buffer_size().map_or(0, |v| v as u64),
    )
}

pub use linerate_sys::socket::{TcpInfo, tcp_info};

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{TcpListener, TcpStream};

    #[test]
    fn tcp_info_reads_a_live_connection() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let info = tcp_info(c.as_fd()).unwrap();
        assert!(info.cwnd_bytes > 0);
        assert!(info.pmtu > 0);
        assert!(congestion(&c).is_some_and(|s| !s.is_empty()));
    }
}
