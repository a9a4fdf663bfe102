//! How the schema reads values that iperf3 versions write in more than one way.
//!
//! iperf3 prints numbers through cJSON, so an integer may come as `3` or `3.0`, a counter it
//! does not know as `-1` or as -1 wrapped to 2⁶⁴−1 (3.12's server), and a boolean option as
//! `true`, `1` or any present value. Each helper here takes one of those shapes and says,
//! when the value is unusable, what it found ("expected a number, found the string "fast"");
//! the caller's path (`end.sum_sent.bits_per_second`) is added by [`crate::Error`].

use serde::de::{Deserialize, Deserializer, Error as _};
use serde::ser::Serializer;
use serde_json::Value;

/// How a value is named in an error message.
pub(crate) fn kind(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("{b}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) => format!("the string {s:?}"),
        Value::Array(_) => "an array".into(),
        Value::Object(_) => "an object".into(),
    }
}

/// A non-negative integer, also when written as an integral float (`3.0`).
pub(crate) fn as_count(v: &Value) -> Option<u64> {
    v.as_u64().or_else(|| {
        let f = v.as_f64()?;
        // Exact: f is integral and inside u64's range.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        (f >= 0.0 && f.fract() == 0.0 && f < 1.8e19).then_some(f as u64)
    })
}

/// An integer that may be negative (a socket, a stream id), also as an integral float.
fn as_int(v: &Value) -> Option<i64> {
    v.as_i64().or_else(|| {
        let f = v.as_f64()?;
        #[allow(clippy::cast_possible_truncation)]
        (f.fract() == 0.0 && f.abs() < 9.2e18).then_some(f as i64)
    })
}

/// A count (`bytes`, `packets`): a non-negative integer.
pub(crate) fn count<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    let v = Value::deserialize(d)?;
    as_count(&v).ok_or_else(|| {
        D::Error::custom(format!(
            "expected a non-negative integer, found {}",
            kind(&v)
        ))
    })
}

/// An optional count: `null` or absent is `None`.
pub(crate) fn opt_count<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    match Value::deserialize(d)? {
        Value::Null => Ok(None),
        v => as_count(&v).map(Some).ok_or_else(|| {
            D::Error::custom(format!(
                "expected a non-negative integer, found {}",
                kind(&v)
            ))
        }),
    }
}

/// A counter iperf3 may not know (`retransmits`): -1, -1 wrapped to 2⁶⁴−1, or anything that
/// is not a count reads as unknown (`None`) rather than as an error.
pub(crate) fn counter<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    Ok(as_count(&Value::deserialize(d)?).filter(|&n| n != u64::MAX))
}

/// A finite number.
pub(crate) fn number<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    let v = Value::deserialize(d)?;
    v.as_f64()
        .filter(|x| x.is_finite())
        .ok_or_else(|| D::Error::custom(format!("expected a number, found {}", kind(&v))))
}

/// An optional finite number: `null` (cJSON's NaN) or absent is `None`.
pub(crate) fn opt_number<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    match Value::deserialize(d)? {
        Value::Null => Ok(None),
        v => v
            .as_f64()
            .filter(|x| x.is_finite())
            .map(Some)
            .ok_or_else(|| D::Error::custom(format!("expected a number, found {}", kind(&v)))),
    }
}

/// An optional integer that may be negative (`socket`).
pub(crate) fn opt_int<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    match Value::deserialize(d)? {
        Value::Null => Ok(None),
        v => as_int(&v)
            .map(Some)
            .ok_or_else(|| D::Error::custom(format!("expected an integer, found {}", kind(&v)))),
    }
}

/// An integer of the results exchange: iperf3 3.12 sends -1 as 18446744073709551615, which
/// reads back as -1; a float is truncated. Anything else is `None`.
pub(crate) fn opt_wrapping_int<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    let v = Value::deserialize(d)?;
    // The casts keep iperf3's wrap-around (u64 → i64) and truncate floats, on purpose.
    #[allow(clippy::cast_possible_truncation, clippy::cast_possible_wrap)]
    Ok(v.as_i64()
        .or_else(|| v.as_u64().map(|u| u as i64))
        .or_else(|| v.as_f64().filter(|f| f.is_finite()).map(|f| f as i64)))
}

/// A finite number, or `None` for anything else (the results exchange reads leniently).
pub(crate) fn lenient_number<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    Ok(Value::deserialize(d)?.as_f64().filter(|f| f.is_finite()))
}

/// A boolean, or `None` for anything else (`omitted`, `sender`: iperf3 < 3.8 has no `sender`).
pub(crate) fn lenient_bool<'de, D: Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
    Ok(Value::deserialize(d)?.as_bool())
}

/// A string, or `None` for anything else.
pub(crate) fn lenient_string<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::String(s) => Some(s),
        _ => None,
    })
}

/// A message: a string as it is, any other value as its JSON text (`error`).
pub(crate) fn text<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::Null => None,
        Value::String(s) => Some(s),
        other => Some(other.to_string()),
    })
}

/// A value of type `T`, or `None` when it has another shape: for the parts a peer adds that
/// must not spoil the rest (its `server_output_json`, linerate's extension object).
pub(crate) fn lenient<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: serde::de::DeserializeOwned,
{
    Ok(serde_json::from_value(Value::deserialize(d)?).ok())
}

/// iperf3 takes a boolean parameter as set when its key is present at all: `true`, a non-zero
/// number or any other value; `false`, `0` and `null` are unset.
pub(crate) fn flag<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::Null | Value::Bool(false) => false,
        Value::Number(n) => n.as_f64().is_some_and(|x| x != 0.0),
        _ => true,
    })
}

/// A parameter's number (`time`, `parallel`): any non-negative JSON number, kept as written.
pub(crate) fn param_number<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<serde_json::Number>, D::Error> {
    match Value::deserialize(d)? {
        Value::Null => Ok(None),
        Value::Number(n) => match n.as_f64() {
            Some(x) if x.is_finite() && x >= 0.0 => Ok(Some(n)),
            _ => Err(D::Error::custom(format!(
                "must be a non-negative number, got {n}"
            ))),
        },
        other => Err(D::Error::custom(format!("must be a number, got {other}"))),
    }
}

/// Writes a set flag as `1`, as iperf3 writes `get_server_output` and `udp_counters_64bit`.
pub(crate) fn flag_as_one<S: Serializer>(set: &bool, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u8(u8::from(*set))
}

/// Writes a whole number of seconds as an integer, as iperf3 (cJSON) writes the `start` of
/// its totals (`0`); other values as they are.
#[allow(clippy::ref_option)] // serde passes a reference
pub(crate) fn whole_as_integer<S: Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match *v {
        // Exact: x is integral and well inside i64's range.
        #[allow(clippy::cast_possible_truncation)]
        Some(x) if x.fract() == 0.0 && x.abs() < 9.0e15 => s.serialize_i64(x as i64),
        Some(x) => s.serialize_f64(x),
        None => s.serialize_none(),
    }
}

/// For `skip_serializing_if`: flags are written only when set.
#[allow(clippy::trivially_copy_pass_by_ref)] // serde passes a reference
pub(crate) fn is_false(b: &bool) -> bool {
    !*b
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(serde::Deserialize)]
    struct C {
        #[serde(deserialize_with = "counter")]
        n: Option<u64>,
    }

    fn c(v: Value) -> Option<u64> {
        serde_json::from_value::<C>(json!({ "n": v })).ok()?.n
    }

    #[test]
    fn unknown_counters_read_as_none() {
        assert_eq!(c(json!(18_446_744_073_709_551_615u64)), None);
        assert_eq!(c(json!(-1)), None);
        assert_eq!(c(json!("x")), None);
        assert_eq!(c(json!(7)), Some(7));
        assert_eq!(c(json!(7.0)), Some(7));
    }

    #[test]
    fn kinds_name_what_was_found() {
        assert_eq!(kind(&json!("ten")), "the string \"ten\"");
        assert_eq!(kind(&json!(1.5)), "the number 1.5");
        assert_eq!(kind(&json!([])), "an array");
        assert_eq!(as_count(&json!(3.0)), Some(3));
        assert_eq!(as_count(&json!(3.5)), None);
        assert_eq!(as_count(&json!(-3)), None);
    }
}
