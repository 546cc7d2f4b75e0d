// Troupe web page: the job view's head line (PLAN-O7, PLAN-U3) — "Last change 3 min ago (ticket
// 02 “Rough cut”: review)" from the job's `last_change`, the job's state beside it when it is
// Done, Parked or Dormant, and for such a job with tickets still open, "Settled: no one will
// pick up the tickets left open" (or its Parked / Dormant wording). Read again on the job's
// events. deliverables.js mounts it and hands it the job's stream; text is set with textContent.
"use strict";

window.troupeJobState = function (ctx) {
  const { el, api } = ctx;
  const enc = encodeURIComponent;
  const KINDS = [
    "plan_changed",
    "plan_delivered",
    "plan_reopened",
    "ticket_stage_changed",
    "check_run",
    "run_started",
    "run_ended",
  ];
  const OPEN = new Set(["to_do", "in_progress", "in_review"]);

  const view = { planId: null, plan: null, tickets: [], gen: 0 };
  let box = null;
  let change = null;
  let settled = null;

  function mount(host) {
    box = el("div", "job-state");
    box.id = "job-state";
    change = el("p", "hint job-last-change");
    change.setAttribute("aria-live", "polite");
    settled = el("p", "job-settled");
    box.append(change, settled);
    box.hidden = true;
    const counter = document.querySelector("#job-counter");
    if (counter) counter.before(box);
    else host.appendChild(box);
  }

  function open(planId) {
    view.planId = planId;
    view.gen++;
    view.plan = null;
    draw();
    load();
  }

  function close() {
    view.planId = null;
    view.gen++;
    if (box) box.hidden = true;
  }

  function tickets(listed) {
    view.tickets = (listed && listed.tickets) || [];
    draw();
  }

  const load = window.troupeHttp.reloader(async () => {
    const gen = view.gen;
    if (view.planId === null) return;
    let plan;
    try {
      plan = await api("GET", "/v1/tasks/" + enc(view.planId));
    } catch (e) {
      return; // unreachable: the job view says so; the next event reads again
    }
    if (gen !== view.gen) return;
    view.plan = plan;
    draw();
  });

  function listen(es, mine) {
    for (const kind of KINDS) {
      es.addEventListener(kind, (e) => {
        // Turn events carry no job: any in the job's conversation reads it again.
        if (kind.startsWith("run_") || mine(e)) load();
      });
    }
  }

  function ago(at) {
    const s = Math.max(0, Math.round((Date.now() - at) / 1000));
    if (s < 60) return "just now";
    const m = Math.round(s / 60);
    if (m < 120) return m + " min ago";
    const h = Math.round(m / 60);
    if (h < 48) return h + " h ago";
    return Math.round(h / 24) + " days ago";
  }

  // Done, Parked or Dormant: the job goes on no further by itself.
  function stateWord(p) {
    if (p.dormant) return "Dormant";
    if (p.status === "parked") return "Parked";
    if (p.status === "done") return "Done";
    return null;
  }

  function draw() {
    if (!box) return;
    const p = view.plan;
    box.hidden = view.planId === null || !p;
    if (!p) return;
    const word = stateWord(p);
    box.dataset.state = word ? word.toLowerCase() : "active";
    const lc = p.last_change;
    change.textContent = (word ? word + " · " : "") + (lc ? "Last change " + ago(lc.at) + " (" + lc.what + ")" : "");
    const open = view.tickets.filter((t) => OPEN.has(t.status || t.stage)).length;
    settled.hidden = !word || open === 0;
    settled.textContent =
      (word === "Done" ? "Settled" : word) + ": no one will pick up the " + (open === 1 ? "ticket" : open + " tickets") + " left open";
  }

  return { mount, open, close, tickets, listen };
};
