//! Lines in a row (TURN-8…12, LR-2…4): a conversation's user lines are filed and routed in
//! arrival order, each after its own reading, but never stuck behind a slow line for more
//! than 45 s. Reading itself starts on arrival and is not queued. A line the model read as
//! nothing but a stop skips the queue: it goes to the control-line handling as soon as it is
//! read, ahead of the lines waiting, and holds up nobody (LR-3, CL-2).

use crate::ids::SessionMessageId;
use serde::{Deserialize, Serialize};

/// The longest a line waits behind the line ahead, counted from that line's arrival.
pub const ROUTE_WAIT_MS: i64 = 45_000;

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LineState {
    /// Its reading is under way.
    Reading,
    /// Read (or reading given up), waiting for its turn to route.
    Queued,
    Routed,
    Withdrawn,
}

impl LineState {
    pub fn as_str(self) -> &'static str {
        match self {
            LineState::Reading => "reading",
            LineState::Queued => "queued",
            LineState::Routed => "routed",
            LineState::Withdrawn => "withdrawn",
        }
    }
    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "reading" => Ok(LineState::Reading),
            "queued" => Ok(LineState::Queued),
            "routed" => Ok(LineState::Routed),
            "withdrawn" => Ok(LineState::Withdrawn),
            other => Err(format!(
                "unknown line state '{other}' (expected reading, queued, routed or withdrawn)"
            )),
        }
    }
    /// Nothing more will happen to the line; it holds up nobody.
    pub fn is_finished(self) -> bool {
        matches!(self, LineState::Routed | LineState::Withdrawn)
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueuedLine {
    pub id: SessionMessageId,
    pub state: LineState,
    pub arrived_at: i64,
    /// Its reading is stored (a fallback reading counts).
    pub read: bool,
    /// When its routing began, i.e. when it left the wait.
    pub started_at: Option<i64>,
    /// Its reading (by the model) says it is only a stop.
    pub only_stop: bool,
}

impl QueuedLine {
    /// Read as only a stop: carried out as read, so no line ever waits for it.
    fn skips_queue(&self) -> bool {
        self.read && self.only_stop
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    Route,
    /// Only a stop: carried out now by the control-line handling, whatever waits ahead.
    ExecuteStop,
    WaitForReading,
    WaitForLineAhead {
        until: i64,
    },
    /// Routed, withdrawn, already being routed, or not in this conversation.
    AlreadyDone,
}

/// Whether line `id` may be filed and routed now. `lines` are one conversation's user lines
/// in arrival order.
pub fn may_route(lines: &[QueuedLine], id: SessionMessageId, now: i64) -> Decision {
    let Some(at) = lines.iter().position(|l| l.id == id) else {
        return Decision::AlreadyDone;
    };
    let line = &lines[at];
    // A line whose routing began must not be routed twice.
    if line.state.is_finished() || line.started_at.is_some() {
        return Decision::AlreadyDone;
    }
    // LR-2: nothing happens to a line before it is read.
    if !line.read {
        return Decision::WaitForReading;
    }
    if line.skips_queue() {
        return Decision::ExecuteStop;
    }
    match lines[..at]
        .iter()
        .rev()
        .find(|l| !l.state.is_finished() && !l.skips_queue())
    {
        None => Decision::Route,
        Some(ahead) => {
            let until = ahead.arrived_at.saturating_add(ROUTE_WAIT_MS);
            if now >= until {
                Decision::Route
            } else {
                Decision::WaitForLineAhead { until }
            }
        }
    }
}

/// Every line that may route now, in arrival order.
pub fn next_to_route(lines: &[QueuedLine], now: i64) -> Vec<SessionMessageId> {
    lines
        .iter()
        .filter(|l| may_route(lines, l.id, now) == Decision::Route)
        .map(|l| l.id)
        .collect()
}

/// The order to take up lines a stop of the process left unrouted: the read stops first (so
/// no line ahead of a stop reaches a Bot before the stop holds it), then the rest as they
/// arrived.
pub fn resume_order(lines: &[QueuedLine]) -> Vec<SessionMessageId> {
    let (stops, rest): (Vec<&QueuedLine>, Vec<&QueuedLine>) =
        lines.iter().partition(|l| l.skips_queue());
    stops.into_iter().chain(rest).map(|l| l.id).collect()
}

/// "Withdraw" is offered only until a thread has the line (TURN-12).
pub fn may_withdraw(line: &QueuedLine) -> bool {
    matches!(line.state, LineState::Reading | LineState::Queued)
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: i64 = 1_000_000;

    fn line(id: i64, state: LineState, arrived_at: i64, read: bool) -> QueuedLine {
        QueuedLine {
            id: SessionMessageId(id),
            state,
            arrived_at,
            read,
            started_at: None,
            only_stop: false,
        }
    }

    #[test]
    fn line_queue_second_line_waits_for_the_first() {
        // S-TURN-2 / S-LR-5: L2 is read first but waits for L1 to be read and routed.
        let mut lines = vec![
            line(1, LineState::Reading, T0, false),
            line(2, LineState::Queued, T0 + 1_000, true),
        ];
        assert_eq!(
            may_route(&lines, SessionMessageId(2), T0 + 2_000),
            Decision::WaitForLineAhead {
                until: T0 + ROUTE_WAIT_MS
            }
        );
        assert!(next_to_route(&lines, T0 + 2_000).is_empty());
        lines[0].state = LineState::Queued;
        lines[0].read = true;
        assert_eq!(next_to_route(&lines, T0 + 3_000), vec![SessionMessageId(1)]);
        lines[0].started_at = Some(T0 + 3_000);
        assert_eq!(
            may_route(&lines, SessionMessageId(1), T0 + 3_000),
            Decision::AlreadyDone
        );
        assert!(next_to_route(&lines, T0 + 3_500).is_empty());
        lines[0].state = LineState::Routed;
        assert_eq!(next_to_route(&lines, T0 + 4_000), vec![SessionMessageId(2)]);
    }

    #[test]
    fn line_queue_wait_ends_after_45_s() {
        let lines = vec![
            line(1, LineState::Reading, T0, false),
            line(2, LineState::Queued, T0 + 5_000, true),
            line(3, LineState::Queued, T0 + 6_000, true),
        ];
        let l2 = SessionMessageId(2);
        assert_eq!(
            may_route(&lines, l2, T0 + 44_999),
            Decision::WaitForLineAhead { until: T0 + 45_000 }
        );
        assert_eq!(may_route(&lines, l2, T0 + 45_000), Decision::Route);
        // L3's deadline counts from L2, the nearest unfinished line ahead.
        assert_eq!(next_to_route(&lines, T0 + 45_000), vec![l2]);
        assert_eq!(
            next_to_route(&lines, T0 + 50_000),
            vec![l2, SessionMessageId(3)]
        );
    }

    #[test]
    fn line_queue_needs_its_own_reading() {
        let lines = vec![
            line(1, LineState::Routed, T0, true),
            line(2, LineState::Reading, T0 + 1_000, false),
        ];
        assert_eq!(
            may_route(&lines, SessionMessageId(2), T0 + 100_000),
            Decision::WaitForReading
        );
        assert_eq!(
            may_route(&lines, SessionMessageId(1), T0),
            Decision::AlreadyDone
        );
        assert_eq!(
            may_route(&lines, SessionMessageId(9), T0),
            Decision::AlreadyDone
        );
    }

    #[test]
    fn line_queue_withdrawn_line_ahead_does_not_block() {
        let lines = vec![
            line(1, LineState::Withdrawn, T0, false),
            line(2, LineState::Queued, T0 + 1_000, true),
        ];
        assert_eq!(next_to_route(&lines, T0 + 1_000), vec![SessionMessageId(2)]);
        assert!(may_withdraw(&lines[1]));
        assert!(!may_withdraw(&line(3, LineState::Routed, T0, true)));
        assert!(!may_withdraw(&lines[0]));
        assert_eq!(LineState::parse("queued"), Ok(LineState::Queued));
        assert_eq!(LineState::Withdrawn.as_str(), "withdrawn");
        assert!(LineState::parse("done").is_err());
    }

    #[test]
    fn line_queue_only_a_stop_skips_the_queue() {
        // LR-3 / CL-2: L1 is still being read and L2 waits behind it; L3, read as only a stop,
        // goes at once, and neither L2 nor L4 waits for it.
        let mut stop = line(3, LineState::Reading, T0 + 2_000, true);
        stop.only_stop = true;
        let lines = vec![
            line(1, LineState::Reading, T0, false),
            line(2, LineState::Queued, T0 + 1_000, true),
            stop.clone(),
            line(4, LineState::Queued, T0 + 3_000, true),
        ];
        let now = T0 + 3_500;
        assert_eq!(
            may_route(&lines, SessionMessageId(3), now),
            Decision::ExecuteStop
        );
        // Any other line keeps its place: L2 behind L1, L4 behind L2 (not behind the stop).
        assert_eq!(
            may_route(&lines, SessionMessageId(2), now),
            Decision::WaitForLineAhead {
                until: T0 + ROUTE_WAIT_MS
            }
        );
        assert_eq!(
            may_route(&lines, SessionMessageId(4), now),
            Decision::WaitForLineAhead {
                until: T0 + 1_000 + ROUTE_WAIT_MS
            }
        );
        assert!(next_to_route(&lines, now).is_empty());
        // A stop not read yet is not known to be one: it waits for its reading like any line.
        let unread = QueuedLine {
            read: false,
            ..stop.clone()
        };
        assert_eq!(
            may_route(&[unread], SessionMessageId(3), now),
            Decision::WaitForReading
        );
        // Behind a stop alone, a line routes at once.
        let alone = vec![stop, line(5, LineState::Queued, T0 + 4_000, true)];
        assert_eq!(next_to_route(&alone, T0 + 4_000), vec![SessionMessageId(5)]);
    }

    #[test]
    fn line_queue_resume_takes_the_stops_first() {
        let mut stop = line(3, LineState::Queued, T0 + 2_000, true);
        stop.only_stop = true;
        let mut unread_stop = line(5, LineState::Reading, T0 + 4_000, false);
        unread_stop.only_stop = true;
        let lines = vec![
            line(1, LineState::Reading, T0, true),
            line(2, LineState::Queued, T0 + 1_000, true),
            stop,
            line(4, LineState::Reading, T0 + 3_000, true),
            unread_stop,
        ];
        let order: Vec<i64> = resume_order(&lines).into_iter().map(|i| i.0).collect();
        assert_eq!(order, vec![3, 1, 2, 4, 5]);
    }
}
