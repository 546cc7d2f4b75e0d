//! The Bot tools of the conversation layer (owner `collab`): `send_message` posts where the Bot
//! is a member and its turn goes on (MSG-1); `create_direct` opens or reuses the Bot↔Bot direct
//! whose every line wakes the other side (MEN-12); `ask_user` asks the person (ASK-1…5). They
//! work through the store alone: the lines they write are routed in the same transaction and
//! the threads those lines give work to are woken after commit.

use crate::asks::{AskArgs, post_ask};
use crate::routing::route_bot_line_in;
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::json;
use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use troupe_core::conversation::{Author, SessionKind, validate_line};
use troupe_core::mention::parse_mentions;
use troupe_core::thread::{Interaction, Thread};
use troupe_core::{BotId, RunId, SessionId, SessionMessageId};
use troupe_engine::extension::{ToolCallContext, ToolHandler, ToolRegistration, ToolReply};
use troupe_llm::ToolSpec;
use troupe_store::{NewLine, StoreError, Tx};

pub const OWNER: &str = "collab";

/// What the tools need of the conversation layer that is built after the engine they are
/// registered with: attach the [`crate::Collab`] once it exists.
#[derive(Default)]
pub struct ToolHost {
    pub(crate) collab: std::sync::OnceLock<crate::Collab>,
    /// Turns whose ask was already sent back once as a go-ahead (ASK-8).
    pub(crate) go_ahead_refused: Mutex<HashSet<RunId>>,
    /// The kinds of ending a segment has had sent back (each bounces once).
    bounced: Mutex<std::collections::HashMap<RunId, Vec<troupe_core::ending::BounceKind>>>,
    /// The hand-over's hooks, set when the engine is built.
    pub(crate) deliverables: std::sync::OnceLock<crate::submissions::Hooks>,
}

impl ToolHost {
    pub fn new() -> Arc<ToolHost> {
        Arc::new(ToolHost::default())
    }
    pub fn attach(&self, collab: &crate::Collab) {
        let _ = self.collab.set(collab.clone());
    }
    pub(crate) fn collab(&self) -> Option<crate::Collab> {
        self.collab.get().cloned()
    }
    pub(crate) fn bounced(&self, run: RunId) -> Vec<troupe_core::ending::BounceKind> {
        let map = self.bounced.lock().unwrap_or_else(|p| p.into_inner());
        map.get(&run).cloned().unwrap_or_default()
    }
    pub(crate) fn record_bounce(&self, run: RunId, kind: troupe_core::ending::BounceKind) {
        let mut map = self.bounced.lock().unwrap_or_else(|p| p.into_inner());
        map.entry(run).or_default().push(kind);
    }
    /// Where conversations' and jobs' folders live, once attached.
    pub(crate) fn workspaces(&self) -> Option<PathBuf> {
        self.collab.get().map(|c| c.workspaces.clone())
    }
}

/// A conversation's own thread (not a child task's, not an unattended worker's).
pub(crate) fn in_conversation(t: &Thread) -> bool {
    t.parent_id.is_none() && t.interaction == Interaction::Interactive
}

/// Whether a session workflow carries the thread: a loop (Light Loop, BlueprintLoop, Lattice,
/// Boss Mode…) whose claim, review and continuations come back to the thread itself. Plan is
/// not one: it changes neither the tools nor what they may do (PLN-3).
pub(crate) fn carried_by_workflow(t: &Thread) -> bool {
    t.workflow
        .as_ref()
        .is_some_and(|w| w.get("kind").and_then(|k| k.as_str()) != Some("plan"))
}

/// A conversation's thread no session workflow carries. Where one does, the tools that move
/// work to a job (`work_on`), belong to one (`submit`, `review`) or bring it back later
/// (`check_back`) are not offered: they would leave the loop behind or wake it twice.
pub(crate) fn outside_workflow(t: &Thread) -> bool {
    in_conversation(t) && !carried_by_workflow(t)
}

fn tool_error(e: StoreError) -> ToolReply {
    ToolReply::error(match e {
        StoreError::Invalid(m) | StoreError::Conflict(m) => m,
        other => format!("internal: {other}; nothing was posted"),
    })
}

/// Runs whose unknown `@name` was refused once already: the retry posts.
#[derive(Default)]
struct RefusedOnce(Mutex<HashSet<RunId>>);

struct SendMessage {
    refused: Arc<RefusedOnce>,
    host: Arc<ToolHost>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SendArgs {
    text: String,
    #[serde(default)]
    session_id: Option<i64>,
    #[serde(default)]
    parent_id: Option<i64>,
}

#[async_trait]
impl ToolHandler for SendMessage {
    async fn call(&self, ctx: &ToolCallContext, arguments: &str) -> ToolReply {
        let args: SendArgs = match serde_json::from_str(arguments) {
            Ok(a) => a,
            Err(e) => {
                return ToolReply::error(bad_arguments("send_message", &e, &send_message_spec()));
            }
        };
        if let Err(m) = validate_line(&args.text) {
            return ToolReply::error(format!("send_message: text: {m}"));
        }
        // CC-4: a message the closing check sends back is not posted; the call returns the note.
        let target = args.session_id.map(SessionId);
        if let Some(note) =
            crate::closing_check::at_send_message(&self.host, ctx, &args.text, target).await
        {
            return note;
        }
        let thread = ctx.thread.id;
        let run = ctx.run_id;
        let refused = self.refused.clone();
        // A job's thread works in its job's folder; Bots it brings in work in the conversation's.
        let workspace = PathBuf::from(
            ctx.thread
                .workspace_root
                .as_ref()
                .unwrap_or(&ctx.thread.workspace),
        );
        let out = ctx.store.write(|tx| {
            let Some((home, bot)) = tx.thread_session(thread)? else {
                return Err(StoreError::Invalid(
                    "not_a_member: this turn is not in a conversation".into(),
                ));
            };
            // A reply to a line with no conversation named answers where that line was said
            // (a "said to you" line elsewhere: WI-9).
            let replied_in = match (args.session_id, args.parent_id) {
                (None, Some(p)) => match tx.line(SessionMessageId(p)) {
                    Ok(l) => Some(l.session_id),
                    Err(StoreError::NotFound { .. }) => {
                        return Err(StoreError::Invalid(format!(
                            "parent_id: message {p} does not exist"
                        )));
                    }
                    Err(e) => return Err(e),
                },
                _ => None,
            };
            let target = args
                .session_id
                .map(SessionId)
                .or(replied_in)
                .unwrap_or(home);
            let session = match tx.session(target) {
                Ok(s) => s,
                Err(StoreError::NotFound { .. }) => {
                    return Err(StoreError::Invalid(format!(
                        "not_a_member: conversation {target} does not exist"
                    )));
                }
                Err(e) => return Err(e),
            };
            if !session.bot_ids.contains(&bot) || session.archived {
                return Err(StoreError::Invalid(format!(
                    "not_a_member: you are not a member of conversation {target}"
                )));
            }
            if let Some(p) = args.parent_id {
                let ok = tx
                    .line(SessionMessageId(p))
                    .map(|l| l.session_id == target)
                    .unwrap_or(false);
                if !ok {
                    return Err(StoreError::Invalid(format!(
                        "parent_id: message {p} is not in conversation {target}"
                    )));
                }
            }
            // A looping model posted the same words a dozen times: what this turn already said
            // here, among the conversation's newest lines, is not said again.
            if let Some(same) = tx
                .recent_lines(target, 10)?
                .into_iter()
                .rev()
                .find(|l| l.turn_id == Some(run) && l.body.trim() == args.text.trim())
            {
                return Err(StoreError::Invalid(format!(
                    "repeated_message: your line {} here already says exactly this, so it was \
                     not posted again. Say something new, or end your turn if there is nothing \
                     else to do now.",
                    same.id.0
                )));
            }
            // AC-12: words nobody's line asked for that the Bot already said here.
            if crate::repeated_replies::started_by_timer(tx, run)?
                && let Some(earlier) =
                    crate::repeated_replies::said_before(tx, run, thread, target, bot, &args.text)?
            {
                return Err(StoreError::Invalid(format!(
                    "repeated_message: your line {} here already said this, and nobody has \
                     asked since, so it was not posted again. Say only what is new, or end your \
                     turn if nothing is.",
                    earlier.0
                )));
            }
            let roster = crate::routing::roster(tx, &session)?;
            let mentions = parse_mentions(&args.text, &roster);
            let mut notice = None;
            if !mentions.unknown.is_empty() {
                let first_time = refused
                    .0
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(run);
                let names: Vec<&str> = roster.iter().map(|r| r.name.as_str()).collect();
                if first_time {
                    return Err(StoreError::Invalid(format!(
                        "unknown_mention: nobody is called {}; the Bots are: {}. Fix the name \
                         and send again (sent as is, the name reaches nobody).",
                        mentions
                            .unknown
                            .iter()
                            .map(|u| format!("@{u}"))
                            .collect::<Vec<_>>()
                            .join(", "),
                        names.join(", ")
                    )));
                }
                notice = Some(format!(
                    "@{} named nobody here, so it reached nobody.",
                    mentions.unknown.join(", @")
                ));
            }
            // MSG-2: three progress messages per segment; a reply to a line is exempt.
            if let Some(seg) = tx.segment_work(run)? {
                troupe_core::ending::progress_message(
                    seg.progress_messages as usize,
                    args.parent_id.is_some(),
                )
                .map_err(StoreError::Invalid)?;
                if args.parent_id.is_none() {
                    tx.bump_progress_messages(run)?;
                }
            }
            let line = tx.insert_line(&NewLine {
                bot_id: Some(bot),
                parent_id: args.parent_id.map(SessionMessageId),
                turn_id: Some(run),
                ..NewLine::plain(target, Author::Bot, args.text.clone())
            })?;
            crate::projection::file_bot_line(tx, thread, line.id)?;
            route_bot_line_in(tx, &line, &workspace)?;
            if let Some(n) = notice {
                crate::members::system_line(tx, target, n)?;
            }
            Ok(line.id)
        });
        match out {
            Ok(id) => ToolReply::ok(
                json!({"message_id": id, "posted": true, "note": "Posted; your turn goes on."})
                    .to_string(),
            ),
            Err(e) => tool_error(e),
        }
    }
}

struct CreateDirect;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DirectArgs {
    to: String,
    text: String,
}

#[async_trait]
impl ToolHandler for CreateDirect {
    async fn call(&self, ctx: &ToolCallContext, arguments: &str) -> ToolReply {
        let args: DirectArgs = match serde_json::from_str(arguments) {
            Ok(a) => a,
            Err(e) => {
                return ToolReply::error(bad_arguments("create_direct", &e, &create_direct_spec()));
            }
        };
        if let Err(m) = validate_line(&args.text) {
            return ToolReply::error(format!("create_direct: text: {m}"));
        }
        let thread = ctx.thread.id;
        let run = ctx.run_id;
        // A job's thread works in its job's folder; Bots it brings in work in the conversation's.
        let workspace = PathBuf::from(
            ctx.thread
                .workspace_root
                .as_ref()
                .unwrap_or(&ctx.thread.workspace),
        );
        let out = ctx.store.write(|tx| {
            let Some((origin, me)) = tx.thread_session(thread)? else {
                return Err(StoreError::Invalid(
                    "create_direct: this turn is not in a conversation".into(),
                ));
            };
            let wanted = args.to.trim().trim_start_matches('@');
            let bots = tx.bots(false)?;
            let to = bots
                .iter()
                .find(|b| b.name.eq_ignore_ascii_case(wanted))
                .or_else(|| {
                    wanted
                        .parse::<i64>()
                        .ok()
                        .and_then(|id| bots.iter().find(|b| b.id == BotId(id)))
                });
            let Some(to) = to.cloned() else {
                let names: Vec<&str> = bots.iter().map(|b| b.name.as_str()).collect();
                return Err(StoreError::Invalid(format!(
                    "create_direct: to: no live Bot is called {wanted:?}; the Bots are: {}",
                    names.join(", ")
                )));
            };
            if to.id == me {
                return Err(StoreError::Invalid(
                    "create_direct: to: that is you; name another Bot".into(),
                ));
            }
            let mine = tx.bot(me)?;
            let title = format!("{} ↔ {}", mine.name, to.name);
            let session = tx.open_bot_direct(me, to.id, Some(origin), "create_direct", &title)?;
            for b in [&mine, &to] {
                crate::threads::ensure_thread(tx, &workspace, &session, b, Some(&workspace))?;
            }
            let line = tx.insert_line(&NewLine {
                bot_id: Some(me),
                turn_id: Some(run),
                ..NewLine::plain(session.id, Author::Bot, args.text.clone())
            })?;
            route_bot_line_in(tx, &line, &workspace)?;
            Ok((session.id, line.id, to.name))
        });
        match out {
            Ok((session, line, name)) => ToolReply::ok(
                json!({"session_id": session, "message_id": line,
                       "note": format!("Sent to {name} in your direct with them; they are woken.")})
                .to_string(),
            ),
            Err(e) => tool_error(e),
        }
    }
}

struct AskUser {
    host: Arc<ToolHost>,
}

#[async_trait]
impl ToolHandler for AskUser {
    async fn call(&self, ctx: &ToolCallContext, arguments: &str) -> ToolReply {
        let args: AskArgs = match serde_json::from_str(arguments) {
            Ok(a) => a,
            Err(e) => return ToolReply::error(bad_arguments("ask_user", &e, &ask_user_spec())),
        };
        let ask = match args.into_ask() {
            Ok(a) => a,
            Err(m) => return ToolReply::error(format!("ask_user: {m}")),
        };
        let thread = ctx.thread.id;
        let run = ctx.run_id;
        let in_pair_direct = ctx
            .store
            .read(|tx| match tx.thread_session(thread)? {
                Some((s, _)) => Ok(tx.session(s)?.kind == SessionKind::BotDirect),
                None => Ok(false),
            })
            .unwrap_or(false);
        let sent_back = match in_pair_direct {
            true => None,
            false => self.host.go_ahead_sent_back(ctx, &ask.question).await,
        };
        if let Some(why) = sent_back {
            if let Ok(Some((session, _))) = ctx.store.read(|tx| tx.thread_session(thread)) {
                let question = ask.question.clone();
                let logged = ctx.store.write(|tx| {
                    tx.session_event(
                        "ask_go_ahead_refused",
                        session,
                        Some(run),
                        json!({"question": question}),
                    )
                });
                if let Err(e) = logged {
                    tracing::warn!(run = %run, error = %e, "could not log a go-ahead refusal");
                }
            }
            return ToolReply::error(format!("asks_go_ahead: not asked. {why}"));
        }
        let out = ctx.store.write(|tx| {
            let Some((session, bot)) = tx.thread_session(thread)? else {
                return Err(StoreError::Invalid(
                    "ask_user: this turn is not in a conversation".into(),
                ));
            };
            if tx.session(session)?.kind == SessionKind::BotDirect {
                return Err(StoreError::Invalid(
                    "no_person_here: this is a direct between two Bots; ask in the conversation \
                     the person is in"
                        .into(),
                ));
            }
            post_ask(tx, session, bot, run, thread, ask.clone())
        });
        match out {
            Ok(id) => ToolReply {
                content: json!({"message_id": id, "note": "The question is shown to the person. \
                    Your turn ends here; their answer comes to you as a message."})
                .to_string(),
                is_error: false,
                ends_turn: true,
                ends_run: None,
                outcome_unknown: false,
            },
            Err(e) => tool_error(e),
        }
    }
}

/// A tool that only means something beside another Bot is not offered without one (a small
/// model offered `delegate` alone in a direct asked a "reviewer" that does not exist, again and
/// again). Read at every model call, since Bots come and go.
trait OfferedWhen {
    fn offered_when(self, host: &Arc<ToolHost>, rule: fn(&Tx<'_>, &Thread) -> bool) -> Self;
}

impl OfferedWhen for ToolRegistration {
    fn offered_when(mut self, host: &Arc<ToolHost>, rule: fn(&Tx<'_>, &Thread) -> bool) -> Self {
        let host = Arc::downgrade(host);
        self.available = Arc::new(move |t: &Thread| {
            if !in_conversation(t) {
                return false;
            }
            let Some(collab) = host.upgrade().and_then(|h| h.collab()) else {
                return true;
            };
            // A failed read offers the tool: its handler checks again and says what is wrong.
            collab.store().read(|tx| Ok(rule(tx, t))).unwrap_or(true)
        });
        self
    }
}

/// `create_direct`: some live Bot other than this thread's, not counting the built-in demo
/// (`scripted` marks it).
fn another_bot_exists(tx: &Tx<'_>, t: &Thread) -> bool {
    let Ok(Some((_, me))) = tx.thread_session(t.id) else {
        return true;
    };
    tx.bots(false)
        .map_or(true, |bots| bots.iter().any(|b| b.id != me && !b.scripted))
}

/// `delegate`: another Bot in the conversation this thread speaks in (a job's Bots are the
/// ones present where it was opened, which is where its threads speak).
fn another_bot_is_here(tx: &Tx<'_>, t: &Thread) -> bool {
    let Ok(Some((session, me))) = tx.thread_session(t.id) else {
        return true;
    };
    tx.session(session)
        .map_or(true, |s| s.bot_ids.iter().any(|b| *b != me))
}

/// The tools, for [`troupe_engine::EngineBuilder::tool`]; attach the Collab to `host` once
/// it is built.
pub fn registrations(host: &Arc<ToolHost>) -> Vec<ToolRegistration> {
    let refused = Arc::new(RefusedOnce::default());
    let reg = |name: &str, description: &str, parameters, handler: Arc<dyn ToolHandler>| {
        ToolRegistration {
            owner: OWNER.into(),
            spec: ToolSpec {
                name: name.into(),
                description: description.into(),
                parameters,
            },
            effectful: false,
            read_only: false,
            available: Arc::new(in_conversation),
            // Every tool here but end_turn has an effect a hold refuses (HOLD-T1).
            handler: if name == "end_turn" {
                handler
            } else {
                Arc::new(crate::holds::Held {
                    tool: name.into(),
                    inner: handler,
                })
            },
        }
    };
    vec![
        reg(
            "send_message",
            "Post a message in a conversation you are a member of (default: this one). Name a \
             Bot with @Name to wake it; your turn goes on after posting.",
            send_message_spec(),
            Arc::new(SendMessage {
                refused,
                host: host.clone(),
            }),
        ),
        reg(
            "create_direct",
            "Open (or reuse) your direct conversation with another Bot and send it a message; \
             every message there wakes the other side.",
            create_direct_spec(),
            Arc::new(CreateDirect),
        )
        .offered_when(host, another_bot_exists),
        reg(
            "ask_user",
            "Ask the person something only they can decide or give (an account, a permission, \
             private knowledge, a choice that is theirs). Not for asking whether to go on. Put \
             the option you recommend first. Your turn ends; the answer arrives as a message.",
            ask_user_spec(),
            Arc::new(AskUser { host: host.clone() }),
        ),
        {
            let mut r = reg(
                "work_on",
                "Choose which job the line that woke you belongs to, before doing anything with \
                 an effect: one of the jobs listed for your desk, or a new one. Your work then \
                 goes on in that job's own turn, in its folder. Working on a whole job, \
                 {\"ticket\": NN} moves you to one of its tickets, in that ticket's folder.",
                crate::desk::work_on_spec(),
                Arc::new(crate::desk::WorkOn { host: host.clone() }),
            );
            r.available = Arc::new(outside_workflow);
            r
        },
        reg(
            "delegate",
            "Ask another Bot on this job for a deliverable, a review or an answer. Unless you \
             set continue, your turn ends and you are woken with its answer.",
            crate::delegation::delegate_spec(),
            Arc::new(crate::delegation::Delegate { host: host.clone() }),
        )
        .offered_when(host, another_bot_is_here),
        reg(
            "plan_items",
            "Lead only: lay out this job's tickets in one call — new ones and changes to \
             existing ones (by number), who makes (owner) and reviews each, what each waits \
             for, its parts and, in a large job, the one sample made first — and drop tickets \
             with a reason. Refused whole on any fault.",
            crate::tickets::layout::spec(),
            Arc::new(crate::tickets::layout::PlanItems),
        ),
        reg(
            "remember",
            "Keep a short note for yourself, read in every conversation and job you work in: \
             a way of working you mean to hold to (not what happened). The same subject \
             rewrites that memory; at most 20 are on.",
            crate::memories::remember_spec(),
            Arc::new(crate::memories::Remember),
        ),
        reg(
            "forget",
            "Drop one of your memories that is wrong or no longer holds, by its subject.",
            crate::memories::forget_spec(),
            Arc::new(crate::memories::Forget),
        ),
        reg(
            "write_skill",
            "Save lasting instructions for how you do a kind of work (a skill), to read again \
             in later jobs. Not for the work itself: your answer goes in your reply or files. \
             The same name rewrites the skill; a new one needs a description.",
            crate::skills::write_skill_spec(),
            Arc::new(crate::skills::WriteSkill),
        ),
        reg(
            "delete_skill",
            "Delete one of your own skills that is wrong or no longer used, by its name.",
            crate::skills::delete_skill_spec(),
            Arc::new(crate::skills::DeleteSkill),
        ),
        {
            // Reads only, so a hold leaves it offered (HOLD-T2) and the kernel may run it early.
            let mut r = reg(
                "read_skill",
                "Read a skill from your catalog, whole, before the work it is for: yours, or \
                 a project skill shared with every Bot.",
                crate::skills::read_skill_spec(),
                Arc::new(crate::skills::ReadSkill),
            );
            r.read_only = true;
            r.handler = Arc::new(crate::skills::ReadSkill);
            r
        },
        reg(
            "set_routine",
            "Make a routine: work you do again on a schedule, speaking in this conversation \
             (each run is a ticket of its own job, approved once its checks pass) — or change \
             or pause one of yours by its name. Only when the person asked for recurring work.",
            crate::routines::tools::set_spec(),
            Arc::new(crate::routines::tools::SetRoutine { host: host.clone() }),
        ),
        reg(
            "delete_routine",
            "Delete one of your routines by its name: no more runs; its job keeps its tickets.",
            crate::routines::tools::delete_spec(),
            Arc::new(crate::routines::tools::DeleteRoutine),
        ),
        {
            // Reads only, so a hold leaves it offered (HOLD-T2).
            let mut r = reg(
                "list_routines",
                "List your routines: name, schedule, next run, runs so far, what each does.",
                crate::routines::tools::list_spec(),
                Arc::new(crate::routines::tools::ListRoutines),
            );
            r.read_only = true;
            r.handler = Arc::new(crate::routines::tools::ListRoutines);
            r
        },
        reg(
            "end_turn",
            "End your turn, saying why. Answer a request another Bot made of you with reason \
             answered and the answer in `answer`; give each message you read (#id) a \
             disposition in `inbox`.",
            crate::ending::end_turn_spec(),
            Arc::new(crate::ending::EndTurn { host: host.clone() }),
        ),
        {
            let mut cb = crate::check_backs::registration();
            cb.handler = Arc::new(crate::holds::Held {
                tool: cb.spec.name.clone(),
                inner: cb.handler,
            });
            cb
        },
    ]
}

pub(crate) fn send_message_spec() -> serde_json::Value {
    json!({
        "type": "object",
        "properties": {
            "text": {"type": "string", "description": "The message. @Name wakes that Bot; @everyone wakes every Bot here."},
            "session_id": {"type": "integer", "description": "Another conversation you are a member of."},
            "parent_id": {"type": "integer", "description": "The message this one answers; without session_id the answer goes where that message was said."}
        },
        "required": ["text"],
        "additionalProperties": false
    })
}

pub(crate) fn create_direct_spec() -> serde_json::Value {
    json!({
        "type": "object",
        "properties": {
            "to": {"type": "string", "description": "The other Bot's name."},
            "text": {"type": "string", "description": "The first message."}
        },
        "required": ["to", "text"],
        "additionalProperties": false
    })
}

pub(crate) fn ask_user_spec() -> serde_json::Value {
    json!({
        "type": "object",
        "properties": {
            "question": {"type": "string"},
            "options": {
                "type": "array", "maxItems": 8,
                "items": {
                    "type": "object",
                    "properties": {
                        "label": {"type": "string"},
                        "description": {"type": "string"}
                    },
                    "required": ["label"],
                    "additionalProperties": false
                }
            },
            "multiple": {"type": "boolean", "description": "Several options may be picked."}
        },
        "required": ["question"],
        "additionalProperties": false
    })
}

/// A tool's refusal of arguments it cannot read, with the shape they take: a model that has a
/// field wrong (`{"title":…}` for `{"new":{"title":…}}`) learns the shape where it looks.
pub(crate) fn bad_arguments(tool: &str, e: &serde_json::Error, spec: &serde_json::Value) -> String {
    let text = e.to_string();
    // serde's position in the arguments' text says nothing to the model.
    let text = text.rfind(" at line ").map_or(&text[..], |i| &text[..i]);
    format!(
        "{tool}: bad arguments: {text}; {}",
        troupe_tools::shape(tool, spec)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_of_the_wrong_shape_are_refused_with_the_shape_they_take() {
        let e = serde_json::from_str::<crate::desk::WorkOnArgs>("{\n \"title\": \"x\"}")
            .err()
            .expect("a field at the wrong level is refused");
        let text = bad_arguments("work_on", &e, &crate::desk::work_on_spec());
        assert!(
            text.starts_with("work_on: bad arguments: unknown field `title`"),
            "{text}"
        );
        assert!(!text.contains("at line"), "{text}");
        assert!(
            text.contains("work_on takes {") && text.contains("\"new\"?: {\"title\": string}"),
            "{text}"
        );
    }
}
