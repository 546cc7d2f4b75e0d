//! One result row, read by column position as both backends return it.

use super::value::{FromValue, Value};
use crate::{Result, StoreError};

#[derive(Clone, Debug, Default)]
pub struct Row {
    values: Vec<Value>,
}

impl Row {
    pub(crate) fn new(values: Vec<Value>) -> Row {
        Row { values }
    }

    /// Column `i` (from 0) as a `T`; a missing column or a value of another type is corrupt data.
    pub fn get<T: FromValue>(&self, i: usize) -> Result<T> {
        let v = self.values.get(i).ok_or_else(|| {
            StoreError::Corrupt(format!(
                "a row has {} columns, column {i} was asked for",
                self.values.len()
            ))
        })?;
        T::from_value(v).map_err(|e| match e {
            StoreError::Corrupt(m) => StoreError::Corrupt(format!("column {i}: {m}")),
            other => other,
        })
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}
