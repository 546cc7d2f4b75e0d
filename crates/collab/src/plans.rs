//! Plans ("jobs") as the API and the Bots see them: the view, the person's spec edits (cause
//! `user`), opening a plan from the line that asked for it (named by PLAN-1/DS-7, its folder
//! under the home conversation's workspace) and the block a segment bound to it reads (PLAN-O6).

use crate::threads::workspace_of;
use crate::tickets::ball::job_ball;
use crate::{Collab, CollabError};
use serde::{Deserialize, Serialize};
use std::path::Path;
use troupe_core::ball::Ball;
use troupe_core::conversation::{Author, SessionMessage};
use troupe_core::dormancy::{PlanActivity, delivered_goes_dormant, may_set_aside};
use troupe_core::hold::{Hold, held_by};
use troupe_core::plan::{PlanSpec, PlanStatus, RevisionCause, SpecPatch, validate_patch};
use troupe_core::plan_name::{folder_name, plan_name};
use troupe_core::work_item::WorkState;
use troupe_core::{HoldId, PlanId, SessionId, SessionMessageId};
use troupe_store::{FilingSource, NewFiling, NewPlan, PlanRecord, PlanRevision, StoreError, Tx};

/// A plan as the API shows it.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PlanView {
    pub id: PlanId,
    /// At most 40 code points, never blank; only the person renames it.
    pub name: String,
    pub spec: PlanSpec,
    pub status: PlanStatus,
    /// Out of the default candidates and call-backs; the person's line or edit wakes it.
    pub dormant: bool,
    pub dormant_at: Option<i64>,
    pub dormant_cause: Option<String>,
    /// When it was last marked done (cleared when it is set back to active).
    pub delivered_at: Option<i64>,
    /// The person's last rename.
    pub renamed_at: Option<i64>,
    pub last_user_activity_at: Option<i64>,
    /// The opening line's words, verbatim.
    pub original_request: String,
    pub home_session_id: Option<SessionId>,
    pub opening_line_id: Option<SessionMessageId>,
    /// Absolute; fixed when the plan was opened.
    pub folder: String,
    /// The spec's version: an edit names the one it was based on.
    pub version: i64,
    pub created_at: i64,
    pub updated_at: i64,
    /// The holds in force over the job as a whole (its own, its home conversation's,
    /// everything), newest first, as of this read (HOLD-P8).
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<i64>))]
    pub held_by: Vec<HoldId>,
    /// Who its first open ticket waits on (C §13); null with no open ticket and in a
    /// parked, done or dormant job.
    pub ball: Option<Ball>,
    /// What changed on it last, and when (PLAN-O7).
    pub last_change: Option<crate::last_change::LastChange>,
    /// Its tickets, dropped ones too.
    pub tickets: u32,
    /// The turns of its work (every Bot's, on the job and its tickets).
    pub turns: u32,
    /// PLAN-U1: closed, no tickets, at most one turn — folded under "One question".
    pub one_question: bool,
}

impl PlanView {
    /// The view of a plan given the holds in force (read in the same transaction).
    pub fn of(p: PlanRecord, in_force: &[Hold]) -> Self {
        PlanView {
            held_by: held_by(in_force, p.id, p.home_session_id),
            id: p.id,
            dormant: p.is_dormant(),
            name: p.name,
            spec: p.spec,
            status: p.status,
            dormant_at: p.dormant_at,
            dormant_cause: p.dormant_cause,
            delivered_at: p.delivered_at,
            renamed_at: p.renamed_at,
            last_user_activity_at: p.last_user_activity_at,
            original_request: p.original_request,
            home_session_id: p.home_session_id,
            opening_line_id: p.opening_line_id,
            folder: p.folder,
            version: p.version,
            created_at: p.created_at,
            updated_at: p.updated_at,
            // Read from the job's tickets by the callers, in their transaction.
            ball: None,
            last_change: None,
            tickets: 0,
            turns: 0,
            one_question: false,
        }
    }
}

/// One version of a plan's spec.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PlanRevisionView {
    pub plan_id: PlanId,
    pub version: i64,
    /// `user`, `message:<id>`, `turn:<id>` or `hold:<id>`.
    pub cause: String,
    /// The fields this version changed: `{"goal": {"old": "…", "new": "…"}}` (old is null in
    /// version 1).
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub changes: serde_json::Value,
    pub at: i64,
}

impl From<PlanRevision> for PlanRevisionView {
    fn from(r: PlanRevision) -> Self {
        PlanRevisionView {
            plan_id: r.plan_id,
            version: r.version,
            cause: r.cause.to_string(),
            changes: r.changes,
            at: r.at,
        }
    }
}

/// The person's edit of a plan, based on `version`; absent fields stay as they are.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanPatchRequest {
    /// The version this edit is based on; a stale one is refused (`revision_conflict`).
    pub version: i64,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub kind: Option<String>,
    #[serde(default)]
    pub goal: Option<String>,
    #[serde(default)]
    pub done_when: Option<String>,
    #[serde(default)]
    pub rules: Option<String>,
    #[serde(default)]
    pub process: Option<String>,
    #[serde(default)]
    pub progress: Option<String>,
    /// `active`, `done`, or `parked` (which stops the job with a hold; `active`/`done` on a
    /// parked job lifts its holds).
    #[serde(default)]
    pub status: Option<String>,
}

impl PlanPatchRequest {
    fn has_fields(&self) -> bool {
        [
            &self.name,
            &self.kind,
            &self.goal,
            &self.done_when,
            &self.rules,
            &self.process,
            &self.progress,
        ]
        .iter()
        .any(|f| f.is_some())
    }

    fn clear_fields(&mut self) {
        for f in [
            &mut self.name,
            &mut self.kind,
            &mut self.goal,
            &mut self.done_when,
            &mut self.rules,
            &mut self.process,
            &mut self.progress,
        ] {
            *f = None;
        }
    }
}

/// A plan to open in its home conversation.
#[derive(Clone, Debug)]
pub struct OpenPlan {
    pub home_session_id: SessionId,
    /// The person's line that asked for the job: it names the plan and is its original
    /// request.
    pub opening_line_id: Option<SessionMessageId>,
    /// A `work_on` title: it becomes the goal, never the name (PLAN-2: Bots do not name jobs).
    pub title: Option<String>,
    pub cause: RevisionCause,
}

impl Collab {
    /// The plans of a conversation (home to them, or filed into from it), newest first,
    /// dormant ones included.
    pub fn plans(&self, session: SessionId) -> Result<Vec<PlanView>, CollabError> {
        Ok(self.store().read(|tx| {
            tx.session(session)?;
            let in_force = tx.holds_in_force()?;
            tx.plans_of_session(session, true)?
                .into_iter()
                .map(|p| {
                    let ball = job_ball(tx, &p)?;
                    let last_change = Some(crate::last_change::last_change(tx, &p)?);
                    Ok(PlanView {
                        ball,
                        last_change,
                        ..sized(tx, PlanView::of(p, &in_force))?
                    })
                })
                .collect::<Result<_, StoreError>>()
        })?)
    }

    pub fn plan(&self, id: PlanId) -> Result<PlanView, CollabError> {
        Ok(self.store().read(|tx| plan_view(tx, id))?)
    }

    pub fn plan_revisions(&self, id: PlanId) -> Result<Vec<PlanRevisionView>, CollabError> {
        Ok(self.store().read(|tx| {
            tx.plan(id)?;
            Ok(tx
                .plan_revisions(id)?
                .into_iter()
                .map(PlanRevisionView::from)
                .collect())
        })?)
    }

    /// The lines filed under a plan, from any conversation, oldest first.
    pub fn plan_messages(
        &self,
        id: PlanId,
        after: Option<SessionMessageId>,
        limit: u32,
    ) -> Result<Vec<SessionMessage>, CollabError> {
        if limit == 0 || limit > 1000 {
            return Err(CollabError::invalid("limit must be between 1 and 1000"));
        }
        Ok(self.store().read(|tx| {
            tx.plan(id)?;
            tx.plan_lines(id, after, limit)
        })?)
    }

    /// The person's edit (the flow board's): cause `user`, so it also counts as their activity
    /// and wakes a dormant plan (PLAN-5, D9). A stale version is `revision_conflict`.
    pub fn patch_plan_spec(
        &self,
        id: PlanId,
        req: PlanPatchRequest,
    ) -> Result<PlanView, CollabError> {
        let status = req
            .status
            .as_deref()
            .map(|s| PlanStatus::parse(s.trim()).map_err(|m| format!("status: {m}")))
            .transpose()
            .map_err(CollabError::invalid)?;
        let patch = SpecPatch {
            name: req.name,
            kind: req.kind,
            goal: req.goal,
            done_when: req.done_when,
            rules: req.rules,
            process: req.process,
            progress: req.progress,
            status,
        };
        validate_patch(&patch).map_err(CollabError::invalid)?;
        match self.store().write(|tx| {
            let before = tx.plan(id)?.spec;
            tx.patch_plan(id, req.version, &patch, RevisionCause::User)?;
            // The person's words on the board are kept as quotes in the same write.
            crate::quotes::board::spec_edit(
                tx,
                id,
                &before,
                patch.goal.as_deref(),
                patch.done_when.as_deref(),
                patch.rules.as_deref(),
            )?;
            plan_view(tx, id)
        }) {
            Ok(p) => Ok(p),
            // The only conflict an edit meets is a stale version.
            Err(StoreError::Conflict(m)) => Err(CollabError::conflict("revision_conflict", m)),
            Err(e) => Err(e.into()),
        }
    }

    /// The spec route under holds (HOLD-P9): `status: parked` makes a hold on the job (which
    /// ends its running turns like any hold); `active` or `done` lifts the job's own holds
    /// first, so the status given back is the person's; a hold over its conversation still
    /// keeps it parked (`held_by` says which). Other fields are the person's edit as usual.
    pub async fn edit_plan_spec(
        &self,
        id: PlanId,
        mut req: PlanPatchRequest,
    ) -> Result<PlanView, CollabError> {
        let wanted = req
            .status
            .as_deref()
            .map(|s| PlanStatus::parse(s.trim()).map_err(|m| format!("status: {m}")))
            .transpose()
            .map_err(CollabError::invalid)?;
        let current = self.store().read(|tx| tx.plan(id))?;
        if current.version != req.version {
            return Err(CollabError::conflict(
                "revision_conflict",
                format!(
                    "job {id} is at version {}, not {}: read it again and redo the edit",
                    current.version, req.version
                ),
            ));
        }
        let lift = matches!(wanted, Some(PlanStatus::Active | PlanStatus::Done))
            && current.status == PlanStatus::Parked;
        if wanted == Some(PlanStatus::Parked) || lift {
            req.status = None;
            // The other fields first, on the version the person read.
            let edited = req.has_fields();
            if edited {
                self.patch_plan_spec(id, req.clone())?;
            }
            if wanted == Some(PlanStatus::Parked) {
                self.hold_plan_by_edit(id).await?;
            } else {
                self.lift_plan_holds(id).await?;
                let now = self.store().read(|tx| tx.plan(id))?;
                // Still parked by a wider hold, or given back as asked: nothing more to do.
                if now.status != PlanStatus::Parked && Some(now.status) != wanted {
                    req.version = now.version;
                    req.status = wanted.map(|s| s.as_str().to_string());
                    req.clear_fields();
                    return self.patch_plan_spec(id, req);
                }
            }
            return self.plan(id);
        }
        self.patch_plan_spec(id, req)
    }

    async fn hold_plan_by_edit(&self, id: PlanId) -> Result<(), CollabError> {
        self.make_hold(crate::holds::HoldSpec {
            scope: troupe_core::hold::HoldScope::Plan { plan_id: id },
            source: troupe_core::hold::HoldSource::UserButton,
            source_message_id: None,
            session_id: None,
            lift_on_next_user_message: true,
            cancel: false,
            composer_stop: false,
        })
        .await?;
        Ok(())
    }

    /// Open a plan in its own transaction (see [`open_plan_in`]).
    pub fn open_plan(&self, req: OpenPlan) -> Result<PlanView, CollabError> {
        let workspaces = self.workspaces.clone();
        let plan = self.store().write(|tx| {
            let id = open_plan_in(tx, &workspaces, &req)?;
            plan_view(tx, id)
        })?;
        Ok(plan)
    }
}

/// One plan's view with its `held_by`, read in the caller's transaction.
fn plan_view(tx: &mut Tx<'_>, id: PlanId) -> Result<PlanView, StoreError> {
    let plan = tx.plan(id)?;
    let ball = job_ball(tx, &plan)?;
    let last_change = Some(crate::last_change::last_change(tx, &plan)?);
    Ok(PlanView {
        ball,
        last_change,
        ..sized(tx, PlanView::of(plan, &tx.holds_in_force()?))?
    })
}

/// The view with its tickets, turns and whether it was one question (PLAN-U1).
fn sized(tx: &Tx<'_>, view: PlanView) -> Result<PlanView, StoreError> {
    let (tickets, turns) = tx.job_sizes(view.id)?;
    Ok(PlanView {
        tickets,
        turns,
        one_question: troupe_core::plan::is_one_question(view.status, tickets, turns),
        ..view
    })
}

/// Open a plan inside the caller's transaction: named from the opening line (the roster's
/// Bot names left out), its words kept verbatim as the original request, the title (if any)
/// as the goal, the folder `<home workspace>/jobs/<id>-<slug>` made on disk, and the opening
/// line filed under it (locked: the line is why the job exists).
pub(crate) fn open_plan_in(
    tx: &mut Tx<'_>,
    workspaces: &Path,
    req: &OpenPlan,
) -> Result<PlanId, StoreError> {
    let plan = make_plan(tx, workspaces, req)?;
    set_aside_quiet_plans(tx, req.home_session_id, plan)?;
    Ok(plan)
}

/// [`open_plan_in`] without setting the conversation's quiet jobs aside: a routine's standing
/// job is no new work of the person's (PLAN-D11).
pub(crate) fn make_plan(
    tx: &mut Tx<'_>,
    workspaces: &Path,
    req: &OpenPlan,
) -> Result<PlanId, StoreError> {
    let home = tx.session(req.home_session_id)?;
    let line = req.opening_line_id.map(|l| tx.line(l)).transpose()?;
    if line.as_ref().is_some_and(|l| l.author != Author::User) {
        return Err(StoreError::Invalid(
            "opening_line_id: a job opens from a person's line, not a Bot's or the app's".into(),
        ));
    }
    let title = req
        .title
        .as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty());
    let bots: Vec<String> = tx.bots(false)?.into_iter().map(|b| b.name).collect();
    let name = match (&line, title) {
        (Some(l), _) => plan_name(&l.body, &[], &bots),
        // No person's words to name it by: the title is all there is.
        (None, Some(t)) => plan_name(t, &[], &bots),
        (None, None) => {
            return Err(StoreError::Invalid(
                "a job opens from a person's line or with a title".into(),
            ));
        }
    };
    let workspace = workspace_of(tx, workspaces, &home)?;
    let jobs = std::path::absolute(&workspace)
        .map_err(|e| StoreError::Invalid(format!("workspace {}: {e}", workspace.display())))?
        .join("jobs");
    let plan = tx.create_plan(
        &NewPlan {
            name: name.clone(),
            original_request: line.as_ref().map(|l| l.body.clone()).unwrap_or_default(),
            home_session_id: home.id,
            opening_line_id: line.as_ref().map(|l| l.id),
            spec: PlanSpec {
                goal: title.unwrap_or_default().to_string(),
                ..Default::default()
            },
            cause: req.cause,
        },
        |id| jobs.join(folder_name(id, &name)).display().to_string(),
    )?;
    std::fs::create_dir_all(&plan.folder).map_err(|e| {
        StoreError::Invalid(format!(
            "cannot create the job's folder {}: {e}",
            plan.folder
        ))
    })?;
    if let Some(l) = &line {
        tx.file_line(&NewFiling {
            message_id: l.id,
            plan_id: plan.id,
            ticket_id: None,
            part_id: None,
            source: if title.is_some() {
                FilingSource::WorkOn
            } else {
                FilingSource::Desk
            },
            filed_by: req.cause.to_string(),
            locked: true,
            primary: true,
        })?;
    }
    Ok(plan.id)
}

/// PLAN-D3/D5: opening a job sets the conversation's older jobs dormant only when quiet — 2 h
/// without the person or a segment and no work under way — or delivered 72 h ago and not
/// touched by the person since. Dormancy changes no stage and lifts no hold.
fn set_aside_quiet_plans(
    tx: &mut Tx<'_>,
    session: SessionId,
    opened: PlanId,
) -> Result<(), StoreError> {
    let now = tx.now();
    for older in tx.plans_of_session(session, false)? {
        if older.id == opened {
            continue;
        }
        let busy = tx
            .work_items_of_plan(older.id)?
            .iter()
            .filter(|w| !matches!(w.state, WorkState::Idle | WorkState::Closed))
            .count();
        let activity = PlanActivity {
            last_user_activity_at: older.last_user_activity_at,
            last_segment_at: tx.last_segment_on(older.id)?,
            non_idle_work_items: busy,
            delivered_at: older.delivered_at,
            created_at: older.created_at,
        };
        if delivered_goes_dormant(&activity, now) {
            tx.set_plan_dormant(older.id, "delivered")?;
        } else if may_set_aside(&activity, now) {
            tx.set_plan_dormant(older.id, "set_aside")?;
        }
    }
    Ok(())
}

/// The note a segment reads after the person renamed the job and before they wrote its goal
/// again (PLAN-3).
pub(crate) const RENAMED_NOTE: &str = "the user renamed this job after its goal was written: \
    where the goal disagrees with the name or with their own words, their words win";

/// The job as a segment bound to it reads it (PLAN-O6): its name, the spec fields written so
/// far, the original request, and the rename note while PLAN-3 calls for it.
pub(crate) fn plan_situation(tx: &Tx<'_>, id: PlanId) -> Result<String, StoreError> {
    let plan = tx.plan(id)?;
    let status = match plan.status {
        PlanStatus::Active => "in progress",
        PlanStatus::Done => "done",
        PlanStatus::Parked => "parked",
    };
    let dormant = if plan.is_dormant() { ", dormant" } else { "" };
    let mut out = format!("Job \"{}\" ({id}, {status}{dormant}).", plan.name);
    for (field, value) in plan.spec.fields() {
        if value.trim().is_empty() {
            continue;
        }
        let label = match field {
            "kind" => "Kind",
            "goal" => "Goal",
            "done_when" => "Done when",
            "rules" => "Rules",
            "process" => "Process",
            _ => "Progress",
        };
        out.push_str(&format!("\n{label}: {value}"));
    }
    if !plan.original_request.trim().is_empty() {
        out.push_str(&format!(
            "\nThe user's original request, verbatim: {}",
            plan.original_request
        ));
    }
    if !plan.spec.goal.trim().is_empty() && renamed_since_goal(&tx.plan_revisions(id)?) {
        out.push_str(&format!("\nNote: {RENAMED_NOTE}."));
    }
    Ok(out)
}

/// Whether the person's latest rename is newer than their latest edit of the goal (a rename
/// and a goal in one edit are both theirs: no note).
fn renamed_since_goal(revisions: &[PlanRevision]) -> bool {
    let latest = |f: &dyn Fn(&PlanRevision) -> bool| {
        revisions
            .iter()
            .filter(|r| r.cause == RevisionCause::User && f(r))
            .map(|r| r.version)
            .max()
    };
    let renamed = latest(&|r| r.changes.get("name").is_some_and(|c| !c["old"].is_null()));
    let goal = latest(&|r| r.changes.get("goal").is_some());
    match (renamed, goal) {
        (Some(r), Some(g)) => r > g,
        (Some(_), None) => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use troupe_core::ManualClock;
    use troupe_core::conversation::SessionKind;
    use troupe_store::{NewBot, NewLine, Store};

    fn setup(words: &str) -> (Store, tempfile::TempDir, SessionId, SessionMessageId) {
        let store = troupe_store::testing::open(Arc::new(ManualClock::new(1_000)));
        let dir = tempfile::tempdir().unwrap();
        let (s, l) = store
            .write(|tx| {
                let bot = tx.create_bot(&NewBot {
                    name: "Alpha".into(),
                    persona: String::new(),
                    endpoint: None,
                    scripted: true,
                })?;
                let s = tx.create_session(SessionKind::Direct, "t", &[bot.id])?;
                let l = tx.insert_line(&NewLine::plain(s.id, Author::User, words.into()))?;
                Ok((s.id, l.id))
            })
            .unwrap();
        (store, dir, s, l)
    }

    fn open(store: &Store, dir: &Path, req: &OpenPlan) -> Result<PlanRecord, StoreError> {
        store.write(|tx| {
            let id = open_plan_in(tx, dir, req)?;
            tx.plan(id)
        })
    }

    #[test]
    fn ds_7_a_plan_is_named_from_its_line_without_the_bots_it_names() {
        let (store, dir, s, l) = setup("@Alpha 做一个 logo");
        let req = OpenPlan {
            home_session_id: s,
            opening_line_id: Some(l),
            title: Some("Design the company logo".into()),
            cause: RevisionCause::Turn(troupe_core::RunId(4)),
        };
        let p = open(&store, dir.path(), &req).unwrap();
        assert_eq!(p.name, "做一个 logo");
        assert_eq!(p.original_request, "@Alpha 做一个 logo");
        assert_eq!(
            p.spec.goal, "Design the company logo",
            "the title is the goal"
        );
        let want = dir
            .path()
            .join(format!("session-{}", s.0))
            .join("jobs")
            .join(format!("plan_{}-做一个-logo", p.id.0));
        assert_eq!(Path::new(&p.folder), want);
        assert!(want.is_dir(), "the folder is made on disk");
        let filed = store.read(|tx| tx.filings_of_line(l)).unwrap();
        assert_eq!(filed.len(), 1);
        assert_eq!(
            (filed[0].source, filed[0].locked),
            (FilingSource::WorkOn, true)
        );
        assert_eq!(filed[0].filed_by, "turn:4");
    }

    #[test]
    fn a_bot_line_opens_no_plan() {
        let (store, dir, s, _) = setup("x");
        let bot_line = store
            .write(|tx| tx.insert_line(&NewLine::plain(s, Author::Bot, "I will".into())))
            .unwrap();
        let req = OpenPlan {
            home_session_id: s,
            opening_line_id: Some(bot_line.id),
            title: None,
            cause: RevisionCause::User,
        };
        assert!(matches!(
            open(&store, dir.path(), &req),
            Err(StoreError::Invalid(_))
        ));
    }

    #[test]
    fn plan_3_a_rename_asks_the_segment_to_follow_the_user_until_the_goal_is_edited() {
        let (store, dir, s, l) = setup("让审片员回复视频导演");
        let req = OpenPlan {
            home_session_id: s,
            opening_line_id: Some(l),
            title: Some("制作一部未来世界题材、时长超过2分钟的短片".into()),
            cause: RevisionCause::Message(l),
        };
        let p = open(&store, dir.path(), &req).unwrap();
        let situation = || store.read(|tx| plan_situation(tx, p.id)).unwrap();
        let first = situation();
        assert!(first.contains("Job \"让审片员回复视频导演\""), "{first}");
        assert!(first.contains("Goal: 制作一部未来世界题材"), "{first}");
        assert!(first.contains("original request, verbatim: 让审片员回复视频导演"));
        assert!(!first.contains("Rules:"), "unwritten fields are left out");
        assert!(!first.contains(RENAMED_NOTE));

        let rename = SpecPatch {
            name: Some("做《一拳超人》动画".into()),
            ..Default::default()
        };
        store
            .write(|tx| tx.patch_plan(p.id, 1, &rename, RevisionCause::User))
            .unwrap();
        let renamed = situation();
        assert!(renamed.contains("做《一拳超人》动画") && renamed.contains(RENAMED_NOTE));
        // The organizer's goal is not the person's word: the note stays.
        let by_turn = SpecPatch {
            goal: Some("另一个目标".into()),
            ..Default::default()
        };
        store
            .write(|tx| {
                tx.patch_plan(
                    p.id,
                    2,
                    &by_turn,
                    RevisionCause::Turn(troupe_core::RunId(1)),
                )
            })
            .unwrap();
        assert!(situation().contains(RENAMED_NOTE));
        let by_user = SpecPatch {
            goal: Some("做《一拳超人》动画短片".into()),
            ..Default::default()
        };
        store
            .write(|tx| tx.patch_plan(p.id, 3, &by_user, RevisionCause::User))
            .unwrap();
        assert!(!situation().contains(RENAMED_NOTE));
    }
}
