//! What the soak checks after every restart and at the end, from the database and the
//! workspace files alone (nothing the daemon says about itself).

use crate::workload::Workload;
use anyhow::{Context, Result};
use rusqlite::{Connection, OptionalExtension, params};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

#[derive(Default, Debug)]
pub struct Findings {
    pub violations: Vec<String>,
    pub tasks: u64,
    pub effects: u64,
    pub lost: u64,
    pub repeated: u64,
}

impl Findings {
    fn bad(&mut self, what: String) {
        self.violations.push(what);
    }
}

pub fn open(db: &Path) -> Result<Connection> {
    let c = Connection::open(db).with_context(|| format!("open {}", db.display()))?;
    c.busy_timeout(std::time::Duration::from_secs(30))?;
    Ok(c)
}

/// The soak's conversations' threads: (thread, session, workspace).
fn threads_of(c: &Connection, w: &Workload) -> Result<Vec<(i64, i64, String)>> {
    let mut st = c.prepare(
        "SELECT t.id, st.session_id, t.workspace FROM session_threads st JOIN threads t ON t.id = st.thread_id",
    )?;
    let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
    let mut out = Vec::new();
    for r in rows {
        let r: (i64, i64, String) = r?;
        if w.sessions.contains(&r.1) {
            out.push(r);
        }
    }
    Ok(out)
}

/// `live`: the pid of the daemon running now (its live runs are allowed); `done`: the end,
/// when everything must have finished.
pub fn check(db: &Path, w: &Workload, live: Option<u32>, done: bool) -> Result<Findings> {
    let c = open(db)?;
    let mut f = Findings::default();
    let live = live.map_or(-1, i64::from);
    // The markers first, then one snapshot of the database: a command writes its marker only
    // after its ledger start committed, so every marker read here has its row in the snapshot.
    let logs: BTreeMap<i64, String> = threads_of(&c, w)?
        .into_iter()
        .map(|(t, _, ws)| {
            (
                t,
                std::fs::read_to_string(Path::new(&ws).join("effects.log")).unwrap_or_default(),
            )
        })
        .collect();
    c.execute_batch("BEGIN")?;

    let integrity: String = c.query_row("PRAGMA integrity_check", [], |r| r.get(0))?;
    if integrity != "ok" {
        f.bad(format!("integrity_check: {integrity}"));
    }

    // Event ids come from AUTOINCREMENT in one SQLite writer: a rolled-back insert gives its id
    // back, so any hole is an event lost after it was numbered.
    let (lo, hi, n, seq): (Option<i64>, Option<i64>, i64, Option<i64>) = c.query_row(
        "SELECT MIN(id), MAX(id), COUNT(*), (SELECT seq FROM sqlite_sequence WHERE name = 'events') FROM events",
        [],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
    )?;
    if let (Some(lo), Some(hi)) = (lo, hi)
        && (hi - lo + 1 != n || lo != 1)
    {
        f.bad(format!("event ids have gaps: min {lo} max {hi} count {n}"));
    }
    if let (Some(seq), Some(hi)) = (seq, hi)
        && seq != hi
    {
        f.bad(format!("events: sqlite_sequence {seq} but max id {hi}"));
    }

    // No run left live by a dead process, no lease held by one.
    let mut st = c.prepare(
        "SELECT id, thread_id, owner_pid, started_at FROM runs WHERE status = 'running' AND owner_pid <> ?1",
    )?;
    for r in st.query_map(params![live], |r| {
        Ok(format!(
            "run left live: id {} thread {} owner_pid {} started_at {}",
            r.get::<_, i64>(0)?,
            r.get::<_, i64>(1)?,
            r.get::<_, i64>(2)?,
            r.get::<_, i64>(3)?
        ))
    })? {
        f.bad(r?);
    }
    let mut st = c.prepare(
        "SELECT t.id, t.lease_run_id, r.status, r.owner_pid FROM threads t LEFT JOIN runs r ON r.id = t.lease_run_id
         WHERE t.lease_run_id IS NOT NULL AND (r.status IS NOT 'running' OR r.owner_pid <> ?1)",
    )?;
    for r in st.query_map(params![live], |r| {
        Ok(format!(
            "lease held by a dead or ended run: thread {} lease_run_id {} status {:?} owner_pid {:?}",
            r.get::<_, i64>(0)?,
            r.get::<_, i64>(1)?,
            r.get::<_, Option<String>>(2)?,
            r.get::<_, Option<i64>>(3)?
        ))
    })? {
        f.bad(r?);
    }

    // Every effect whose start was recorded has an outcome, or is unknown (or runs right now).
    f.effects = c.query_row("SELECT COUNT(*) FROM effects", [], |r| r.get::<_, i64>(0))? as u64;
    let mut st = c.prepare(
        "SELECT e.id, e.thread_id, e.effect_key, e.tool, r.status, r.owner_pid FROM effects e JOIN runs r ON r.id = e.run_id
         WHERE e.outcome = 'started' AND (r.status <> 'running' OR r.owner_pid <> ?1)",
    )?;
    for r in st.query_map(params![live], |r| {
        Ok(format!(
            "effect started but never settled: id {} thread {} key {} tool {} run {} (owner {})",
            r.get::<_, i64>(0)?,
            r.get::<_, i64>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, String>(3)?,
            r.get::<_, String>(4)?,
            r.get::<_, i64>(5)?
        ))
    })? {
        f.bad(r?);
    }

    // A child task a crash interrupted is resumed only by its parent's explicit call, which
    // these scripts never make. A loop's reviewer is not one: a kill that cuts it off has its
    // loop prepare it again under the same key, which resumes it by design.
    let mut st =
        c.prepare("SELECT id, status, resumes FROM tasks WHERE resumes > 0 AND role = 'task'")?;
    for r in st.query_map([], |r| {
        Ok(format!(
            "child task {} resumed by itself ({} times, now {})",
            r.get::<_, i64>(0)?,
            r.get::<_, i64>(2)?,
            r.get::<_, String>(1)?
        ))
    })? {
        f.bad(r?);
    }

    let threads = threads_of(&c, w)?;
    for (thread, session, _) in &threads {
        markers(
            &c,
            &mut f,
            *thread,
            logs.get(thread).map_or("", String::as_str),
        )?;
        unknown_not_resumed(&c, &mut f, w, *thread, *session)?;
        if done {
            answered_once(&c, &mut f, *thread)?;
        }
    }
    person_lines(&c, &mut f, w, done)?;

    if done {
        let n: i64 = c.query_row(
            "SELECT COUNT(*) FROM runs WHERE status = 'running'",
            [],
            |r| r.get(0),
        )?;
        if n > 0 {
            f.bad(format!("{n} runs still running at the end"));
        }
        let n: i64 = c.query_row(
            "SELECT COUNT(*) FROM inbox_items WHERE failed_reason IS NULL AND mode <> 'context'",
            [],
            |r| r.get(0),
        )?;
        if n > 0 {
            // (context items are left out: they ride along with the next model call, never wake)
            f.bad(format!(
                "{n} task or steer inbox items never taken at the end"
            ));
        }
        for (thread, session, _) in &threads {
            let paused: Option<String> = c.query_row(
                "SELECT paused_reason FROM threads WHERE id = ?1",
                [thread],
                |r| r.get(0),
            )?;
            if let Some(p) = paused {
                f.bad(format!(
                    "thread {thread} (session {session}) still paused ({p}) at the end"
                ));
            }
        }
        let mut st = c.prepare(
            "SELECT id, status FROM tasks WHERE status IN ('queued', 'running', 'interrupted')",
        )?;
        for r in st.query_map([], |r| {
            Ok(format!(
                "child task {} unfinished: {}",
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?
            ))
        })? {
            f.bad(r?);
        }
    }
    c.execute_batch("COMMIT")?;
    Ok(f)
}

/// Each `a PID` marker in the workspace's effects.log is one run of one shell effect: a pid seen
/// twice, an effect key with two markers, or more markers than shell effects started is a repeat.
fn markers(c: &Connection, f: &mut Findings, thread: i64, text: &str) -> Result<()> {
    let pids: Vec<i64> = text
        .lines()
        .filter_map(|l| l.strip_prefix("a ")?.trim().parse().ok())
        .collect();
    let mut by_pgid: BTreeMap<i64, String> = BTreeMap::new();
    let mut st =
        c.prepare("SELECT pgid, effect_key FROM effects WHERE thread_id = ?1 AND tool = 'shell'")?;
    let mut shells = 0usize;
    for r in st.query_map([thread], |r| {
        Ok((r.get::<_, Option<i64>>(0)?, r.get::<_, String>(1)?))
    })? {
        let (pgid, key) = r?;
        shells += 1;
        if let Some(p) = pgid {
            by_pgid.insert(p, key);
        }
    }
    let mut seen = BTreeSet::new();
    for p in &pids {
        if !seen.insert(*p) {
            f.repeated += 1;
            let key = by_pgid
                .get(p)
                .map_or("(no ledger row names this pid)", String::as_str);
            f.bad(format!(
                "thread {thread}: marker of pid {p} appears twice (effect key {key})"
            ));
        }
    }
    if pids.len() > shells {
        f.repeated += (pids.len() - shells) as u64;
        f.bad(format!(
            "thread {thread}: {} shell markers but only {shells} shell effects started: pids {pids:?}, ledger {by_pgid:?}",
            pids.len()
        ));
    }
    Ok(())
}

/// A thread whose latest effect is unknown runs again only after the person acted on its
/// conversation (a line routed, or Continue pressed, after the effect was cut off).
fn unknown_not_resumed(
    c: &Connection,
    f: &mut Findings,
    w: &Workload,
    thread: i64,
    session: i64,
) -> Result<()> {
    let last: Option<(i64, String, String, Option<i64>)> = c
        .query_row(
            "SELECT id, effect_key, outcome, settled_at FROM effects WHERE thread_id = ?1 ORDER BY id DESC LIMIT 1",
            [thread],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .optional()?;
    let Some((id, key, outcome, Some(cut))) = last else {
        return Ok(());
    };
    if outcome != "unknown" {
        return Ok(());
    }
    let mut st = c.prepare(
        "SELECT id, started_at, trigger_reason FROM runs WHERE thread_id = ?1 AND started_at >= ?2",
    )?;
    for r in st.query_map(params![thread, cut], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, i64>(1)?,
            r.get::<_, String>(2)?,
        ))
    })? {
        let (run, started, trigger) = r?;
        // The person's line counts from when it was routed: one sent just before a kill is
        // routed by the next daemon, and is the person writing all the same.
        let routed_line: i64 = c.query_row(
            "SELECT COUNT(*) FROM session_messages WHERE session_id = ?1 AND author = 'user' AND routed_at BETWEEN ?2 AND ?3",
            params![session, cut, started],
            |r| r.get(0),
        )?;
        let acted = routed_line > 0
            || w.actions
                .iter()
                .any(|a| a.session == session && a.at_ms >= cut && a.at_ms <= started);
        if !acted {
            f.bad(format!(
                "thread {thread} (session {session}) resumed by itself after unknown effect {id} ({key}) cut at {cut}: run {run} started {started} trigger {trigger}"
            ));
        }
    }
    Ok(())
}

/// Every line the person sent becomes exactly one root task in its Bot's thread, answered once.
fn person_lines(c: &Connection, f: &mut Findings, w: &Workload, done: bool) -> Result<()> {
    let mut st = c.prepare(
        "SELECT id, session_id, routing FROM session_messages WHERE author = 'user' ORDER BY id",
    )?;
    let lines: Vec<(i64, i64, Option<String>)> = st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<Result<_, _>>()?;
    for (line, session, routing) in lines {
        if !w.sessions.contains(&session) {
            continue;
        }
        f.tasks += 1;
        let key = format!("line:{line}:to:%");
        // A line to a Bot that is working joins its running task (a steer), else starts one.
        let delivered: Vec<(i64, i64, bool)> = c
            .prepare("SELECT id, COALESCE(root_id, id), is_root FROM messages WHERE delivery_key LIKE ?1")?
            .query_map([&key], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<Result<_, _>>()?;
        let pending: i64 = c.query_row(
            "SELECT COUNT(*) FROM inbox_items WHERE delivery_key LIKE ?1",
            [&key],
            |r| r.get(0),
        )?;
        let total = delivered.len() as i64 + pending;
        if total > 1 {
            f.repeated += 1;
            f.bad(format!(
                "line {line} (session {session}) delivered {total} times: messages (id, root, is_root) {delivered:?}, {pending} still in the inbox"
            ));
        }
        let routed = routing.as_deref() == Some("routed");
        if total == 0 && (routed || done) {
            f.lost += 1;
            f.bad(format!("line {line} (session {session}, routing {routing:?}) is in no inbox and no thread: lost"));
        }
        if done && !routed {
            f.lost += 1;
            f.bad(format!(
                "line {line} (session {session}) never routed: {routing:?}"
            ));
        }
    }
    Ok(())
}

/// Each person line is answered once. The thread splits into segments at every delivered input
/// (a person's line, a child task's result): a segment holds at most one final answer, and a
/// line's segment holds one — or none, when a later input joined the same task before the
/// answer (then that segment's answer covers it), or when the person wrote again after the task
/// was cut off (the kernel starts a new task then).
fn answered_once(c: &Connection, f: &mut Findings, thread: i64) -> Result<()> {
    struct Segment {
        input: i64,
        root: i64,
        line: bool,
        answers: Vec<i64>,
    }
    // (id, root, role, finish, delivery key)
    type Row = (i64, i64, String, Option<String>, Option<String>);
    let msgs: Vec<Row> = c
        .prepare("SELECT id, COALESCE(root_id, id), role, finish, delivery_key FROM messages WHERE thread_id = ?1 ORDER BY id")?
        .query_map([thread], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))?
        .collect::<Result<_, _>>()?;
    let mut segs: Vec<Segment> = Vec::new();
    for (id, root, role, finish, key) in msgs {
        if role == "user" && key.is_some() {
            segs.push(Segment {
                input: id,
                root,
                line: key.as_deref().is_some_and(|k| k.starts_with("line:")),
                answers: Vec::new(),
            });
        } else if finish.as_deref() == Some("stop")
            && let Some(s) = segs.last_mut()
        {
            s.answers.push(id);
        }
    }
    for (i, s) in segs.iter().enumerate() {
        if s.answers.len() > 1 {
            f.repeated += 1;
            f.bad(format!(
                "thread {thread}: input message {} (task {}) answered {} times: {:?}",
                s.input,
                s.root,
                s.answers.len(),
                s.answers
            ));
        }
        if !s.line || !s.answers.is_empty() {
            continue;
        }
        let mut covered = false;
        for next in &segs[i + 1..] {
            if next.root != s.root {
                covered = c.query_row(
                    "SELECT COUNT(*) FROM runs WHERE thread_id = ?1 AND root_id = ?2 AND status = 'interrupted'",
                    params![thread, s.root],
                    |r| r.get::<_, i64>(0),
                )? > 0;
                break;
            }
            if !next.answers.is_empty() {
                covered = true;
                break;
            }
        }
        if !covered {
            f.lost += 1;
            f.bad(format!(
                "thread {thread}: line message {} (task {}) was never answered",
                s.input, s.root
            ));
        }
    }
    Ok(())
}
