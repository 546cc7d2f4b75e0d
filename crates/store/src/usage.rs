//! What the whole database's model calls and tools cost: the totals a benchmark reports for a
//! data dir that held one job.

use crate::args;
use crate::{Result, Tx};

/// Totals over every run in the database.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct UsageTotals {
    pub model_calls: u64,
    /// Model calls that ended in an error (after their retries).
    pub failed_model_calls: u64,
    pub input_tokens: u64,
    /// The part of `input_tokens` the providers served from their prompt caches.
    pub cached_input_tokens: u64,
    pub output_tokens: u64,
    /// Time spent waiting for the model, summed over calls.
    pub model_ms: u64,
    /// Every tool call, also those past the per-run cap on kept records.
    pub tool_calls: u64,
    pub shell_commands: u64,
}

impl Tx<'_> {
    pub fn usage_totals(&self) -> Result<UsageTotals> {
        let (model_calls, failed, input, cached, output, model_ms) = self.query_one(
            "SELECT COUNT(*), COUNT(error), CAST(COALESCE(SUM(input_tokens), 0) AS BIGINT),
                    CAST(COALESCE(SUM(cached_input_tokens), 0) AS BIGINT), CAST(COALESCE(SUM(output_tokens), 0) AS BIGINT),
                    CAST(COALESCE(SUM(latency_ms), 0) AS BIGINT)
             FROM model_calls",
            args![],
            |r| {
                Ok((
                    r.get::<i64>(0)?,
                    r.get::<i64>(1)?,
                    r.get::<i64>(2)?,
                    r.get::<i64>(3)?,
                    r.get::<i64>(4)?,
                    r.get::<i64>(5)?,
                ))
            },
        )?;
        let tool_calls: i64 = self.query_one(
            "SELECT CAST(COALESCE(SUM(tool_calls), 0) AS BIGINT) FROM runs",
            args![],
            |r| r.get(0),
        )?;
        let shell_commands: i64 =
            self.query_one("SELECT COUNT(*) FROM command_records", args![], |r| {
                r.get(0)
            })?;
        let n = |v: i64| v.max(0) as u64;
        Ok(UsageTotals {
            model_calls: n(model_calls),
            failed_model_calls: n(failed),
            input_tokens: n(input),
            cached_input_tokens: n(cached),
            output_tokens: n(output),
            model_ms: n(model_ms),
            tool_calls: n(tool_calls),
            shell_commands: n(shell_commands),
        })
    }
}
