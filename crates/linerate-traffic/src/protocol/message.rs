//! Framing on the control channel: state bytes and length-prefixed JSON.

use std::io::{self, Read, Write};

use serde_json::Value;

use crate::error::TrafficError;

/// iperf3 servers cap the parameters at 8 KiB; linerate accepts a little more for its key.
pub const MAX_PARAMS_LEN: usize = 64 * 1024;
/// Results carry one object per stream and optionally the peer's whole output.
pub const MAX_RESULTS_LEN: usize = 16 * 1024 * 1024;

/// Reads one state byte.
pub fn read_state<R: Read>(r: &mut R) -> io::Result<u8> {
    let mut b = [0u8; 1];
    r.read_exact(&mut b)?;
    Ok(b[0])
}

/// Writes one state byte.
pub fn write_state<W: Write>(w: &mut W, state: crate::protocol::State) -> io::Result<()> {
    w.write_all(&[state.to_byte()])?;
    w.flush()
}

/// Reads a 4-byte big-endian length and that many bytes of JSON. Lengths above `max` are
/// refused before anything is allocated.
pub fn read_json<R: Read>(r: &mut R, max: usize) -> Result<Result<Value, TrafficError>, io::Error> {
    let mut len = [0u8; 4];
    r.read_exact(&mut len)?;
    let len = u32::from_be_bytes(len);
    if len as usize > max {
        return Ok(Err(TrafficError::MessageTooLong {
            len: u64::from(len),
            max,
        }));
    }
    let mut buf = vec![0u8; len as usize];
    r.read_exact(&mut buf)?;
    Ok(parse_json(&buf))
}

/// Parses a message body.
pub fn parse_json(bytes: &[u8]) -> Result<Value, TrafficError> {
    serde_json::from_slice(bytes).map_err(|e| TrafficError::BadJson(e.to_string()))
}

/// Writes a message as JSON with its length prefix.
pub fn write_json<W: Write, T: serde::Serialize + ?Sized>(w: &mut W, value: &T) -> io::Result<()> {
    let body = serde_json::to_vec(value).map_err(io::Error::other)?;
    let len = u32::try_from(body.len())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "JSON message above 4 GiB"))?;
    let mut msg = Vec::with_capacity(body.len() + 4);
    msg.extend_from_slice(&len.to_be_bytes());
    msg.extend_from_slice(&body);
    w.write_all(&msg)?;
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::io::Cursor;

    #[test]
    fn round_trip() {
        let v = serde_json::json!({"tcp": true, "time": 1});
        let mut buf = Vec::new();
        write_json(&mut buf, &v).unwrap();
        assert_eq!(&buf[..4], &(buf.len() as u32 - 4).to_be_bytes());
        let got = read_json(&mut Cursor::new(buf), MAX_PARAMS_LEN)
            .unwrap()
            .unwrap();
        assert_eq!(got, v);
    }

    #[test]
    fn four_gib_length_is_refused_without_allocating() {
        let mut buf = vec![0xFF, 0xFF, 0xFF, 0xFF];
        buf.extend_from_slice(b"{}");
        let got = read_json(&mut Cursor::new(buf), MAX_PARAMS_LEN).unwrap();
        assert!(matches!(
            got,
            Err(TrafficError::MessageTooLong {
                len: 0xFFFF_FFFF,
                ..
            })
        ));
    }

    #[test]
    fn short_body_is_an_eof() {
        let buf = vec![0, 0, 0, 10, b'{'];
        let err = read_json(&mut Cursor::new(buf), MAX_PARAMS_LEN).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            let mut cur = Cursor::new(bytes);
            if let Ok(Ok(v)) = read_json(&mut cur, 256) {
                let _ = crate::protocol::TestParams::from_json(&v);
                let _ = crate::protocol::PeerResults::from_json(&v);
            }
        }

        #[test]
        fn arbitrary_json_objects_never_panic(
            keys in proptest::collection::vec("[a-z_]{1,12}", 0..8),
            nums in proptest::collection::vec(any::<i64>(), 8),
        ) {
            let mut map = serde_json::Map::new();
            for (k, n) in keys.iter().zip(nums.iter()) {
                map.insert(k.clone(), serde_json::json!(n));
            }
            for k in ["time", "parallel", "len", "bandwidth", "streams", "linerate", "omit", "num"] {
                map.insert(k.to_owned(), serde_json::json!(nums[0]));
            }
            let v = Value::Object(map);
            let _ = crate::protocol::TestParams::from_json(&v);
            let _ = crate::protocol::PeerResults::from_json(&v);
        }
    }
}
