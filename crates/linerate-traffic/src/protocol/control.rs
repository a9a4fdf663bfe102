//! A control connection: state bytes and JSON with per-step timeouts.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::Value;

use crate::error::TrafficError;
use crate::protocol::{State, message};

/// One end of a control connection.
#[derive(Debug)]
pub struct Control {
    /// The socket.
    pub stream: TcpStream,
    /// The peer, for messages.
    pub peer: String,
}

/// What arrived on the control connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Incoming {
    /// A known state byte.
    State(State),
    /// A byte no side defines.
    Unknown(u8),
}

impl Control {
    /// Wraps a connected socket.
    pub fn new(stream: TcpStream, peer: String) -> Control {
        Control { stream, peer }
    }

    fn set_timeout(&self, t: Duration) -> Result<(), TrafficError> {
        self.stream
            .set_read_timeout(Some(t.max(Duration::from_millis(1))))
            .map_err(|e| TrafficError::socket("setting a control timeout", e))
    }

    fn err(&self, e: io::Error, during: &'static str, t: Duration) -> TrafficError {
        TrafficError::control(e, &self.peer, during, t.as_secs_f64())
    }

    /// Waits up to `timeout` for a state byte.
    pub fn read(
        &mut self,
        timeout: Duration,
        during: &'static str,
    ) -> Result<Incoming, TrafficError> {
        self.set_timeout(timeout)?;
        let b = message::read_state(&mut self.stream).map_err(|e| self.err(e, during, timeout))?;
        Ok(State::from_byte(b).map_or(Incoming::Unknown(b), Incoming::State))
    }

    /// Like [`Control::read`], but a timeout is `Ok(None)`: for polling while a test runs.
    pub fn poll(
        &mut self,
        timeout: Duration,
        during: &'static str,
    ) -> Result<Option<Incoming>, TrafficError> {
        match self.read(timeout, during) {
            Ok(i) => Ok(Some(i)),
            Err(TrafficError::Timeout { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Reads a length-prefixed JSON message of at most `max` bytes.
    pub fn read_json(
        &mut self,
        max: usize,
        timeout: Duration,
        during: &'static str,
    ) -> Result<Value, TrafficError> {
        self.set_timeout(timeout)?;
        message::read_json(&mut self.stream, max).map_err(|e| self.err(e, during, timeout))?
    }

    /// Reads the two big-endian integers after `SERVER_ERROR`: iperf3's error code, then errno.
    /// iperf3 before 3.17 sends the code alone when authentication fails and closes: a close
    /// after the code reads as errno 0.
    pub fn read_server_error(&mut self, timeout: Duration) -> Result<(i32, i32), TrafficError> {
        self.set_timeout(timeout)?;
        let mut code = [0u8; 4];
        self.stream
            .read_exact(&mut code)
            .map_err(|e| self.err(e, "reading a server error", timeout))?;
        let mut b = [0u8; 4];
        let errno = match self.stream.read_exact(&mut b) {
            Ok(()) => i32::from_be_bytes(b),
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::UnexpectedEof | io::ErrorKind::ConnectionReset
                ) =>
            {
                0
            }
            Err(e) => return Err(self.err(e, "reading a server error", timeout)),
        };
        Ok((i32::from_be_bytes(code), errno))
    }

    /// Sends a state byte.
    pub fn send(&mut self, state: State, during: &'static str) -> Result<(), TrafficError> {
        message::write_state(&mut self.stream, state)
            .map_err(|e| self.err(e, during, Duration::ZERO))
    }

    /// Sends a JSON message (a typed message of the schema, or any serialisable value).
    pub fn send_json<T: serde::Serialize + ?Sized>(
        &mut self,
        v: &T,
        during: &'static str,
    ) -> Result<(), TrafficError> {
        message::write_json(&mut self.stream, v).map_err(|e| self.err(e, during, Duration::ZERO))
    }

    /// Sends `SERVER_ERROR` with an iperf3 error code and errno 0, then closes gently.
    pub fn send_server_error(&mut self, code: i32) -> Result<(), TrafficError> {
        let mut b = vec![State::ServerError.to_byte()];
        b.extend_from_slice(&code.to_be_bytes());
        b.extend_from_slice(&0i32.to_be_bytes());
        self.stream
            .write_all(&b)
            .map_err(|e| self.err(e, "sending a server error", Duration::ZERO))?;
        self.linger_close();
        Ok(())
    }

    /// Ends our side, then reads (and drops) what the peer still sends, briefly and bounded:
    /// closing with unread input would send a reset that can destroy our last message
    /// before the peer reads it.
    pub fn linger_close(&mut self) {
        let _ = self.stream.shutdown(std::net::Shutdown::Write);
        let _ = self
            .stream
            .set_read_timeout(Some(Duration::from_millis(50)));
        let start = std::time::Instant::now();
        let mut buf = [0u8; 16 * 1024];
        let mut drained = 0usize;
        while start.elapsed() < Duration::from_millis(500) && drained < (4 << 20) {
            match self.stream.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => drained += n,
            }
        }
    }
}
