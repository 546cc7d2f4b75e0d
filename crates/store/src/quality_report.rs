//! The quality report (QE5): per Bot × model × job kind over a window — hand-overs,
//! approvals, rejects, send-backs, checks failed, complaints, failure shapes, review misses,
//! tokens, and spend (per approval) where the model is priced. Orchestration events are left
//! out: a stall is nobody's quality (QE4). Model prices live here too.

use crate::quality::cause;
use crate::{Result, StoreError, Tx, args};
use serde::Serialize;
use std::collections::BTreeMap;
use troupe_core::BotId;

/// One Bot on one model in one kind of job.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct QualityReportRow {
    pub bot_id: Option<BotId>,
    pub bot_name: Option<String>,
    /// The model the Bot's turns ran on; none when no call was recorded.
    pub model: Option<String>,
    /// The job's kind ('' for none given, or a turn outside any job).
    pub plan_kind: String,
    pub hand_overs: u64,
    pub approvals: u64,
    pub rejects: u64,
    pub send_backs: u64,
    pub checks_failed: u64,
    pub complaints: u64,
    pub review_misses: u64,
    /// Model-type events (loops, caps, failed calls, the user's marks).
    pub failed_replies: u64,
    /// Every event by `type:cause`, the shapes failures took.
    pub failure_shapes: BTreeMap<String, u64>,
    pub model_calls: u64,
    pub input_tokens: u64,
    pub cached_input_tokens: u64,
    pub output_tokens: u64,
    /// US dollars, when the model is priced; never a guess.
    pub spend_usd: Option<f64>,
    pub spend_per_approval_usd: Option<f64>,
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct QualityReport {
    pub days: u32,
    /// The window's start (ms).
    pub since: i64,
    pub rows: Vec<QualityReportRow>,
}

/// A model's price, US dollars per million tokens.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ModelPrice {
    pub model: String,
    pub input_per_mtok: f64,
    pub output_per_mtok: f64,
    pub updated_at: i64,
}

type Key = (Option<i64>, Option<String>, String);

fn row(rows: &mut BTreeMap<Key, QualityReportRow>, k: Key) -> &mut QualityReportRow {
    rows.entry(k.clone()).or_insert_with(|| QualityReportRow {
        bot_id: k.0.map(BotId),
        model: k.1,
        plan_kind: k.2,
        ..QualityReportRow::default()
    })
}

fn n(v: i64) -> u64 {
    v.max(0) as u64
}

impl Tx<'_> {
    /// The report over the `days` before now.
    pub fn quality_report(&self, days: u32) -> Result<QualityReport> {
        let since = self.now - i64::from(days) * 86_400_000;
        let mut rows: BTreeMap<Key, QualityReportRow> = BTreeMap::new();
        // Hand-overs made, and approvals given, in the window, on the model the producing turn
        // used last.
        let handed = self.query_all(
            "SELECT bot, model, kind,
                    CAST(SUM(CASE WHEN created_at >= ?1 THEN 1 ELSE 0 END) AS BIGINT),
                    CAST(SUM(CASE WHEN state = 'approved' AND decided_at >= ?1 THEN 1 ELSE 0 END)
                         AS BIGINT)
             FROM (SELECT s.producer_bot_id AS bot, COALESCE(p.kind, '') AS kind, s.state,
                          s.created_at, s.decided_at,
                          (SELECT m.model FROM model_calls m WHERE m.run_id = s.run_id
                           ORDER BY m.id DESC LIMIT 1) AS model
                   FROM submissions s LEFT JOIN plans p ON p.id = s.plan_id
                   WHERE s.producer_bot_id IS NOT NULL
                     AND (s.created_at >= ?1 OR s.decided_at >= ?1)) x
             GROUP BY bot, model, kind",
            args![since],
            |r| {
                Ok((
                    (r.get(0)?, r.get(1)?, r.get(2)?),
                    r.get::<i64>(3)?,
                    r.get::<i64>(4)?,
                ))
            },
        )?;
        for (k, hand_overs, approvals) in handed {
            let r = row(&mut rows, k);
            r.hand_overs += n(hand_overs);
            r.approvals += n(approvals);
        }
        let events = self.query_all(
            "SELECT q.bot_id, q.model, COALESCE(p.kind, ''), q.type, q.cause,
                    CAST(COUNT(*) AS BIGINT)
             FROM quality_events q LEFT JOIN plans p ON p.id = q.plan_id
             WHERE q.at >= ?1 AND q.type <> 'orchestration'
             GROUP BY q.bot_id, q.model, COALESCE(p.kind, ''), q.type, q.cause",
            args![since],
            |r| {
                Ok((
                    (r.get(0)?, r.get(1)?, r.get(2)?),
                    r.get::<String>(3)?,
                    r.get::<String>(4)?,
                    r.get::<i64>(5)?,
                ))
            },
        )?;
        for (k, kind, why, count) in events {
            let r = row(&mut rows, k);
            let c = n(count);
            match why.as_str() {
                cause::REVIEW_REJECTED => r.rejects += c,
                cause::USER_SENT_BACK => r.send_backs += c,
                cause::CHECKS_FAILED => r.checks_failed += c,
                cause::COMPLAINT => r.complaints += c,
                _ => {}
            }
            match kind.as_str() {
                "review_miss" => r.review_misses += c,
                "model" => r.failed_replies += c,
                _ => {}
            }
            *r.failure_shapes.entry(format!("{kind}:{why}")).or_default() += c;
        }
        // Tokens of the Bots' own turns (a reading or a scribe step is the app's, not a Bot's).
        let usage = self.query_all(
            "SELECT bot, model, kind, CAST(COUNT(*) AS BIGINT),
                    CAST(COALESCE(SUM(input_tokens), 0) AS BIGINT),
                    CAST(COALESCE(SUM(cached_input_tokens), 0) AS BIGINT),
                    CAST(COALESCE(SUM(output_tokens), 0) AS BIGINT)
             FROM (SELECT COALESCE(s.bot_id, st.bot_id) AS bot, m.model,
                          COALESCE(p.kind, '') AS kind, m.input_tokens, m.cached_input_tokens,
                          m.output_tokens
                   FROM model_calls m JOIN runs r ON r.id = m.run_id
                   LEFT JOIN segments s ON s.run_id = m.run_id
                   LEFT JOIN work_items w ON w.id = s.work_item_id
                   LEFT JOIN plans p ON p.id = w.plan_id
                   LEFT JOIN session_threads st ON st.thread_id = r.thread_id
                   WHERE m.started_at >= ?1) x
             WHERE bot IS NOT NULL
             GROUP BY bot, model, kind",
            args![since],
            |r| {
                Ok((
                    (r.get(0)?, r.get(1)?, r.get(2)?),
                    [
                        r.get::<i64>(3)?,
                        r.get::<i64>(4)?,
                        r.get::<i64>(5)?,
                        r.get::<i64>(6)?,
                    ],
                ))
            },
        )?;
        for (k, [calls, input, cached, output]) in usage {
            let r = row(&mut rows, k);
            r.model_calls += n(calls);
            r.input_tokens += n(input);
            r.cached_input_tokens += n(cached);
            r.output_tokens += n(output);
        }
        let prices: BTreeMap<String, ModelPrice> = self
            .model_prices()?
            .into_iter()
            .map(|p| (p.model.clone(), p))
            .collect();
        let mut out: Vec<QualityReportRow> = rows.into_values().collect();
        for r in &mut out {
            if let Some(b) = r.bot_id {
                r.bot_name =
                    self.query_opt("SELECT name FROM bots WHERE id = ?1", args![b.0], |x| {
                        x.get(0)
                    })?;
            }
            let price = r.model.as_ref().and_then(|m| prices.get(m));
            if let Some(p) = price {
                let spend = (r.input_tokens as f64 * p.input_per_mtok
                    + r.output_tokens as f64 * p.output_per_mtok)
                    / 1_000_000.0;
                r.spend_usd = Some(spend);
                r.spend_per_approval_usd = (r.approvals > 0).then(|| spend / r.approvals as f64);
            }
        }
        Ok(QualityReport {
            days,
            since,
            rows: out,
        })
    }

    pub fn model_prices(&self) -> Result<Vec<ModelPrice>> {
        self.query_all(
            "SELECT model, input_per_mtok, output_per_mtok, updated_at FROM model_prices
             ORDER BY model",
            args![],
            |r| {
                Ok(ModelPrice {
                    model: r.get(0)?,
                    input_per_mtok: r.get(1)?,
                    output_per_mtok: r.get(2)?,
                    updated_at: r.get(3)?,
                })
            },
        )
    }

    /// What a call of `model` with these tokens cost in US dollars, by its price now; None
    /// for a model with no price (or no model).
    pub fn cost_of_call(
        &self,
        model: Option<&str>,
        input: u64,
        output: u64,
    ) -> Result<Option<f64>> {
        let Some(model) = model else {
            return Ok(None);
        };
        let price: Option<(f64, f64)> = self.query_opt(
            "SELECT input_per_mtok, output_per_mtok FROM model_prices WHERE model = ?1",
            args![model],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        Ok(price.map(|(i, o)| (input as f64 * i + output as f64 * o) / 1_000_000.0))
    }

    /// Price a model (or change its price); prices are per million tokens, not negative.
    pub fn set_model_price(&mut self, model: &str, input: f64, output: f64) -> Result<ModelPrice> {
        let model = model.trim();
        if model.is_empty() {
            return Err(StoreError::Invalid("model: must not be empty".into()));
        }
        for (field, v) in [("input_per_mtok", input), ("output_per_mtok", output)] {
            if !v.is_finite() || v < 0.0 {
                return Err(StoreError::Invalid(format!(
                    "{field}: must be a number of dollars, 0 or more"
                )));
            }
        }
        self.exec(
            "INSERT INTO model_prices (model, input_per_mtok, output_per_mtok, updated_at)
             VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (model) DO UPDATE SET input_per_mtok = excluded.input_per_mtok,
                 output_per_mtok = excluded.output_per_mtok, updated_at = excluded.updated_at",
            args![model, input, output, self.now],
        )?;
        Ok(ModelPrice {
            model: model.to_string(),
            input_per_mtok: input,
            output_per_mtok: output,
            updated_at: self.now,
        })
    }
}

/// One model call of the app's own, as its record keeps it (a retrospective, a reflection):
/// no model when the call was never made.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CallRecord {
    pub model: Option<String>,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// The answer's text, as it came.
    pub raw: Option<String>,
}
