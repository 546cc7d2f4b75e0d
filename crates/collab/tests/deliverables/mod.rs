//! What the hand-over and review scenarios share: a group with a Maker (and a Checker on
//! another model, or a Lead), a job opened in it with tickets laid out through the store, and
//! waits and reads on its hand-overs.
#![allow(dead_code)]

use super::support::*;
use std::sync::Arc;
use troupe_collab::submissions::handover::{HandOver, Refusal, record};
use troupe_collab::submissions::{Hooks, SubmissionPass};
use troupe_collab::{Collab, NewBotRequest, SharedRoles};
use troupe_core::submission::SubmissionOrigin;
use troupe_core::thread::EndpointSpec;
use troupe_core::ticket::AppPass;
use troupe_core::ticket::ticket_folder_name;
use troupe_core::work_item::WorkState;
use troupe_core::{BotId, PlanId, SessionId, TicketId};
use troupe_engine::{Engine, RoleTable};
use troupe_store::{
    Layout, LayoutItem, Store, SubmissionRecord, SubmittedFile, TicketRecord, ToolCallRecord,
};

/// The Maker's first effect on "make the poster", at its desk and again in its job.
pub const WRITE_POSTER: &str =
    r#"{"name":"write_file","arguments":{"path":"01-Poster/poster.png","content":"poster v1"}}"#;
/// A step handing the poster over.
pub const SUBMIT_POSTER: &str =
    r#"{"tool_calls":[{"name":"submit","arguments":{"artifacts":["01-Poster/poster.png"]}}]}"#;
/// A step answering the person in words.
pub const TEXT_DONE: &str = r#"{"text":"Here is the poster."}"#;
/// A harmless first effect.
pub const ECHO: &str = r#"{"name":"shell","arguments":{"command":"echo working"}}"#;

/// The Maker's script: the rule writes the poster, then `steps` from step 1 on.
pub fn maker(steps: &[&str]) -> String {
    let mut all = vec![r#"{"text":"unused"}"#];
    all.extend_from_slice(steps);
    format!(
        r#"{{"steps":[{}],"rules":[{{"when_user_contains":"make the poster","reply":{{"tool_calls":[{WRITE_POSTER}]}}}}]}}"#,
        all.join(",")
    )
}

/// A world built as `troupe serve` builds it, with the hand-over's `hooks`.
pub fn world_with(hooks: Hooks) -> World {
    let dir = tempfile::tempdir().unwrap();
    let store = troupe_store::testing::open_in(dir.path(), Arc::new(troupe_core::SystemClock));
    let secrets: troupe_engine::models::SecretSource = Arc::new(|_| None);
    let roles = Arc::new(SharedRoles::new(RoleTable::new(secrets.clone()), secrets));
    let host = troupe_collab::tools::ToolHost::new();
    let builder =
        troupe_collab::extend_with(Engine::builder(store, roles.clone()), &host, hooks).unwrap();
    let collab = Collab::new(builder.build(), roles, dir.path().join("workspaces"));
    host.attach(&collab);
    World { collab, dir }
}

/// A scripted Bot whose endpoint names `model` (the same-model rule reads it).
pub fn bot_on(w: &World, name: &str, model: &str, json: &str) -> BotId {
    let mut endpoint: EndpointSpec = script(w, &name.to_lowercase(), json);
    endpoint.model = model.into();
    w.collab
        .create_bot(NewBotRequest {
            name: name.into(),
            persona: None,
            endpoint: Some(endpoint),
        })
        .unwrap()
        .id
}

pub struct Team {
    pub w: World,
    pub s: SessionId,
    pub plan: PlanId,
    pub folder: String,
    pub maker: BotId,
    pub checker: Option<BotId>,
    pub lead: Option<BotId>,
    pub tickets: Vec<TicketId>,
}

/// A ticket to lay out: title, owner and reviewer by the team's index (0 Maker, 1 Checker).
pub type Item<'a> = (&'a str, Option<usize>, Option<usize>);

impl Team {
    /// Maker and (with a script) a Checker on another model.
    pub fn new(maker: &str, checker: Option<&str>, items: &[Item<'_>]) -> Team {
        Team::build(
            Hooks::default(),
            maker,
            checker.map(|c| ("checker-model", c)),
            items,
        )
    }

    /// A Lead that asks the Maker for the poster as a deliverable, and the Maker.
    pub fn with_lead(maker_script: &str, items: &[Item<'_>]) -> Team {
        Team::with_lead_script(
            maker_script,
            r#"{"steps":[{"text":"Thanks, the poster is in."}],
            "rules":[{"when_user_contains":"need a poster","reply":{"tool_calls":[{"name":"delegate","arguments":{"to":"Maker","ask":"make the poster for the launch","expects":"deliverable"}}]}}]}"#,
            None,
            items,
        )
    }

    /// The Maker, a Lead on its own script (index 2 in `items`) and, with a script, a Checker.
    pub fn with_lead_script(
        maker_script: &str,
        lead_script: &str,
        checker: Option<&str>,
        items: &[Item<'_>],
    ) -> Team {
        let w = world();
        let maker = bot_on(&w, "Maker", "maker-model", maker_script);
        let lead = bot_on(&w, "Lead", "lead-model", lead_script);
        let checker = checker.map(|c| bot_on(&w, "Checker", "checker-model", c));
        let mut t = Team::around(w, maker, checker, Some(lead), items);
        t.lead = Some(lead);
        t
    }

    pub fn build(
        hooks: Hooks,
        maker_script: &str,
        checker: Option<(&str, &str)>,
        items: &[Item<'_>],
    ) -> Team {
        let w = world_with(hooks);
        let maker = bot_on(&w, "Maker", "maker-model", maker_script);
        let checker = checker.map(|(model, script)| bot_on(&w, "Checker", model, script));
        Team::around(w, maker, checker, None, items)
    }

    fn around(
        w: World,
        maker: BotId,
        checker: Option<BotId>,
        lead: Option<BotId>,
        items: &[Item<'_>],
    ) -> Team {
        let mut bots = vec![maker];
        bots.extend(checker);
        bots.extend(lead);
        let s = group(&w, &bots);
        let plan = open_job(&w, s, "the launch poster");
        let folder = plan.folder.clone();
        let who = |i: Option<usize>| {
            i.map(|i| match i {
                0 => maker,
                1 => checker.expect("a Checker"),
                _ => lead.expect("a Lead"),
            })
        };
        let layout = Layout {
            items: items
                .iter()
                .map(|(title, owner, reviewer)| LayoutItem {
                    title: title.to_string(),
                    owner_bot_id: who(*owner),
                    reviewer_bot_id: who(*reviewer),
                    ..LayoutItem::default()
                })
                .collect(),
            drops: Vec::new(),
        };
        let laid = w
            .collab
            .store()
            .write(|tx| {
                tx.lay_out(plan.id, &layout, |n, title| {
                    format!("{folder}/{}", ticket_folder_name(n as u32, title))
                })
            })
            .unwrap();
        for t in &laid.tickets {
            std::fs::create_dir_all(&t.folder).unwrap();
        }
        Team {
            plan: plan.id,
            folder,
            tickets: laid.tickets.iter().map(|t| t.id).collect(),
            w,
            s,
            maker,
            checker,
            lead,
        }
    }

    pub fn store(&self) -> &Store {
        self.w.collab.store()
    }

    pub async fn ask(&self, words: &str) {
        self.w
            .collab
            .post_line(self.s, words.into(), None)
            .await
            .unwrap();
    }

    pub fn subs(&self) -> Vec<SubmissionRecord> {
        self.store()
            .read(|tx| tx.submissions_of_plan(self.plan, None))
            .unwrap()
    }

    pub fn ticket(&self, i: usize) -> TicketRecord {
        self.store().read(|tx| tx.ticket(self.tickets[i])).unwrap()
    }

    /// Wait until the job's hand-overs (newest first) meet `done`.
    pub async fn wait_for(
        &self,
        what: &str,
        mut done: impl FnMut(&[SubmissionRecord]) -> bool,
    ) -> Vec<SubmissionRecord> {
        let mut events = self.store().subscribe();
        until(&mut events, what, || done(&self.subs())).await;
        self.subs()
    }

    fn quiet(&self, bot: BotId, runs: usize) -> bool {
        job(&self.w, bot).is_some_and(|j| {
            live_run(&self.w, &j).is_none()
                && !matches!(j.state, WorkState::Queued | WorkState::Running)
                && ends(&self.w, j.thread_id).len() >= runs
        })
    }

    /// Wait until the Bot's work on the job has ended `runs` runs and nothing more is queued.
    pub async fn wait_until_runs(&self, bot: BotId, runs: usize) {
        let mut events = self.store().subscribe();
        until(&mut events, "the Bot's work ended", || {
            self.quiet(bot, runs)
        })
        .await;
    }

    pub async fn wait_until_ended(&self, bot: BotId) {
        self.wait_until_runs(bot, 1).await;
    }

    pub async fn wait_until_maker_ended(&self) {
        self.wait_until_ended(self.maker).await;
    }

    pub fn maker_runs(&self) -> usize {
        job(&self.w, self.maker).map_or(0, |j| ends(&self.w, j.thread_id).len())
    }

    /// The Bot's tool calls named `name` on the job, in order.
    pub fn calls(&self, bot: BotId, name: &str) -> Vec<ToolCallRecord> {
        let Some(j) = job(&self.w, bot) else {
            return Vec::new();
        };
        runs_of(&self.w, j.thread_id)
            .iter()
            .flat_map(|r| calls_of(&self.w, r.id))
            .filter(|c| c.name == name)
            .collect()
    }

    pub fn maker_calls(&self, name: &str) -> Vec<ToolCallRecord> {
        self.calls(self.maker, name)
    }

    /// What the Maker's job was told by the ending hook `hook`.
    pub fn bounces_of_maker(&self, hook: &str) -> Vec<String> {
        let j = job(&self.w, self.maker).unwrap();
        self.store()
            .read(|tx| tx.messages(j.thread_id, None, u32::MAX))
            .unwrap()
            .into_iter()
            .filter(|m| {
                m.origin == troupe_core::message::Origin::System(format!("ending_hook:{hook}"))
            })
            .map(|m| m.text())
            .collect()
    }

    /// Every stored event's kind, in order.
    pub fn kinds(&self) -> Vec<String> {
        self.store()
            .read(|tx| tx.events_after(troupe_core::EventId(0), None, 100_000))
            .unwrap()
            .into_iter()
            .map(|e| e.kind)
            .collect()
    }
}

/// One file as a hand-over lists it: `path` (relative to the job folder) with a made-up hash.
pub fn file(path: &str, n: usize) -> SubmittedFile {
    SubmittedFile {
        path: path.into(),
        sha256: format!("{n:064x}"),
        size: 10,
    }
}

/// The Maker hands ticket `i` over with `files` (naming `parts`) the way `submit` records it,
/// then the approval pass settles it through `hooks`. Answers the hand-over as it stands after,
/// or why it was refused.
pub async fn hand_over_files(
    t: &Team,
    hooks: Hooks,
    i: usize,
    files: Vec<SubmittedFile>,
    parts: Vec<troupe_core::PartId>,
) -> Result<SubmissionRecord, Refusal> {
    let h = HandOver {
        ticket: t.tickets[i],
        origin: SubmissionOrigin::Explicit,
        producer: t.maker,
        run: None,
        work_item: None,
        files,
        content: None,
        parts,
        note: String::new(),
        claims: Vec::new(),
        post_in: None,
    };
    let sub = t.store().write(|tx| record(tx, &hooks, &h)).unwrap()?;
    SubmissionPass::new(hooks)
        .run(t.store(), sub.id, AppPass::Checks)
        .await
        .unwrap();
    Ok(t.store().read(|tx| tx.submission(sub.id)).unwrap())
}
