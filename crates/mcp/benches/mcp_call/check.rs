//! The bench checks its own work after every run, so it cannot time a broken path: the run
//! completed, the model read every step's expected result, every MCP call is recorded (the
//! store keeps a run's first 80 records; every call is also an `mcp_call_finished` event), the
//! ledger holds one settled effect per effectful step and none otherwise, and `write_note`'s
//! file grew by one line per step.

use crate::model::Taken;
use crate::setup::{Bench, SERVER, Variant};
use troupe_core::effect::EffectOutcome;
use troupe_core::run::RunStatus;
use troupe_core::{EventId, RunId, ThreadId};

/// How many MCP call records the store keeps per run (`troupe_store`'s `KEPT_CALLS_PER_RUN`).
const KEPT_PER_RUN: usize = 80;

/// Check one finished run of `steps` calls of `v` on thread `t`; answers the run's id.
/// `notes_before` is the notes file's line count before the run.
pub fn run(
    bench: &Bench,
    v: Variant,
    t: ThreadId,
    steps: usize,
    taken: &Taken,
    notes_before: usize,
) -> Result<RunId, String> {
    let fail = |what: String| Err(format!("{} run on {t}: {what}", v.label()));
    if let Some(f) = taken.faults.first() {
        return fail(format!("the model read a wrong result: {f}"));
    }
    if taken.calls != steps as u64 + 1 {
        return fail(format!(
            "{} model calls, expected {}",
            taken.calls,
            steps + 1
        ));
    }
    if taken.gaps_ns.len() != steps {
        return fail(format!(
            "{} step gaps, expected {steps}",
            taken.gaps_ns.len()
        ));
    }
    let store = bench.engine.store();
    let (run, calls, finished, effects) = store
        .read(|tx| {
            let run = tx.runs_for_thread(t, 1)?.remove(0);
            let calls = tx.mcp_calls(run.id)?;
            let finished = tx
                .events_of_kinds(&["mcp_call_finished"], EventId(0), u32::MAX)?
                .into_iter()
                .filter(|e| e.run_id == Some(run.id))
                .collect::<Vec<_>>();
            let effects = tx.effects_for_thread(t)?;
            Ok((run, calls, finished, effects))
        })
        .map_err(|e| format!("reading the run's records: {e}"))?;
    if run.status != RunStatus::Completed {
        return fail(format!(
            "run {} is {:?} ({:?})",
            run.id, run.status, run.end_reason
        ));
    }
    let (want_records, want_events) = if v.is_mcp() {
        (steps.min(KEPT_PER_RUN), steps)
    } else {
        (0, 0)
    };
    if calls.len() != want_records || finished.len() != want_events {
        return fail(format!(
            "{} MCP call records and {} mcp_call_finished events, expected {want_records} and {want_events}",
            calls.len(),
            finished.len()
        ));
    }
    let tool = v
        .tool()
        .trim_start_matches(&format!("{SERVER}__"))
        .to_string();
    if let Some(bad) = calls
        .iter()
        .find(|c| !c.ok || c.server != SERVER || c.tool != tool || c.read_only == v.effectful())
    {
        return fail(format!("an MCP call record is not as expected: {bad:?}"));
    }
    let want_effects = if v.effectful() { steps } else { 0 };
    let settled = effects
        .iter()
        .filter(|e| e.outcome == EffectOutcome::Succeeded && e.tool == v.tool())
        .count();
    if effects.len() != want_effects || settled != want_effects {
        return fail(format!(
            "{} effects in the ledger ({settled} succeeded), expected {want_effects}",
            effects.len()
        ));
    }
    let notes = notes_lines(bench)?;
    let want_notes = notes_before + if v == Variant::McpWriteNote { steps } else { 0 };
    if notes != want_notes {
        return fail(format!(
            "the notes file has {notes} lines, expected {want_notes}"
        ));
    }
    Ok(run.id)
}

/// Lines in the file `write_note` appends to (0 before the first note).
pub fn notes_lines(bench: &Bench) -> Result<usize, String> {
    match std::fs::read_to_string(&bench.notes) {
        Ok(s) => Ok(s.lines().count()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(0),
        Err(e) => Err(format!("reading {}: {e}", bench.notes.display())),
    }
}
