//! Stalled tickets (SV-12…SV-14): call the ball holder of a quiet open ticket back, at most
//! twice per progress cycle, then only a notice.

use serde::Serialize;

/// When the job went quiet, as SV-13 reads it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TicketQuiet {
    /// The job's last activity: lines filed to it, its segments, its work log.
    pub last_activity_at: i64,
    /// In a conversation the user is in, the job's last line is a Bot's, after the user's
    /// last line there: the later of that Bot line and the user's last line in that conversation.
    pub bot_spoke_last_at: Option<i64>,
}

/// SV-13: how long the ticket must have been quiet, and since when it is counted.
pub fn threshold_ms(q: &TicketQuiet) -> (i64, i64) {
    match q.bot_spoke_last_at {
        Some(at) => (super::QUIET_AFTER_BOT_LINE_MS, at.max(q.last_activity_at)),
        None => (super::QUIET_MS, q.last_activity_at),
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StalledFacts {
    /// The job is active, not dormant and not a routine's.
    pub job_supervised: bool,
    pub ticket_open: bool,
    /// It waits for nothing: every ticket it depends on, and the sample it is held to, is
    /// through (handed over once; dropped and parked ones are not awaited) — T17, LJ6.
    pub dependencies_done: bool,
    /// T18: nobody has started it, and what it waited for just came through: its owner is
    /// called at once rather than after the quiet window.
    pub released: bool,
    /// The ball is with a Bot the supervisor may call (owner, lead, a request's recipient, a
    /// reviewer nobody moves); `None`: with the user, the app, a poller or nobody.
    pub holder_bot: Option<i64>,
    /// That Bot has a live segment, a valid wait or a queued line on the job.
    pub holder_busy: bool,
    /// Cut or failed work on any ticket of the job is not resumed yet (S-SV-4).
    pub cut_work_on_job: bool,
    pub quiet: TicketQuiet,
    /// Call-backs in this progress cycle, and whether its notice was given.
    pub callbacks_in_cycle: u32,
    pub noticed: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum StalledVerdict {
    /// Nothing to do until something happens on the job.
    Nothing,
    /// Not quiet long enough: look again at `at`.
    NotYet { at: i64 },
    /// SV-12: call the holder back (`n` is this call-back's number in the cycle).
    CallBack { bot: i64, quiet_ms: i64, n: u32 },
    /// SV-14: the cycle's call-backs are spent: one notice, no line.
    Notice,
}

/// SV-12…SV-14 for one open ticket at `now`.
pub fn stalled_verdict(f: &StalledFacts, now: i64) -> StalledVerdict {
    if !f.job_supervised || !f.ticket_open || !f.dependencies_done || f.cut_work_on_job {
        return StalledVerdict::Nothing;
    }
    let Some(bot) = f.holder_bot else {
        return StalledVerdict::Nothing;
    };
    if f.holder_busy {
        return StalledVerdict::Nothing;
    }
    let (threshold, since) = threshold_ms(&f.quiet);
    if f.released && f.callbacks_in_cycle == 0 {
        return StalledVerdict::CallBack {
            bot,
            quiet_ms: (now - since).max(0),
            n: 1,
        };
    }
    let quiet_ms = now - since;
    if quiet_ms < threshold {
        return StalledVerdict::NotYet {
            at: since + threshold,
        };
    }
    if f.callbacks_in_cycle >= super::CALLBACKS_PER_CYCLE {
        return if f.noticed {
            StalledVerdict::Nothing
        } else {
            StalledVerdict::Notice
        };
    }
    StalledVerdict::CallBack {
        bot,
        quiet_ms,
        n: f.callbacks_in_cycle + 1,
    }
}

/// The call-back's line: facts only, and the ending contract's choice (SV-12).
pub fn callback_line(ticket: &str, quiet_ms: i64, role: &str) -> String {
    let minutes = (quiet_ms / 60_000).max(1);
    format!(
        "Ticket {ticket} has been quiet for {minutes} min and you are its {role}. Move it on now, \
         or end your turn the way the ending contract asks: hand it over, book a check-back, \
         hand it to someone by name, or say what blocks it."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts() -> StalledFacts {
        StalledFacts {
            job_supervised: true,
            ticket_open: true,
            dependencies_done: true,
            released: false,
            holder_bot: Some(7),
            holder_busy: false,
            cut_work_on_job: false,
            quiet: TicketQuiet {
                last_activity_at: 0,
                bot_spoke_last_at: None,
            },
            callbacks_in_cycle: 0,
            noticed: false,
        }
    }

    #[test]
    fn t18_a_released_ticket_is_called_at_once_then_on_the_quiet_window() {
        let mut f = facts();
        f.released = true;
        assert_eq!(
            stalled_verdict(&f, 10_000),
            StalledVerdict::CallBack {
                bot: 7,
                quiet_ms: 10_000,
                n: 1
            }
        );
        f.callbacks_in_cycle = 1;
        assert_eq!(
            stalled_verdict(&f, 20_000),
            StalledVerdict::NotYet { at: 120_000 }
        );
        // Still waiting for something: nobody is called.
        f.callbacks_in_cycle = 0;
        f.dependencies_done = false;
        assert_eq!(stalled_verdict(&f, 10_000), StalledVerdict::Nothing);
    }

    #[test]
    fn s_sv_6_two_call_backs_then_only_the_notice() {
        let mut f = facts();
        assert_eq!(
            stalled_verdict(&f, 60_000),
            StalledVerdict::NotYet { at: 120_000 }
        );
        assert_eq!(
            stalled_verdict(&f, 120_000),
            StalledVerdict::CallBack {
                bot: 7,
                quiet_ms: 120_000,
                n: 1
            }
        );
        f.callbacks_in_cycle = 1;
        assert!(matches!(
            stalled_verdict(&f, 250_000),
            StalledVerdict::CallBack { n: 2, .. }
        ));
        f.callbacks_in_cycle = 2;
        assert_eq!(stalled_verdict(&f, 400_000), StalledVerdict::Notice);
        f.noticed = true;
        assert_eq!(stalled_verdict(&f, 500_000), StalledVerdict::Nothing);
    }

    #[test]
    fn s_sv_7_ten_minutes_after_a_bot_line_counted_from_the_later_time() {
        let mut f = facts();
        f.quiet.bot_spoke_last_at = Some(30_000);
        assert_eq!(
            stalled_verdict(&f, 200_000),
            StalledVerdict::NotYet { at: 630_000 }
        );
        assert!(matches!(
            stalled_verdict(&f, 630_000),
            StalledVerdict::CallBack { .. }
        ));
    }

    #[test]
    fn s_sv_4_cut_work_on_the_job_blocks_call_backs_to_its_other_tickets() {
        let mut f = facts();
        f.cut_work_on_job = true;
        assert_eq!(stalled_verdict(&f, 1_000_000), StalledVerdict::Nothing);
    }

    #[test]
    fn sv_12_no_call_back_to_a_busy_holder_a_user_ball_or_an_awaited_dependency() {
        let mut busy = facts();
        busy.holder_busy = true;
        let mut user = facts();
        user.holder_bot = None;
        let mut deps = facts();
        deps.dependencies_done = false;
        let mut dormant = facts();
        dormant.job_supervised = false;
        for f in [busy, user, deps, dormant] {
            assert_eq!(stalled_verdict(&f, 1_000_000), StalledVerdict::Nothing);
        }
    }

    #[test]
    fn the_line_states_facts_and_the_contract() {
        let line = callback_line("02 Storyboard", 180_000, "owner");
        assert!(line.contains("3 min"));
        assert!(line.contains("owner"));
        assert!(line.contains("check-back"));
    }
}
