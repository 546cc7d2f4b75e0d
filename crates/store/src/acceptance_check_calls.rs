//! The seams judge's calls (digest 003-C §15 AC-16): billed as their own spend kind,
//! acceptance checks, each priced from `model_prices` when the model has a price. Calls that
//! sent pictures count against the day's picture budget beside the standard check's
//! (`picture_spend_since`).

use crate::{Result, Tx, args};
use serde::Serialize;
use troupe_core::CheckId;

/// One call to record.
#[derive(Clone, Debug)]
pub struct NewAcceptanceCheckCall {
    pub check_id: CheckId,
    pub model: String,
    pub pictures: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// `read`, `unreadable` (asked again once) or `failed` (no answer).
    pub answer: &'static str,
    pub raw: Option<String>,
}

/// A recorded call.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AcceptanceCheckCall {
    pub id: i64,
    pub check_id: CheckId,
    pub model: String,
    pub pictures: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// None: the model has no price set.
    pub cost_usd: Option<f64>,
    pub answer: String,
    pub at: i64,
}

impl Tx<'_> {
    /// Record a call, priced now; answers its cost (None: the model has no price).
    pub fn record_acceptance_check_call(
        &mut self,
        c: &NewAcceptanceCheckCall,
    ) -> Result<Option<f64>> {
        let cost = self.cost_of_call(Some(&c.model), c.input_tokens, c.output_tokens)?;
        self.exec(
            "INSERT INTO acceptance_check_calls (check_id, model, pictures, input_tokens,
                 output_tokens, cost_usd, answer, raw, at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            args![
                c.check_id.0,
                c.model,
                i64::from(c.pictures),
                c.input_tokens as i64,
                c.output_tokens as i64,
                cost,
                c.answer,
                c.raw,
                self.now
            ],
        )?;
        Ok(cost)
    }

    /// A check's calls, newest first.
    pub fn acceptance_check_calls(&self, check: CheckId) -> Result<Vec<AcceptanceCheckCall>> {
        self.query_all(
            "SELECT id, check_id, model, pictures, input_tokens, output_tokens, cost_usd, answer, at
             FROM acceptance_check_calls WHERE check_id = ?1 ORDER BY id DESC",
            args![check.0],
            |r| {
                Ok(AcceptanceCheckCall {
                    id: r.get(0)?,
                    check_id: CheckId(r.get(1)?),
                    model: r.get(2)?,
                    pictures: r.get::<i64>(3)? as u32,
                    input_tokens: r.get::<i64>(4)? as u64,
                    output_tokens: r.get::<i64>(5)? as u64,
                    cost_usd: r.get(6)?,
                    answer: r.get(7)?,
                    at: r.get(8)?,
                })
            },
        )
    }
}
