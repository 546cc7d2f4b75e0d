//! Timeout lessons (digest 003-B §10.1): one row per kind of call (program, place), learned
//! when a search of that kind is killed by the timeout — in the transaction that records the
//! command — and applied by the shell's guard to every Bot. The rules are
//! `troupe_core::lesson`'s.

use crate::quality::{NewQualityEvent, QualityType, cause};
use crate::{CommandRecord, Result, StoreError, Tx, args};
use serde::Serialize;
use serde_json::json;
use troupe_core::ThreadId;
use troupe_core::lesson::{LessonState, SearchKind, after_timeout, search_kind};

/// A lesson as listed on the Lessons page.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LessonRecord {
    pub id: i64,
    /// `grep -r`, `rg`, `find`, `fd`, `ag` or `ack`.
    pub program: String,
    /// The folder the search walked.
    pub place: String,
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub state: LessonState,
    /// How many calls of this kind the timeout killed.
    pub timeouts: i64,
    /// The last one, as the Bot wrote it.
    pub command: String,
    pub timeout_secs: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
    pub last_timeout_at: i64,
}

impl LessonRecord {
    pub fn kind(&self) -> SearchKind {
        SearchKind {
            program: self.program.clone(),
            place: self.place.clone(),
        }
    }
}

/// The folder a shell call runs in: the workspace, or its `workdir` below it.
pub fn shell_folder(workspace: &str, workdir: Option<&str>) -> String {
    match workdir.map(str::trim).filter(|w| !w.is_empty()) {
        Some(w) if w.starts_with('/') => w.to_string(),
        Some(w) => format!("{}/{w}", workspace.trim_end_matches('/')),
        None => workspace.to_string(),
    }
}

const COLUMNS: &str = "id, program, place, state, timeouts, command, timeout_secs, created_at, \
    updated_at, last_timeout_at";

fn from_row(r: &crate::Row) -> Result<LessonRecord> {
    let state: String = r.get(3)?;
    Ok(LessonRecord {
        id: r.get(0)?,
        program: r.get(1)?,
        place: r.get(2)?,
        state: LessonState::parse(&state)
            .map_err(|e| StoreError::Corrupt(format!("lesson: {e}")))?,
        timeouts: r.get(4)?,
        command: r.get(5)?,
        timeout_secs: r.get(6)?,
        created_at: r.get(7)?,
        updated_at: r.get(8)?,
        last_timeout_at: r.get(9)?,
    })
}

impl Tx<'_> {
    /// A shell command was killed by its timeout (called where the command is recorded): an
    /// `execution` quality event, and, for a tree-walking search, the lesson of its kind learned
    /// or hardened (warn → block, LS2). A long render or build teaches nothing.
    pub fn command_timed_out(&mut self, thread: ThreadId, c: &CommandRecord) -> Result<()> {
        let workspace: Option<String> = self.query_opt(
            "SELECT workspace FROM threads WHERE id = ?1",
            args![thread.0],
            |r| r.get(0),
        )?;
        // The call's own arguments say it unfolded, with its working folder.
        let args: Option<String> = self.query_opt(
            "SELECT arguments FROM tool_calls WHERE run_id = ?1 AND call_id = ?2",
            args![c.run_id.0, c.call_id],
            |r| r.get(0),
        )?;
        let args: serde_json::Value = args
            .and_then(|a| serde_json::from_str(&a).ok())
            .unwrap_or_default();
        let command = args["command"].as_str().unwrap_or(&c.command);
        let cwd = shell_folder(
            workspace.as_deref().unwrap_or("/"),
            args["workdir"].as_str(),
        );
        let kind = search_kind(command, &cwd);
        let lesson = match &kind {
            Some(k) => Some(self.learn_timeout(k, command, c.duration_ms)?),
            None => None,
        };
        self.quality_event(
            NewQualityEvent::new(QualityType::Execution, cause::COMMAND_TIMED_OUT)
                .run(Some(c.run_id))
                .detail(json!({
                    "command": c.command, "call_id": c.call_id, "duration_ms": c.duration_ms,
                    "lesson_id": lesson.as_ref().map(|l| l.id),
                    "lesson_state": lesson.as_ref().map(|l| l.state),
                })),
        )?;
        Ok(())
    }

    fn learn_timeout(
        &mut self,
        kind: &SearchKind,
        command: &str,
        duration_ms: u64,
    ) -> Result<LessonRecord> {
        let secs = (duration_ms / 1000) as i64;
        let mut before = self.lesson_of(kind)?;
        if before.is_none() {
            let new: Option<i64> = self.query_opt(
                "INSERT INTO lessons (program, place, state, command, timeout_secs, created_at,
                     updated_at, last_timeout_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6, ?6)
                 ON CONFLICT (program, place) DO NOTHING RETURNING id",
                args![
                    kind.program,
                    kind.place,
                    after_timeout(None).as_str(),
                    command,
                    secs,
                    self.now
                ],
                |r| r.get(0),
            )?;
            match new {
                Some(id) => return self.lesson_learned(id),
                // Another writer learned it first (another node): this timeout hardens it.
                None => before = self.lesson_of(kind)?,
            }
        }
        let l = before.ok_or_else(|| StoreError::not_found("lesson", &kind.place))?;
        let state = after_timeout(Some(l.state));
        self.exec(
            "UPDATE lessons SET state = ?2, timeouts = timeouts + 1, command = ?3,
                 timeout_secs = ?4, updated_at = ?5, last_timeout_at = ?5
             WHERE id = ?1",
            args![l.id, state.as_str(), command, secs, self.now],
        )?;
        self.lesson_learned(l.id)
    }

    fn lesson_learned(&mut self, id: i64) -> Result<LessonRecord> {
        let rec = self.lesson(id)?;
        self.event("lesson_learned", None, None, json!(rec))?;
        Ok(rec)
    }

    pub fn lesson(&self, id: i64) -> Result<LessonRecord> {
        self.query_opt(
            &format!("SELECT {COLUMNS} FROM lessons WHERE id = ?1"),
            args![id],
            from_row,
        )?
        .ok_or_else(|| StoreError::not_found("lesson", id))
    }

    pub fn lesson_of(&self, kind: &SearchKind) -> Result<Option<LessonRecord>> {
        self.query_opt(
            &format!("SELECT {COLUMNS} FROM lessons WHERE program = ?1 AND place = ?2"),
            args![kind.program, kind.place],
            from_row,
        )
    }

    /// Every lesson, the latest timeout first.
    pub fn lessons(&self) -> Result<Vec<LessonRecord>> {
        self.query_all(
            &format!("SELECT {COLUMNS} FROM lessons ORDER BY last_timeout_at DESC, id DESC"),
            args![],
            from_row,
        )
    }

    /// The user switches a lesson (warn, block) or retires (off) and restores it.
    pub fn set_lesson_state(&mut self, id: i64, state: LessonState) -> Result<LessonRecord> {
        let cur = self.lesson(id)?;
        if cur.state == state {
            return Ok(cur);
        }
        self.exec(
            "UPDATE lessons SET state = ?2, updated_at = ?3 WHERE id = ?1",
            args![id, state.as_str(), self.now],
        )?;
        let rec = self.lesson(id)?;
        self.event(
            "lesson_changed",
            None,
            None,
            json!({"lesson": rec, "from": cur.state, "source": "user"}),
        )?;
        Ok(rec)
    }

    /// Whether this turn was already told about the lesson: a refused call in it carries the
    /// lesson's marker (the warning reached the model with that call's result).
    pub fn lesson_warned_in(&self, run: troupe_core::RunId, lesson: i64) -> Result<bool> {
        let marker = format!("%{}%", troupe_core::lesson::warning_marker(lesson));
        let n: i64 = self.query_one(
            "SELECT COUNT(*) FROM tool_calls
             WHERE run_id = ?1 AND name = 'shell' AND status = 'refused' AND result LIKE ?2",
            args![run.0, marker],
            |r| r.get(0),
        )?;
        Ok(n > 0)
    }
}
