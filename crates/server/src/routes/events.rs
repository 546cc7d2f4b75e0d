//! Live events over Server-Sent Events: one conversation's, or (without `session_id`) the
//! global stream of events that belong to no conversation and no thread — a hold's
//! `hold_upsert`, the work log of holds, a homeless job's `plan_changed`.
//!
//! The stream is the event log read in order: first what is stored after the client's last
//! event id (`Last-Event-ID`, or `?after=`), then what commits from then on. Stored events
//! carry their id, so a client that drops the connection resumes exactly where it left off.
//! Text streaming in from a model (`delta`) and tool or command starts are live only: they carry
//! no id and a client that misses them loses nothing, since the finished message is stored.
//!
//! How nothing is lost or repeated: the broadcast is subscribed to before the backlog is read,
//! and the backlog read also notes the highest committed id (the horizon). Every event above
//! the horizon then arrives on the broadcast. Commits are serialized, so ids commit in order;
//! if one is heard before a lower one (publishing happens after the lock is released, so two
//! writers can publish out of order), or the broadcast lags, the stream re-reads the store
//! after the last id it sent, up to the new horizon.

use crate::AppState;
use crate::error::{ApiError, ErrorBody};
use axum::extract::{Query, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use serde::Deserialize;
use serde_json::json;
use std::collections::HashSet;
use std::convert::Infallible;
use std::time::Duration;
use tokio::sync::{broadcast, mpsc};
use troupe_core::{EventId, SessionId, ThreadId};
use troupe_engine::StreamNotice;
use troupe_store::{Event, Store};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// Catch-ups forced by a lagging broadcast receiver since the process started (the load bench
/// reports it: a lagged client reads the store by id and loses nothing).
static LAGGED_CATCH_UPS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How many times an event stream fell behind the broadcast and read the store to catch up.
pub fn lagged_catch_ups() -> u64 {
    LAGGED_CATCH_UPS.load(std::sync::atomic::Ordering::Relaxed)
}

/// Backlog pages read from the store at a time.
const PAGE: u32 = 500;
/// Events buffered per client before the pump waits for the client to read.
const CLIENT_BUFFER: usize = 256;
pub const KEEP_ALIVE: Duration = Duration::from_secs(15);

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(session_events))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct EventsQuery {
    /// The conversation (`ses_N` or `N`); without it, the global stream.
    #[param(value_type = Option<String>)]
    session_id: Option<String>,
    /// Resume after this event id; the `Last-Event-ID` header wins when both are given.
    #[param(value_type = Option<String>)]
    after: Option<String>,
}

/// A conversation's events, or the global ones, as Server-Sent Events.
///
/// Each stored event is sent as `id: <event id>`, `event: <kind>`, `data: <the event as JSON>`
/// (`session_message`, `run_started`, `run_ended`, `command_finished`, `hold_upsert`, …). Live
/// notices have no id: `delta` (`{"session_id", "turn_id", "text"}`), `tool_started`,
/// `tool_writing` (a call's arguments still streaming: `chars` so far, at most once a second)
/// and `command_started`. Without `session_id` the stream carries only the events of no
/// conversation and no thread (`hold_upsert`, `control_hold`, `hold_lifted`, …) and no notices.
/// A comment is sent every 15 s to keep the connection open.
#[utoipa::path(
    get,
    path = "/v1/events",
    tag = "events",
    params(
        EventsQuery,
        ("Last-Event-ID" = Option<String>, Header, description = "Resume after this event id"),
    ),
    responses(
        (status = 200, description = "The event stream", content_type = "text/event-stream", body = String),
        (status = 404, description = "No such conversation", body = ErrorBody),
        (status = 422, description = "Malformed session_id or event id", body = ErrorBody),
    )
)]
pub async fn session_events(
    State(state): State<AppState>,
    headers: HeaderMap,
    query: Result<Query<EventsQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Sse<impl futures::Stream<Item = Result<SseEvent, Infallible>>>, ApiError> {
    let Query(query) = query.map_err(|e| ApiError::invalid(e.body_text()))?;
    let session = match query.session_id.as_deref().map(str::trim) {
        None => None,
        Some("") => {
            return Err(ApiError::invalid(
                "session_id: empty (leave it out for the global stream)",
            ));
        }
        Some(s) => Some(
            s.parse::<SessionId>()
                .map_err(|m| ApiError::invalid(format!("session_id: {m}")))?,
        ),
    };
    let header = headers
        .get("last-event-id")
        .map(|v| v.to_str().unwrap_or("\u{0}").trim());
    let after = match header.or(query.after.as_deref().map(str::trim)) {
        None | Some("") => EventId(0),
        Some(s) => s
            .parse::<EventId>()
            .map_err(|m| ApiError::invalid(format!("last event id: {m}")))?,
    };
    let store = state.collab.store().clone();
    // Subscribed before anything is read, so nothing committed from here on is missed.
    let events = store.subscribe();
    let notices = state.collab.engine().subscribe_stream();
    let members = match session {
        None => Vec::new(),
        Some(session) => match store.read(|tx| {
            tx.session(session)?;
            tx.threads_heard_in(session)
        }) {
            Ok(m) => m,
            Err(troupe_store::StoreError::NotFound { .. }) => {
                return Err(ApiError::not_found(format!("session {session} not found")));
            }
            Err(e) => return Err(troupe_collab::CollabError::from(e).into()),
        },
    };
    let (out, rx) = mpsc::channel(CLIENT_BUFFER);
    let pump = Pump {
        store,
        session,
        last_sent: after,
        horizon: after,
        members: members.into_iter().collect(),
        outsiders: HashSet::new(),
        out,
    };
    tokio::spawn(pump.run(events, notices, state.shutdown.clone()));
    let stream =
        futures::stream::unfold(
            rx,
            |mut rx| async move { rx.recv().await.map(|e| (Ok(e), rx)) },
        );
    Ok(Sse::new(stream).keep_alive(KeepAlive::new().interval(KEEP_ALIVE)))
}

/// Why the pump stopped early.
enum Stop {
    /// The client went away.
    Gone,
    /// The store failed; the client reconnects and resumes.
    Store,
}

/// Feeds one client: the backlog, then live events, in id order, each once.
struct Pump {
    store: Store,
    /// The conversation; `None` is the global stream (events of no conversation, no thread).
    session: Option<SessionId>,
    /// The last stored event sent to the client.
    last_sent: EventId,
    /// Every event with an id up to here has been considered (sent or not this session's).
    horizon: EventId,
    members: HashSet<ThreadId>,
    /// Threads found not to be this conversation's.
    outsiders: HashSet<ThreadId>,
    out: mpsc::Sender<SseEvent>,
}

impl Pump {
    async fn run(
        mut self,
        mut events: broadcast::Receiver<Event>,
        mut notices: broadcast::Receiver<StreamNotice>,
        shutdown: tokio_util::sync::CancellationToken,
    ) {
        if self.catch_up().await.is_err() {
            return;
        }
        let mut notices_open = true;
        loop {
            // Notices first: a delta is broadcast before the message it becomes is stored, so
            // draining notices first keeps a reply's deltas ahead of its stored line.
            let step = tokio::select! {
                biased;
                () = self.out.closed() => Err(Stop::Gone),
                () = shutdown.cancelled() => Err(Stop::Gone),
                n = notices.recv(), if notices_open => match n {
                    Ok(n) => self.on_notice(n).await,
                    // Live notices are a courtesy: missing some loses nothing.
                    Err(broadcast::error::RecvError::Lagged(_)) => Ok(()),
                    Err(broadcast::error::RecvError::Closed) => {
                        notices_open = false;
                        Ok(())
                    }
                },
                e = events.recv() => match e {
                    Ok(e) => self.on_event(e).await,
                    Err(broadcast::error::RecvError::Lagged(n)) => {
                        LAGGED_CATCH_UPS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        tracing::debug!(session = ?self.session, missed = n, "event stream lagged; reading the store");
                        self.catch_up().await
                    }
                    Err(broadcast::error::RecvError::Closed) => Err(Stop::Gone),
                },
            };
            if let Err(stop) = step {
                if matches!(stop, Stop::Store) {
                    tracing::warn!(session = ?self.session, "event stream ended: the store failed");
                }
                return;
            }
        }
    }

    /// Send what is stored after `last_sent`, page by page, and move the horizon to the last
    /// committed id seen in the final page's snapshot. The global stream reads every event
    /// from its horizon on (what is below it was considered already) and keeps its own.
    async fn catch_up(&mut self) -> Result<(), Stop> {
        let mut cursor = match self.session {
            Some(_) => self.last_sent,
            None => self.last_sent.max(self.horizon),
        };
        loop {
            let (page, last, threads) = self
                .store
                .read(|tx| {
                    Ok(match self.session {
                        Some(s) => (
                            tx.session_events_after(cursor, s, PAGE)?,
                            tx.last_event_id()?,
                            tx.session_threads(s)?,
                        ),
                        None => (
                            tx.events_after(cursor, None, PAGE)?,
                            tx.last_event_id()?,
                            Vec::new(),
                        ),
                    })
                })
                .map_err(|e| {
                    tracing::warn!(session = ?self.session, error = %e, "reading events failed");
                    Stop::Store
                })?;
            self.members.extend(threads);
            let full = page.len() as u32 >= PAGE;
            for e in page {
                cursor = cursor.max(e.id);
                if self.session.is_some() || is_global(&e) {
                    self.send(&e).await?;
                }
            }
            if !full {
                self.horizon = self.horizon.max(last).max(cursor);
                return Ok(());
            }
        }
    }

    async fn on_event(&mut self, e: Event) -> Result<(), Stop> {
        if e.id <= self.horizon {
            return Ok(());
        }
        if e.id.0 != self.horizon.0 + 1 {
            // A lower id is still on its way (or was lost): the store has everything up to e.
            return self.catch_up().await;
        }
        self.horizon = e.id;
        if e.id > self.last_sent && self.belongs(&e)? {
            self.send(&e).await?;
        }
        Ok(())
    }

    async fn on_notice(&mut self, n: StreamNotice) -> Result<(), Stop> {
        // Every notice is a thread's: none is global.
        let Some(session) = self.session else {
            return Ok(());
        };
        let (kind, thread, data) = match n {
            StreamNotice::TextDelta {
                thread_id,
                run_id,
                text,
            } => (
                "delta",
                thread_id,
                json!({"session_id": session, "turn_id": run_id, "text": text}),
            ),
            StreamNotice::ToolCallStarted {
                thread_id,
                run_id,
                call_id,
                name,
            } => (
                "tool_started",
                thread_id,
                json!({"session_id": session, "turn_id": run_id, "call_id": call_id, "name": name}),
            ),
            StreamNotice::ToolCallWriting {
                thread_id,
                run_id,
                call_id,
                name,
                chars,
            } => (
                "tool_writing",
                thread_id,
                json!({"session_id": session, "turn_id": run_id, "call_id": call_id, "name": name, "chars": chars}),
            ),
            StreamNotice::CommandStarted {
                thread_id,
                run_id,
                command,
            } => (
                "command_started",
                thread_id,
                json!({"session_id": session, "turn_id": run_id, "command": command}),
            ),
            StreamNotice::ModelCallStarted { .. } => return Ok(()),
        };
        if !self.is_member(thread)? {
            return Ok(());
        }
        let event = SseEvent::default().event(kind).data(data.to_string());
        self.out.send(event).await.map_err(|_| Stop::Gone)
    }

    fn belongs(&mut self, e: &Event) -> Result<bool, Stop> {
        let Some(session) = self.session else {
            return Ok(is_global(e));
        };
        if e.session_id == Some(session) {
            return Ok(true);
        }
        match e.thread_id {
            Some(t) => self.is_member(t),
            None => Ok(false),
        }
    }

    /// Whether a thread works for this conversation (a Bot's thread there, or a job's work
    /// speaking there). An unknown thread may be new: the set is read again (a thread is bound
    /// in the transaction that creates it, so by the time any of its events is heard the
    /// binding is visible).
    fn is_member(&mut self, t: ThreadId) -> Result<bool, Stop> {
        let Some(session) = self.session else {
            return Ok(false);
        };
        if self.members.contains(&t) {
            return Ok(true);
        }
        if self.outsiders.contains(&t) {
            return Ok(false);
        }
        let threads = self
            .store
            .read(|tx| tx.threads_heard_in(session))
            .map_err(|_| Stop::Store)?;
        self.members.extend(threads);
        if self.members.contains(&t) {
            return Ok(true);
        }
        if self.outsiders.len() > 10_000 {
            self.outsiders.clear();
        }
        self.outsiders.insert(t);
        Ok(false)
    }

    async fn send(&mut self, e: &Event) -> Result<(), Stop> {
        let data = serde_json::to_string(e).map_err(|_| Stop::Store)?;
        let event = SseEvent::default()
            .id(e.id.0.to_string())
            .event(e.kind.as_str())
            .data(data);
        self.out.send(event).await.map_err(|_| Stop::Gone)?;
        self.last_sent = e.id;
        Ok(())
    }
}

/// Whether an event is the global stream's: about no conversation and no thread.
fn is_global(e: &Event) -> bool {
    e.session_id.is_none() && e.thread_id.is_none()
}
