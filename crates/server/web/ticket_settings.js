// Troupe web page: a picked ticket's settings in the job view — who actually ran it (ADR 0086),
// its status menu (the board's five statuses: a move is the person's, source `user`), its
// reviewer (T8: the job's conversation's Bots, the owner left out), "Make X the reviewer" when
// a Bot that is neither owner nor reviewer ran five of its turns (S-T6: offered here only, no
// line, no card), and "Make it the sample" (SA5). deliverables.js draws it with its own press
// and error lines, so a refusal shows where it was pressed and survives live redraws.
"use strict";

// The board's five statuses, in order, with their words: the status menu here, the board's
// columns (ticket_board.js) and the plan's count row (job_plan.js) all read this one list.
window.troupeTicketStatuses = [
  ["to_do", "To do"],
  ["in_progress", "In progress"],
  ["in_review", "In review"],
  ["done", "Done"],
  ["parked", "Parked"],
];

window.troupeTicketSettings = function (ctx) {
  const { el, api, botName, idEq, press, errorLine, button, view } = ctx;
  const enc = encodeURIComponent;
  const STATUS = window.troupeTicketStatuses;

  const patch = (t, body) => () => api("PATCH", "/v1/tickets/" + enc(t.id), body);

  function statusMenu(t) {
    const wrap = el("label", "status-field");
    wrap.appendChild(el("span", null, "Status"));
    const sel = el("select", "status-menu");
    for (const [v, text] of STATUS) {
      const o = el("option", null, text);
      o.value = v;
      sel.appendChild(o);
    }
    sel.value = t.status;
    sel.disabled = !view().online;
    const key = "status:" + t.id;
    // Refused, the menu is drawn again from the ticket: it shows the status it still has.
    sel.addEventListener("change", () => press(key, sel, patch(t, { status: sel.value })).catch(() => {}));
    const box = el("div", "status-box");
    wrap.appendChild(sel);
    box.append(wrap, errorLine("status-error", key));
    return box;
  }

  function reviewerMenu(t) {
    const wrap = el("label", "reviewer-field");
    wrap.appendChild(el("span", null, "Reviewer"));
    const sel = el("select", "reviewer-menu");
    const none = el("option", null, "No reviewer");
    none.value = "";
    sel.appendChild(none);
    const ids = view().members.filter((b) => !idEq(b, t.owner_bot_id));
    if (t.reviewer_bot_id !== null && t.reviewer_bot_id !== undefined && !ids.some((b) => idEq(b, t.reviewer_bot_id))) {
      ids.push(t.reviewer_bot_id); // kept visible though it left the conversation
    }
    for (const b of ids) {
      const o = el("option", null, botName(b));
      o.value = String(b);
      sel.appendChild(o);
    }
    sel.value = t.reviewer_bot_id === null || t.reviewer_bot_id === undefined ? "" : String(t.reviewer_bot_id);
    sel.disabled = !view().online;
    const key = "reviewer:" + t.id;
    sel.addEventListener("change", () => {
      const v = sel.value;
      press(key, sel, patch(t, { reviewer_bot_id: v === "" ? null : Number(v) })).catch(() => {});
    });
    const box = el("div", "reviewer-box");
    wrap.appendChild(sel);
    box.append(wrap, errorLine("reviewer-error", key));
    return box;
  }

  // What goes under a picked ticket's words: who ran it, then its settings row.
  function draw(t, box) {
    const v = view();
    const live = t.stage !== "dropped";
    if (live) {
      const ran = (t.ran_by || []).map((r) => botName(r.bot_id) + " (" + r.turns + (r.turns === 1 ? " turn)" : " turns)"));
      box.appendChild(el("p", "ticket-ran-by hint", ran.length ? "Who actually ran it: " + ran.join(", ") : "No Bot has run it yet"));
    }
    const row = el("div", "ticket-settings");
    row.appendChild(statusMenu(t));
    if (live) {
      row.appendChild(reviewerMenu(t));
      if (t.reviewer_suggestion !== null && t.reviewer_suggestion !== undefined) {
        const key = "suggest:" + t.id;
        const body = { reviewer_bot_id: Number(t.reviewer_suggestion) };
        row.appendChild(
          button("Make " + botName(t.reviewer_suggestion) + " the reviewer", "secondary make-reviewer", (b) =>
            press(key, b, patch(t, body)).catch(() => {})
          )
        );
        row.appendChild(errorLine("suggest-error", key));
      }
      // SA5: only in a large job or one with a sample, on a ticket not through and not the sample.
      if ((v.large.state === "large" || v.hasSample) && !t.through && !t.is_sample) {
        const key = "sample:" + t.id;
        row.appendChild(
          button("Make it the sample", "secondary make-sample", (b) => press(key, b, patch(t, { sample: true })).catch(() => {}))
        );
        row.appendChild(errorLine("sample-error", key));
      }
    }
    box.appendChild(row);
  }

  return { draw };
};
