//! The replacement card (digest 003-C §16 CW-18), the only card checks from words post. When a
//! check from the user's words is in force and the user names a different target later, the
//! check does not change: a card goes to where the user last spoke about the job with the
//! number in force and the new one, and "Use the new one" / "Change" / "Keep the old one".
//! Said again, it is reposted with the count; the old number said again (or the new one gone)
//! withdraws it. One press per card; a card is an app line, never in a Bot's transcript.

use super::words::number_of;
use crate::{Collab, CollabError};
use serde::Serialize;
use serde_json::json;
use troupe_core::CheckId;
use troupe_core::conversation::{Author, LineKind, SessionMessage};
use troupe_core::words_check::Dimension;
use troupe_core::words_check::replacement::{
    ANSWERS, CardMove, Shown, card_move, card_text, change_prefill,
};
use troupe_store::{
    CheckKind, CheckRecord, NewLine, NewReplacementCard, PlanRecord, ReplacementCard, StoreError,
    Tx, WordsStatus,
};

/// What a press on a replacement card did.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct ReplacementAnswer {
    /// `use_new`, `change` or `keep_old`.
    pub answer: String,
    /// The check in force after the press.
    pub in_force_check_id: Option<CheckId>,
    /// "Change": what to put in the composer (「片长改成 」).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefill: Option<String>,
}

/// The check in force and the replacement offer standing on one dimension, if both are.
fn standing(rows: &[CheckRecord], d: Dimension) -> Option<(&CheckRecord, &CheckRecord)> {
    let live = |s: WordsStatus| {
        rows.iter().find(|c| {
            c.kind == CheckKind::Words
                && c.dimension == Some(d)
                && c.removed_at.is_none()
                && c.status == Some(s)
        })
    };
    live(WordsStatus::InForce).zip(live(WordsStatus::Offer))
}

/// Bring each dimension's card in line with the words as they now stand, in the write that
/// settled them. The card compared is the latest one still open or answered.
pub(crate) fn sync_cards(tx: &mut Tx<'_>, plan: &PlanRecord) -> Result<(), StoreError> {
    let rows = tx.checks_of_plan(plan.id, false)?;
    let latest = tx.latest_replacement_cards(plan.id)?;
    for d in Dimension::ALL {
        // An answered card still stands for its number: pressing one ends its replacement (or,
        // with "Change", waits for the number), and only new words bring a card back.
        let card = latest
            .iter()
            .find(|c| c.dimension == d && (c.state == "open" || c.state == "answered"));
        let open = card.filter(|c| c.state == "open");
        let now = standing(&rows, d);
        let shown = |offer: CheckId, said: u32| Shown {
            offer: offer.0,
            said_count: said,
        };
        let moved = card_move(
            card.map(|c| shown(c.offer_check_id, c.said_count)),
            now.map(|(_, o)| shown(o.id, said(o))),
        );
        if let Some(c) = open {
            match moved {
                CardMove::Withdraw | CardMove::Replace => close(tx, c, "withdrawn")?,
                CardMove::Repost => close(tx, c, "reposted")?,
                CardMove::Stay | CardMove::Post => {}
            }
        }
        if matches!(moved, CardMove::Post | CardMove::Repost | CardMove::Replace)
            && let Some((old, new)) = now
        {
            post(tx, plan, d, old, new)?;
        }
    }
    Ok(())
}

fn said(c: &CheckRecord) -> u32 {
    u32::try_from(c.said_count).unwrap_or(u32::MAX).max(1)
}

fn post(
    tx: &mut Tx<'_>,
    plan: &PlanRecord,
    d: Dimension,
    old: &CheckRecord,
    new: &CheckRecord,
) -> Result<(), StoreError> {
    let (Some(old_n), Some(new_n)) = (number_of(old), number_of(new)) else {
        return Ok(());
    };
    // Where the user last spoke about the job, else its home; none left → no card.
    let Some(session) = crate::tickets::ball::notice_place(tx, plan.id)? else {
        return Ok(());
    };
    let mut line = NewLine::plain(
        session,
        Author::System,
        card_text(d, &old_n, &new_n, said(new)),
    );
    line.kind = LineKind::System;
    let line = tx.insert_line(&line)?;
    let card = tx.create_replacement_card(&NewReplacementCard {
        plan_id: plan.id,
        dimension: d,
        in_force_check_id: old.id,
        offer_check_id: new.id,
        said_count: said(new),
        message_id: line.id,
    })?;
    tx.set_line_control(
        line.id,
        &json!({
            "kind": "replacement",
            "card_id": card.id,
            "task_id": plan.id,
            "dimension": d.as_str(),
            "in_force_check_id": old.id,
            "offer_check_id": new.id,
            "in_force": old_n.asked(),
            "new": new_n.asked(),
            "offer": ANSWERS,
        }),
    )
}

/// The card loses its buttons and says what became of it.
fn close(tx: &mut Tx<'_>, card: &ReplacementCard, state: &str) -> Result<(), StoreError> {
    tx.close_replacement_card(card.id, state, None)?;
    settle_line(tx, card, json!({"closed": state}))
}

fn settle_line(
    tx: &mut Tx<'_>,
    card: &ReplacementCard,
    extra: serde_json::Value,
) -> Result<(), StoreError> {
    let mut control = tx
        .line(card.message_id)?
        .control
        .unwrap_or_else(|| json!({}));
    control["offer"] = json!([]);
    if let (Some(obj), Some(add)) = (control.as_object_mut(), extra.as_object()) {
        for (k, v) in add {
            obj.insert(k.clone(), v.clone());
        }
    }
    tx.set_line_control(card.message_id, &control)
}

impl Collab {
    /// A press on a replacement card (`POST /v1/messages/:id/control {action}`): "use_new"
    /// confirms the new number, which removes the old check; "keep_old" removes the new
    /// number's offer, so the words said so far stop counting; "change" leaves both and
    /// answers what to put in the composer. A card no longer open is 409 `card_closed`.
    pub async fn answer_replacement(
        &self,
        line: &SessionMessage,
        action: &str,
    ) -> Result<ReplacementAnswer, CollabError> {
        if !ANSWERS.contains(&action) {
            return Err(CollabError::invalid(format!(
                "action: '{action}' is not one of {}",
                ANSWERS.join(", ")
            )));
        }
        let card = self
            .store()
            .read(|tx| tx.replacement_card_on_line(line.id))?;
        let Some(card) = card else {
            return Err(CollabError::invalid(format!(
                "message {} is not a replacement card",
                line.id
            )));
        };
        let closed = |c: &ReplacementCard| {
            CollabError::conflict(
                "card_closed",
                format!(
                    "card_closed: this card was {}{}",
                    c.state,
                    c.answer
                        .as_deref()
                        .map(|a| format!(" ({a})"))
                        .unwrap_or_default()
                ),
            )
        };
        if card.state != "open" {
            return Err(closed(&card));
        }
        // The press is recorded first: its effect ends the replacement, which a sync would
        // otherwise read as a withdrawal.
        let pressed = self.store().write(|tx| {
            if !tx.close_replacement_card(card.id, "answered", Some(action))? {
                return Ok(Err(closed(&tx.replacement_card(card.id)?)));
            }
            settle_line(tx, &card, json!({"answer": action}))?;
            tx.press_line_control(line.id, &json!({"action": action}))?;
            Ok(Ok(()))
        })?;
        pressed?;
        let checks = self.checks();
        match action {
            // Confirming reads the words again and removes the old check (CW-16).
            "use_new" => {
                checks.confirm(card.offer_check_id).await?;
            }
            "keep_old" => {
                self.store()
                    .write(|tx| tx.remove_check(card.offer_check_id))?;
            }
            _ => {}
        }
        let answered = self.store().read(|tx| {
            Ok(tx
                .checks_of_plan(card.plan_id, false)?
                .into_iter()
                .find(|c| {
                    c.kind == CheckKind::Words
                        && c.dimension == Some(card.dimension)
                        && c.status == Some(WordsStatus::InForce)
                })
                .map(|c| c.id))
        })?;
        Ok(ReplacementAnswer {
            answer: action.to_string(),
            in_force_check_id: answered,
            prefill: (action == "change").then(|| change_prefill(card.dimension)),
        })
    }
}
