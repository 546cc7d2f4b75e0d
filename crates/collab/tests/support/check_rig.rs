//! What the checks tests share (`checks.rs`, `checks_words.rs`): a group with one Bot and a
//! job opened in it on a manual clock, a checks runner over the world's store with a
//! `MediaProbe` double, and the lines, deliveries, tickets and hand-ins a check reads.

use super::*;
use async_trait::async_trait;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use troupe_collab::checks::{Checks, MediaProbe, NewCheckRequest};
use troupe_core::conversation::Author;
use troupe_core::submission::SubmissionOrigin;
use troupe_core::words_check::probe::MediaFacts;
use troupe_core::{CheckId, ManualClock, PlanId, SessionId, SubmissionId};
use troupe_store::{
    FilingSource, Layout, LayoutItem, NewFiling, NewLine, NewSubmission, SubmittedFile,
};

pub const QUIET: &str = r#"{"steps":[{"text":"ok"}],"on_exhausted":"repeat_last"}"#;
pub const T0: i64 = 1_800_000_000_000;

/// Videos by file name, as a probe double.
#[derive(Default)]
pub struct Videos(Mutex<HashMap<String, MediaFacts>>);

impl Videos {
    pub fn put(&self, name: &str, facts: MediaFacts) {
        self.0.lock().unwrap().insert(name.into(), facts);
    }
}

#[async_trait]
impl MediaProbe for Videos {
    async fn probe(&self, file: &Path) -> Result<MediaFacts, String> {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        self.0
            .lock()
            .unwrap()
            .get(&name)
            .cloned()
            .ok_or_else(|| format!("{name} is not a video"))
    }
}

pub struct Rig {
    pub w: World,
    pub clock: ManualClock,
    pub checks: Checks,
    pub videos: Arc<Videos>,
    pub session: SessionId,
    pub plan: PlanId,
    /// The job's home workspace, the root check paths are relative to.
    pub ws: PathBuf,
    pub folder: PathBuf,
    pub bot: troupe_core::BotId,
}

pub fn rig(opening: &str) -> Rig {
    let clock = ManualClock::new(T0);
    let w = world_on(Arc::new(clock.clone()));
    let bot = bot(&w, "Maker", QUIET);
    let session = group(&w, &[bot]);
    let plan = open_job(&w, session, opening);
    let folder = PathBuf::from(&plan.folder);
    let ws = folder.parent().unwrap().parent().unwrap().to_path_buf();
    let videos = Arc::new(Videos::default());
    let checks = Checks::new(w.collab.store().clone(), videos.clone());
    Rig {
        clock,
        checks,
        videos,
        session,
        plan: plan.id,
        ws,
        folder,
        bot,
        w,
    }
}

pub fn command(cmd: &str) -> NewCheckRequest {
    NewCheckRequest {
        kind: "command".into(),
        command: Some(cmd.into()),
        ..NewCheckRequest::default()
    }
}

impl Rig {
    pub fn save(&self, r: &NewCheckRequest) -> CheckId {
        self.checks.create(self.plan, r).unwrap().id
    }

    pub async fn run(&self, id: CheckId) -> troupe_store::CheckRunRecord {
        self.checks.run_check(id, None).await.unwrap()
    }

    pub fn check(&self, id: CheckId) -> troupe_store::CheckRecord {
        self.w.collab.store().read(|tx| tx.check(id)).unwrap()
    }

    pub fn events(&self, kind: &str) -> Vec<serde_json::Value> {
        self.w
            .collab
            .store()
            .read(|tx| tx.events_after(troupe_core::EventId(0), None, 100_000))
            .unwrap()
            .into_iter()
            .filter(|e| e.kind == kind)
            .map(|e| e.payload)
            .collect()
    }

    /// A person's line filed under the job, as the reader or a quote files it.
    pub fn user_says(&self, words: &str) -> troupe_core::SessionMessageId {
        self.clock.advance(1_000);
        self.w
            .collab
            .store()
            .write(|tx| {
                let l =
                    tx.insert_line(&NewLine::plain(self.session, Author::User, words.into()))?;
                tx.file_line(&filing(l.id, self.plan))?;
                Ok(l.id)
            })
            .unwrap()
    }

    /// A Bot's line delivering `rel` (relative to the job folder), filed under the job.
    pub fn bot_delivers(&self, rel: &str) {
        self.clock.advance(1_000);
        let file = self.folder.join(rel);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, b"not really a video").unwrap();
        self.w
            .collab
            .store()
            .write(|tx| {
                let l = tx.insert_line(&NewLine {
                    bot_id: Some(self.bot),
                    ..NewLine::plain(self.session, Author::Bot, format!("Here: {rel}"))
                })?;
                tx.file_line(&filing(l.id, self.plan))?;
                tx.record_line_files(l.id, &[(rel.to_string(), None)])?;
                Ok(())
            })
            .unwrap();
    }

    pub fn ticket(&self) -> troupe_store::TicketRecord {
        let name = self
            .w
            .collab
            .store()
            .read(|tx| tx.plan(self.plan))
            .unwrap()
            .name;
        let folder = self.folder.clone();
        self.w
            .collab
            .store()
            .write(|tx| {
                tx.lay_out(
                    self.plan,
                    &Layout {
                        items: vec![LayoutItem {
                            title: name.clone(),
                            owner_bot_id: Some(self.bot),
                            ..LayoutItem::default()
                        }],
                        drops: vec![],
                    },
                    |n, t| folder.join(format!("{n:02}-{t}")).display().to_string(),
                )
            })
            .unwrap()
            .tickets
            .remove(0)
    }

    pub fn submit(&self, ticket: &troupe_store::TicketRecord, rel: &str) -> SubmissionId {
        self.clock.advance(1_000);
        self.w
            .collab
            .store()
            .write(|tx| {
                tx.create_submission(&NewSubmission {
                    ticket_id: ticket.id,
                    origin: SubmissionOrigin::Explicit,
                    producer_bot_id: Some(self.bot),
                    run_id: None,
                    work_item_id: None,
                    content: None,
                    note: String::new(),
                    claims: vec![],
                    files: vec![SubmittedFile {
                        path: rel.into(),
                        sha256: "a".repeat(64),
                        size: 18,
                    }],
                    parts: vec![],
                })
            })
            .unwrap()
            .id
    }
}

pub fn filing(line: troupe_core::SessionMessageId, plan: PlanId) -> NewFiling {
    NewFiling {
        message_id: line,
        plan_id: plan,
        ticket_id: None,
        part_id: None,
        source: FilingSource::Reader,
        filed_by: "test".into(),
        locked: false,
        primary: true,
    }
}
