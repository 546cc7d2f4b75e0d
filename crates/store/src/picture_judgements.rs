//! The picture judge's calls for the sample's standard check (digest 003-B §3.3): each answer
//! kept with its cost, priced from `model_prices` when the model has a price, so the day's
//! picture budget is the sum of the day's costs.

use crate::{Result, Tx, args};
use troupe_core::{CheckId, SubmissionId};

/// One judgement to record.
#[derive(Clone, Debug)]
pub struct NewPictureJudgement {
    pub check_id: CheckId,
    pub submission_id: SubmissionId,
    pub model: String,
    pub pictures: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// `holds`, `unsure`, `short`, `unreadable` or `failed`.
    pub verdict: &'static str,
    pub raw: Option<String>,
}

impl Tx<'_> {
    /// Record a judgement, priced now; answers its cost (None: the model has no price).
    pub fn record_picture_judgement(&mut self, j: &NewPictureJudgement) -> Result<Option<f64>> {
        let cost = self.cost_of_call(Some(&j.model), j.input_tokens, j.output_tokens)?;
        self.exec(
            "INSERT INTO picture_judgements (check_id, submission_id, model, pictures,
                 input_tokens, output_tokens, cost_usd, verdict, raw, at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            args![
                j.check_id.0,
                j.submission_id.0,
                j.model,
                i64::from(j.pictures),
                j.input_tokens as i64,
                j.output_tokens as i64,
                cost,
                j.verdict,
                j.raw,
                self.now
            ],
        )?;
        Ok(cost)
    }

    /// What picture judging cost since `since` (ms), in US dollars: the standard check's and
    /// the seams checks' calls that sent pictures.
    pub fn picture_spend_since(&self, since: i64) -> Result<f64> {
        let spent: Option<f64> = self.query_one(
            "SELECT SUM(cost_usd) FROM (
                 SELECT cost_usd FROM picture_judgements WHERE at >= ?1 AND pictures > 0
                 UNION ALL
                 SELECT cost_usd FROM acceptance_check_calls WHERE at >= ?1 AND pictures > 0
             ) AS spent",
            args![since],
            |r| r.get(0),
        )?;
        Ok(spent.unwrap_or(0.0))
    }
}
