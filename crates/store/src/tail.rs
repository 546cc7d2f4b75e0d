//! Events from every node, in id order, on PostgreSQL.
//!
//! Several nodes commit to one database, so a node's subscribers must hear other nodes' events
//! too, and all of them in id order. Each event insert on PostgreSQL first takes one advisory
//! lock, held to commit, so ids are given out in commit order; and it sends `NOTIFY
//! troupe_events`, delivered at commit. The tail keeps the last id it published: after a local
//! commit whose events follow it directly, they are published as they are (nothing can lie
//! between); otherwise, and whenever the listener hears a notification (or a second passes),
//! it reads the rows after that id and publishes them.

use crate::db::{Conn, PgConn, PgTarget};
use crate::events::Event;
use crate::{Result, Tx};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;
use tokio::sync::broadcast;
use troupe_core::EventId;

/// The channel every event insert notifies (a wake-up: the payload is empty).
pub(crate) const EVENTS_CHANNEL: &str = "troupe_events";
/// The channel of node-to-node requests (a stop for a run another node holds).
pub(crate) const CONTROL_CHANNEL: &str = "troupe_control";
/// Names the event-id lock to `pg_advisory_xact_lock`; shared by every Troupe.
pub(crate) const EVENTS_LOCK: i64 = 0x7472_6f75_7065_0001;
/// How often the tail reads even without a notification (one lost while reconnecting).
const SAFETY_POLL: Duration = Duration::from_secs(1);
/// Rows read per query when catching up.
const PAGE: u32 = 1000;

pub(crate) struct Tail {
    state: Mutex<State>,
    events: broadcast::Sender<Event>,
}

struct State {
    /// A connection of the tail's own, for catching up.
    conn: Conn,
    last: i64,
}

impl Tail {
    /// Start tailing after the newest committed event, with a listener thread that lives as
    /// long as the tail.
    pub(crate) fn start(
        target: &PgTarget,
        events: broadcast::Sender<Event>,
        control: broadcast::Sender<String>,
    ) -> Result<Arc<Tail>> {
        let conn = Conn::Pg(PgConn::connect(target)?);
        let last = newest(&conn)?;
        let tail = Arc::new(Tail {
            state: Mutex::new(State { conn, last }),
            events,
        });
        let (listener, heard) =
            PgConn::connect_listening(target, &[EVENTS_CHANNEL, CONTROL_CHANNEL])?;
        let weak = Arc::downgrade(&tail);
        let target = target.clone();
        std::thread::Builder::new()
            .name("troupe-store-tail".into())
            .spawn(move || listen(weak, target, listener, heard, control))
            .map_err(|e| {
                crate::StoreError::Conflict(format!("cannot start the event tail: {e}"))
            })?;
        Ok(tail)
    }

    /// Publish what a local commit appended, keeping id order with everyone else's.
    pub(crate) fn committed(&self, events: Vec<Event>) {
        let Some(first) = events.first() else { return };
        let mut state = self.lock();
        let follows =
            first.id.0 == state.last + 1 && events.windows(2).all(|w| w[1].id.0 == w[0].id.0 + 1);
        if follows {
            state.last = events.last().map_or(state.last, |e| e.id.0);
            for e in events {
                let _ = self.events.send(e);
            }
        } else if let Err(e) = self.catch_up_locked(&mut state) {
            warn_catch_up(&e);
        }
    }

    fn catch_up(&self) {
        let mut state = self.lock();
        if let Err(e) = self.catch_up_locked(&mut state) {
            warn_catch_up(&e);
        }
    }

    fn catch_up_locked(&self, state: &mut State) -> Result<()> {
        state.conn.renew_if_broken();
        loop {
            let page = read_after(&state.conn, state.last)?;
            let full = page.len() as u32 == PAGE;
            for e in page {
                state.last = e.id.0;
                let _ = self.events.send(e);
            }
            if !full {
                return Ok(());
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn listen(
    tail: Weak<Tail>,
    target: PgTarget,
    mut listener: PgConn,
    mut heard: std::sync::mpsc::Receiver<(String, String)>,
    control: broadcast::Sender<String>,
) {
    loop {
        let note = heard.recv_timeout(SAFETY_POLL);
        let Some(tail) = tail.upgrade() else { break };
        match note {
            Ok((channel, payload)) if channel == CONTROL_CHANNEL => {
                let _ = control.send(payload);
            }
            Ok(_) | Err(std::sync::mpsc::RecvTimeoutError::Timeout) => tail.catch_up(),
            // The connection ended (the server restarted, say): listen again once it answers;
            // meanwhile nothing is lost, the next catch-up reads whatever committed.
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                drop(tail);
                std::thread::sleep(SAFETY_POLL);
                match PgConn::connect_listening(&target, &[EVENTS_CHANNEL, CONTROL_CHANNEL]) {
                    Ok((l, h)) => (listener, heard) = (l, h),
                    Err(e) => {
                        tracing::warn!(error = %e, "cannot listen for other nodes' events yet")
                    }
                }
            }
        }
    }
    drop(listener);
}

fn newest(conn: &Conn) -> Result<i64> {
    let rows = conn.query("SELECT MAX(id) FROM events", &[])?;
    Ok(rows
        .first()
        .map(|r| r.get::<Option<i64>>(0))
        .transpose()?
        .flatten()
        .unwrap_or(0))
}

fn read_after(conn: &Conn, last: i64) -> Result<Vec<Event>> {
    let tx = Tx {
        conn,
        now: 0,
        events: Vec::new(),
        controls: Vec::new(),
        wakes: Vec::new(),
        writing: false,
    };
    tx.events_after(EventId(last), None, PAGE)
}

/// A failed catch-up is retried at the next wake-up; nothing is skipped meanwhile.
fn warn_catch_up(e: &crate::StoreError) {
    tracing::warn!(error = %e, "reading the event log after a commit failed; retrying at the next wake-up");
}
