//! The one-byte states of the control channel.

/// A state byte. iperf3 sends them as signed chars.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Streams are created; the test is about to start.
    TestStart,
    /// Data flows.
    TestRunning,
    /// The client's timer (or byte count) ended the test.
    TestEnd,
    /// The server asks for the parameters.
    ParamExchange,
    /// The server asks the client to open the data streams.
    CreateStreams,
    /// The server ends the test early.
    ServerTerminate,
    /// The client ends the test early.
    ClientTerminate,
    /// Both sides exchange results.
    ExchangeResults,
    /// The client may show the results.
    DisplayResults,
    /// Unused by iperf3 clients today; accepted.
    IperfStart,
    /// The client is done.
    IperfDone,
    /// The server refuses (busy, wrong cookie).
    AccessDenied,
    /// A server error follows (two big-endian i32: iperf error code, errno).
    ServerError,
    /// linerate only: the server acknowledges the `"linerate"` key; a JSON message follows.
    /// Sent only to clients that asked with the key, so iperf3 clients never see it.
    LinerateHello,
}

impl State {
    /// The wire byte.
    pub fn to_byte(self) -> u8 {
        let v: i8 = match self {
            State::TestStart => 1,
            State::TestRunning => 2,
            State::TestEnd => 4,
            State::ParamExchange => 9,
            State::CreateStreams => 10,
            State::ServerTerminate => 11,
            State::ClientTerminate => 12,
            State::ExchangeResults => 13,
            State::DisplayResults => 14,
            State::IperfStart => 15,
            State::IperfDone => 16,
            State::AccessDenied => -1,
            State::ServerError => -2,
            State::LinerateHello => 76,
        };
        v as u8
    }

    /// Decodes a wire byte; `None` for bytes no side defines.
    pub fn from_byte(b: u8) -> Option<State> {
        Some(match b as i8 {
            1 => State::TestStart,
            2 => State::TestRunning,
            4 => State::TestEnd,
            9 => State::ParamExchange,
            10 => State::CreateStreams,
            11 => State::ServerTerminate,
            12 => State::ClientTerminate,
            13 => State::ExchangeResults,
            14 => State::DisplayResults,
            15 => State::IperfStart,
            16 => State::IperfDone,
            -1 => State::AccessDenied,
            -2 => State::ServerError,
            76 => State::LinerateHello,
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_byte_round_trips_or_is_unknown() {
        for b in 0..=255u8 {
            if let Some(s) = State::from_byte(b) {
                assert_eq!(s.to_byte(), b);
            }
        }
        assert_eq!(State::AccessDenied.to_byte(), 0xFF);
        assert_eq!(State::ServerError.to_byte(), 0xFE);
        assert_eq!(State::from_byte(3), None);
    }
}
