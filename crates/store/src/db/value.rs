//! The values that cross between the store and either database: one small enum both backends
//! bind and read, so each statement's Rust side is written once.

use crate::{Result, StoreError};

/// A parameter or a column value. Integers are 64-bit on both backends (PostgreSQL columns are
/// BIGINT), and booleans are stored as 0 or 1, as SQLite has always stored them here.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
}

impl Value {
    fn kind(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Int(_) => "an integer",
            Value::Real(_) => "a real number",
            Value::Text(_) => "text",
        }
    }
}

/// Turns a Rust value into a parameter.
pub trait ToValue {
    fn to_value(&self) -> Value;
}

/// Reads a column value into a Rust value; a mismatch is corrupt data, never a guess.
pub trait FromValue: Sized {
    fn from_value(v: &Value) -> Result<Self>;
}

fn mismatch<T>(want: &str, got: &Value) -> Result<T> {
    Err(StoreError::Corrupt(format!(
        "expected {want}, found {}",
        got.kind()
    )))
}

macro_rules! int_values {
    ($($t:ty),*) => {$(
        impl ToValue for $t {
            fn to_value(&self) -> Value {
                Value::Int(i64::try_from(*self).unwrap_or(i64::MAX))
            }
        }
        impl FromValue for $t {
            fn from_value(v: &Value) -> Result<Self> {
                match v {
                    Value::Int(i) => <$t>::try_from(*i).map_err(|_| {
                        StoreError::Corrupt(format!(
                            "integer {i} does not fit {}",
                            stringify!($t)
                        ))
                    }),
                    other => mismatch("an integer", other),
                }
            }
        }
    )*};
}

int_values!(i64, i32, u32, u16, u8, u64, usize);

impl ToValue for bool {
    fn to_value(&self) -> Value {
        Value::Int(i64::from(*self))
    }
}

impl FromValue for bool {
    fn from_value(v: &Value) -> Result<Self> {
        match v {
            Value::Int(i) => Ok(*i != 0),
            other => mismatch("a boolean (0 or 1)", other),
        }
    }
}

impl ToValue for f64 {
    fn to_value(&self) -> Value {
        Value::Real(*self)
    }
}

impl FromValue for f64 {
    fn from_value(v: &Value) -> Result<Self> {
        match v {
            Value::Real(f) => Ok(*f),
            Value::Int(i) => Ok(*i as f64),
            other => mismatch("a number", other),
        }
    }
}

impl ToValue for str {
    fn to_value(&self) -> Value {
        Value::Text(self.to_string())
    }
}

impl ToValue for String {
    fn to_value(&self) -> Value {
        Value::Text(self.clone())
    }
}

impl FromValue for String {
    fn from_value(v: &Value) -> Result<Self> {
        match v {
            Value::Text(s) => Ok(s.clone()),
            other => mismatch("text", other),
        }
    }
}

impl<T: ToValue + ?Sized> ToValue for &T {
    fn to_value(&self) -> Value {
        (**self).to_value()
    }
}

impl<T: ToValue> ToValue for Option<T> {
    fn to_value(&self) -> Value {
        match self {
            Some(v) => v.to_value(),
            None => Value::Null,
        }
    }
}

impl<T: FromValue> FromValue for Option<T> {
    fn from_value(v: &Value) -> Result<Self> {
        match v {
            Value::Null => Ok(None),
            other => T::from_value(other).map(Some),
        }
    }
}

impl ToValue for Value {
    fn to_value(&self) -> Value {
        self.clone()
    }
}

impl FromValue for Value {
    fn from_value(v: &Value) -> Result<Self> {
        Ok(v.clone())
    }
}

/// The parameters of one statement, in placeholder order (`?1` is the first).
#[macro_export]
#[doc(hidden)]
macro_rules! args {
    () => { &[] as &[$crate::db::Value] };
    ($($v:expr),+ $(,)?) => {
        &[$($crate::db::ToValue::to_value(&$v)),+] as &[$crate::db::Value]
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_round_trip_and_refuse_what_does_not_fit() {
        assert_eq!(u32::from_value(&7u32.to_value()).unwrap(), 7);
        assert!(u8::from_value(&Value::Int(300)).is_err());
        assert!(u32::from_value(&Value::Int(-1)).is_err());
        assert!(i64::from_value(&Value::Text("1".into())).is_err());
    }

    #[test]
    fn options_map_to_null_and_booleans_to_zero_or_one() {
        assert_eq!(None::<i64>.to_value(), Value::Null);
        assert_eq!(Option::<String>::from_value(&Value::Null).unwrap(), None);
        assert_eq!(true.to_value(), Value::Int(1));
        assert!(!bool::from_value(&Value::Int(0)).unwrap());
    }
}
