//! Stopping many runs in one write (a hold ends every turn it covers): each table's change is
//! one statement over the whole set, and the events come as one insert, where a run at a time
//! costs some twenty statements per run. Each leaves the same rows and events as its one-run
//! counterpart (`force_end_run`, `mark_run_effects_unknown`, the engine's dangling-call
//! settlement); only the order of events across runs differs.

use crate::db::id_list;
use crate::events::Event;
use crate::runs::{RUN_COLUMNS, run_from_row};
use crate::{Dialect, Result, RunRecord, StoreError, Tx, args};
use serde_json::json;
use troupe_core::EventId;
use troupe_core::effect::EffectOutcome;
use troupe_core::message::{Part, PartBody};
use troupe_core::run::EndReason;
use troupe_core::{EffectId, MessageId, RunId, ThreadId};

/// Rows per multi-row insert: 9 values a part row, well under every backend's limit.
const ROWS_PER_INSERT: usize = 200;

/// An event to append: kind, thread, run, payload.
type NewEvent = (
    &'static str,
    Option<ThreadId>,
    Option<RunId>,
    serde_json::Value,
);

impl Tx<'_> {
    /// End these runs from outside their loops, all at once: what `force_end_run` does to each
    /// (status and reason, the lease released if the run still holds it, `run_ended`). Answers
    /// each run as it now stands, in the order given, and whether this call ended it (false
    /// for one already ended: the first stop wins).
    pub fn force_end_runs(
        &mut self,
        runs: &[RunId],
        reason: &EndReason,
    ) -> Result<Vec<(RunRecord, bool)>> {
        if runs.is_empty() {
            return Ok(Vec::new());
        }
        let list = id_list(runs.iter().map(|r| r.0))?;
        let status = reason.status();
        let sql = format!(
            "UPDATE runs SET status = ?2, end_reason = ?3, end_detail = ?4, ended_at = ?5
             WHERE id IN {} AND status = 'running' RETURNING id",
            self.dialect().in_list(1)
        );
        let ended: Vec<i64> = self.query_all(
            &sql,
            args![
                list,
                status.as_str(),
                reason.code(),
                reason.detail(),
                self.now
            ],
            |r| r.get(0),
        )?;
        if !ended.is_empty() {
            // A lease is released only where the ended run still holds it, in its generation.
            let sql = format!(
                "UPDATE threads SET lease_run_id = NULL
                 WHERE lease_run_id IN {}
                   AND lease_generation =
                       (SELECT r.generation FROM runs r WHERE r.id = threads.lease_run_id)",
                self.dialect().in_list(1)
            );
            self.exec(&sql, args![id_list(ended.iter().copied())?])?;
        }
        let sql = format!(
            "SELECT {RUN_COLUMNS} FROM runs WHERE id IN {}",
            self.dialect().in_list(1)
        );
        let found = self.query_all(&sql, args![list], run_from_row)?;
        let mut out = Vec::with_capacity(runs.len());
        for run in runs {
            let rec = found
                .iter()
                .find(|r| r.id == *run)
                .ok_or_else(|| StoreError::not_found("run", run))?;
            out.push((rec.clone(), ended.contains(&run.0)));
        }
        let events = out
            .iter()
            .filter(|(_, by_this)| *by_this)
            .map(|(rec, _)| {
                (
                    "run_ended",
                    Some(rec.thread_id),
                    Some(rec.id),
                    json!({"status": status, "end_reason": reason.code(), "detail": reason.detail()}),
                )
            })
            .collect();
        self.append_events(events)?;
        Ok(out)
    }

    /// Every effect of these runs still marked started becomes unknown, in one statement, with
    /// an `effect_settled` event each as `settle_effect` writes it. Answers the effects settled.
    pub fn mark_runs_effects_unknown(
        &mut self,
        runs: &[RunId],
        why: &str,
    ) -> Result<Vec<EffectId>> {
        if runs.is_empty() {
            return Ok(Vec::new());
        }
        let sql = format!(
            "UPDATE effects SET outcome = ?2, detail = ?3, settled_at = ?4
             WHERE run_id IN {} AND outcome = 'started' RETURNING id, thread_id, run_id",
            self.dialect().in_list(1)
        );
        let mut cut: Vec<(i64, i64, i64)> = self.query_all(
            &sql,
            args![
                id_list(runs.iter().map(|r| r.0))?,
                EffectOutcome::Unknown.as_str(),
                why,
                self.now
            ],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )?;
        // The one-run path settles them oldest first; so do the events here.
        cut.sort_unstable();
        let events = cut
            .iter()
            .map(|(id, thread, run)| {
                (
                    "effect_settled",
                    Some(ThreadId(*thread)),
                    Some(RunId(*run)),
                    json!({"effect_id": EffectId(*id), "outcome": EffectOutcome::Unknown}),
                )
            })
            .collect();
        self.append_events(events)?;
        Ok(cut.into_iter().map(|(id, _, _)| EffectId(id)).collect())
    }

    /// Answer, with `note` as an error result, every tool call without a result in each
    /// thread's latest message when that is the assistant's: the history stays well-formed
    /// and nothing runs again. One read for all the threads, one insert per few hundred parts,
    /// and a `message_part_added` event per part as `append_part` writes it. Answers how many
    /// calls were answered.
    pub fn settle_dangling_calls_of(&mut self, threads: &[ThreadId], note: &str) -> Result<usize> {
        if threads.is_empty() {
            return Ok(0);
        }
        let sql = format!(
            "SELECT m.id, m.thread_id, m.run_id, m.role, p.seq, p.kind, p.call_id, p.tool_name
             FROM messages m LEFT JOIN message_parts p ON p.message_id = m.id
             WHERE m.id IN (SELECT MAX(id) FROM messages WHERE thread_id IN {} GROUP BY thread_id)
             ORDER BY m.id, p.seq",
            self.dialect().in_list(1)
        );
        let rows = self.query_all(&sql, args![id_list(threads.iter().map(|t| t.0))?], |r| {
            Ok(LastPart {
                message: r.get(0)?,
                thread: r.get(1)?,
                run: r.get(2)?,
                role: r.get(3)?,
                seq: r.get(4)?,
                kind: r.get(5)?,
                call_id: r.get(6)?,
                name: r.get(7)?,
            })
        })?;
        let mut parts: Vec<(MessageId, i64, Part)> = Vec::new();
        let mut events: Vec<NewEvent> = Vec::new();
        for message in rows.chunk_by(|a, b| a.message == b.message) {
            let head = &message[0];
            if head.role != "assistant" {
                continue;
            }
            let answered: Vec<&str> = message
                .iter()
                .filter(|p| p.kind.as_deref() == Some("tool_result"))
                .filter_map(|p| p.call_id.as_deref())
                .collect();
            let mut seq = message
                .iter()
                .filter_map(|p| p.seq)
                .max()
                .map_or(0, |s| s + 1);
            for call in message
                .iter()
                .filter(|p| p.kind.as_deref() == Some("tool_call"))
            {
                let call_id = call.call_id.clone().unwrap_or_default();
                if answered.contains(&call_id.as_str()) {
                    continue;
                }
                let part = Part {
                    body: PartBody::ToolResult {
                        call_id,
                        name: call.name.clone().unwrap_or_default(),
                        content: note.to_string(),
                        is_error: true,
                    },
                    visible: true,
                    in_context: true,
                };
                events.push((
                    "message_part_added",
                    Some(ThreadId(head.thread)),
                    head.run.map(RunId),
                    json!({"message_id": MessageId(head.message), "part": part}),
                ));
                parts.push((MessageId(head.message), seq, part));
                seq += 1;
            }
        }
        for chunk in parts.chunks(ROWS_PER_INSERT) {
            let rows: Vec<String> = (0..chunk.len())
                .map(|i| {
                    let b = i * 9;
                    format!(
                        "(?{}, ?{}, ?{}, ?{}, ?{}, ?{}, ?{}, ?{}, ?{})",
                        b + 1,
                        b + 2,
                        b + 3,
                        b + 4,
                        b + 5,
                        b + 6,
                        b + 7,
                        b + 8,
                        b + 9
                    )
                })
                .collect();
            let mut params = Vec::with_capacity(chunk.len() * 9);
            for (message, seq, part) in chunk {
                let PartBody::ToolResult {
                    call_id,
                    name,
                    content,
                    is_error,
                } = &part.body
                else {
                    unreachable!("only tool results are settled here")
                };
                params.extend_from_slice(args![
                    message.0,
                    *seq,
                    part.kind(),
                    content,
                    call_id,
                    name,
                    *is_error,
                    part.visible,
                    part.in_context
                ]);
            }
            self.exec(
                &format!(
                    "INSERT INTO message_parts
                         (message_id, seq, kind, text, call_id, tool_name, is_error, visible, in_context)
                     VALUES {}",
                    rows.join(", ")
                ),
                &params,
            )?;
        }
        let n = parts.len();
        self.append_events(events)?;
        Ok(n)
    }

    /// Append these events in order, as `event` would one by one: on SQLite one insert per
    /// few hundred rows (their ids, given in insert order, are read back); on PostgreSQL they
    /// are written at commit with the rest.
    fn append_events(&mut self, events: Vec<NewEvent>) -> Result<()> {
        let mut ids: Vec<EventId> = Vec::with_capacity(events.len());
        if self.dialect() == Dialect::Sqlite {
            for chunk in events.chunks(ROWS_PER_INSERT) {
                let rows: Vec<String> = (0..chunk.len())
                    .map(|i| {
                        let b = i * 4;
                        format!("(?1, ?{}, ?{}, ?{}, ?{})", b + 2, b + 3, b + 4, b + 5)
                    })
                    .collect();
                let mut params = Vec::with_capacity(1 + chunk.len() * 4);
                params.extend_from_slice(args![self.now]);
                for (kind, thread, run, payload) in chunk {
                    params.extend_from_slice(args![
                        thread.map(|t| t.0),
                        run.map(|r| r.0),
                        *kind,
                        payload.to_string()
                    ]);
                }
                let mut got: Vec<i64> = self.query_all(
                    &format!(
                        "INSERT INTO events (at, thread_id, run_id, kind, payload) VALUES {}
                         RETURNING id",
                        rows.join(", ")
                    ),
                    &params,
                    |r| r.get(0),
                )?;
                // RETURNING's order is not promised; AUTOINCREMENT gives the rows ids in the
                // order they were inserted, so sorted ids line up with the rows.
                got.sort_unstable();
                ids.extend(got.into_iter().map(EventId));
            }
        } else {
            ids.resize(events.len(), EventId(0));
        }
        let now = self.now;
        for ((kind, thread, run, payload), id) in events.into_iter().zip(ids) {
            self.events.push(Event {
                id,
                at: now,
                thread_id: thread,
                run_id: run,
                session_id: None,
                kind: kind.to_string(),
                payload,
            });
        }
        Ok(())
    }
}

/// One part (or none) of a thread's latest message.
struct LastPart {
    message: i64,
    thread: i64,
    run: Option<i64>,
    role: String,
    seq: Option<i64>,
    kind: Option<String>,
    call_id: Option<String>,
    name: Option<String>,
}
