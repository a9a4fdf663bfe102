//! Knob value types and parsing.

use std::fmt;

/// The type of a knob's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ValueType {
    /// One integer.
    Int,
    /// Two integers (`ip_local_port_range`).
    Int2,
    /// Three integers (`tcp_rmem`, `tcp_mem`).
    Int3,
    /// 0 or 1.
    Bool,
    /// One of a fixed list.
    Enum,
    /// Free text.
    String,
}

impl ValueType {
    /// How the type is named in messages.
    pub fn describe(self) -> &'static str {
        match self {
            ValueType::Int => "an integer",
            ValueType::Int2 => "two integers",
            ValueType::Int3 => "three integers",
            ValueType::Bool => "0 or 1",
            ValueType::Enum => "one of the listed names",
            ValueType::String => "text",
        }
    }
}

/// A parsed value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// An integer (also booleans).
    Int(i64),
    /// Several integers.
    Ints(Vec<i64>),
    /// Text (enums, strings).
    Text(String),
}

impl Value {
    /// Parses `raw` as `ty`. Whitespace between numbers may be spaces or tabs.
    pub fn parse(ty: ValueType, raw: &str) -> Result<Value, String> {
        let text = normalize(raw);
        let ints = |n: usize| -> Result<Vec<i64>, String> {
            let nums = text
                .split(' ')
                .map(parse_int)
                .collect::<Option<Vec<i64>>>()
                .ok_or_else(|| format!("`{text}` is not {}", ty.describe()))?;
            if nums.len() == n {
                Ok(nums)
            } else {
                Err(format!("`{text}` has {} numbers; expected {n}", nums.len()))
            }
        };
        match ty {
            ValueType::Int => parse_int(&text)
                .map(Value::Int)
                .ok_or_else(|| format!("`{text}` is not an integer")),
            ValueType::Bool => match parse_int(&text) {
                Some(v @ (0 | 1)) => Ok(Value::Int(v)),
                _ => Err(format!("`{text}` is not 0 or 1")),
            },
            ValueType::Int2 => ints(2).map(Value::Ints),
            ValueType::Int3 => ints(3).map(Value::Ints),
            ValueType::Enum | ValueType::String => {
                if text.is_empty() {
                    Err("the value is empty".to_string())
                } else {
                    Ok(Value::Text(text))
                }
            }
        }
    }

    /// The single integer, if it is one.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Value::Int(v) => Some(*v),
            _ => None,
        }
    }

    /// The integers of a triple or pair.
    pub fn as_ints(&self) -> Option<&[i64]> {
        match self {
            Value::Ints(v) => Some(v),
            _ => None,
        }
    }

    /// Every integer in the value, in order.
    pub fn numbers(&self) -> Vec<i64> {
        match self {
            Value::Int(v) => vec![*v],
            Value::Ints(v) => v.clone(),
            Value::Text(_) => Vec::new(),
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(v) => write!(f, "{v}"),
            Value::Ints(v) => {
                let parts: Vec<String> = v.iter().map(i64::to_string).collect();
                f.write_str(&parts.join(" "))
            }
            Value::Text(t) => f.write_str(t),
        }
    }
}

/// Collapses runs of whitespace to one space and trims: `4096\t131072` → `4096 131072`.
pub fn normalize(raw: &str) -> String {
    raw.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn parse_int(s: &str) -> Option<i64> {
    if let Some(hex) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        return i64::from_str_radix(hex, 16).ok();
    }
    s.parse::<i64>().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_each_type() {
        assert_eq!(Value::parse(ValueType::Int, " 42 "), Ok(Value::Int(42)));
        assert_eq!(Value::parse(ValueType::Int, "-1"), Ok(Value::Int(-1)));
        assert_eq!(
            Value::parse(ValueType::Int3, "4096\t131072   33554432"),
            Ok(Value::Ints(vec![4096, 131072, 33554432]))
        );
        assert!(Value::parse(ValueType::Int3, "1 2").is_err());
        assert!(Value::parse(ValueType::Bool, "2").is_err());
        assert!(Value::parse(ValueType::Int, "12k").is_err());
        assert_eq!(
            Value::parse(ValueType::Enum, "bbr"),
            Ok(Value::Text("bbr".into()))
        );
        assert!(Value::parse(ValueType::String, "  ").is_err());
    }
}
