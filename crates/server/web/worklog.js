// Troupe web page: a job's work log in the job view — what the app did on the job (the
// supervisor's pick-ups, call-backs and notices, closing checks sent back, the scribe's answers,
// external jobs finishing), in words, oldest first. Read from GET /v1/tasks/:id/work-log and
// kept live by the job view's stream (each row is also an event of the job's home
// conversation, carrying `log_id`). deliverables.js creates the section's host and hands it the
// stream; all text is set with textContent.
"use strict";

window.troupeWorkLog = function (ctx) {
  const { el, state, api } = ctx;
  const enc = encodeURIComponent;
  // The supervisor tries a work item at most this often per hour (SV-7) before it stops.
  const PICKUPS_PER_HOUR = 3;
  const KINDS = [
    "supervisor_picked_up",
    "supervisor_called_back",
    "supervisor_notice",
    "supervisor_retry_budget",
    "supervisor_unknown_effect",
    "supervisor_requeued",
    "supervisor_wait_invalid",
    "supervisor_pickup_refused",
    "closing_check_sent_back",
    "scribe_answer",
    "external_job_finished",
    "check_back_voided",
    "ceiling_reached",
    "ceiling_answered",
    "reply_withheld",
  ];
  const CUT = {
    interrupted: "cut-off",
    restart: "cut-off",
    failed: "failed",
    attention: "stuck",
  };
  const RULES = {
    failing_checks: "a check of the job fails",
    rest_later: "it left the rest for later with nothing booked to come back",
    run_claim: "it said it ran something it did not run",
  };

  const STUCK = {
    same_requirement: "the same requirement failed on 3 hand-overs in a row",
    sent_back: "you sent it back 3 times in a row",
    too_many: "more than 6 hand-overs failed",
  };
  const CHOSEN = {
    another_way: "another way",
    change_plan: "change the plan",
    relax: "relax the requirement",
    take_as_is: "take it as it is",
    carry_on: "carry on",
  };

  const view = { planId: null, gen: 0, rows: [], last: 0, tickets: new Map() };
  const workers = new Map(); // work item id -> Bot id, or a promise of it
  let box = null;
  let list = null;
  let empty = null;

  // The section sits in the job view, after the checks.
  function mount(host) {
    box = el("section", "work-log");
    box.id = "work-log";
    box.dataset.testid = "work-log";
    box.setAttribute("aria-labelledby", "work-log-heading");
    const h = el("h4", null, "Work log");
    h.id = "work-log-heading";
    box.appendChild(h);
    box.appendChild(el("p", "hint", "What the app did on this job by itself, oldest first."));
    list = el("ol", "work-log-list");
    list.setAttribute("aria-live", "polite");
    box.appendChild(list);
    empty = el("p", "hint work-log-empty", "Nothing yet.");
    box.appendChild(empty);
    host.appendChild(box);
    box.hidden = true;
  }

  function open(planId) {
    view.planId = planId;
    view.gen++;
    view.rows = [];
    view.last = 0;
    box.hidden = false;
    draw();
    fetchMore();
  }

  function close() {
    view.planId = null;
    view.gen++;
    view.rows = [];
    if (box) box.hidden = true;
  }

  // The ticket list the job view read: numbers and titles for the words.
  function tickets(list) {
    view.tickets = new Map(((list && list.tickets) || []).map((t) => [String(t.id), t]));
    draw();
  }

  let fetching = false;
  let again = false;
  async function fetchMore() {
    if (fetching) {
      again = true;
      return;
    }
    fetching = true;
    try {
      do {
        again = false;
        const gen = view.gen;
        const id = view.planId;
        if (id === null) return;
        let rows;
        try {
          rows = await api("GET", "/v1/tasks/" + enc(id) + "/work-log?after=" + view.last + "&limit=1000");
        } catch (e) {
          return; // the job view shows the daemon unreachable; the next event reads again
        }
        if (gen !== view.gen) return;
        for (const r of rows || []) add(r);
        if (rows && rows.length === 1000) again = true;
      } while (again);
    } finally {
      fetching = false;
    }
  }

  function add(r) {
    if (view.rows.some((x) => x.id === r.id)) return;
    view.rows.push(r);
    view.rows.sort((a, b) => a.id - b.id);
    if (r.id > view.last) view.last = r.id;
    draw();
  }

  // An event names its row by `log_id`: the row is read from the log, so the page shows what
  // the route lists.
  function listen(es, mine, changed) {
    for (const kind of KINDS) {
      es.addEventListener(kind, (e) => {
        const ev = mine(e);
        if (!(ev && ev.payload && ev.payload.log_id !== undefined)) return;
        fetchMore();
        if (changed) changed();
      });
    }
    es.addEventListener("open", () => {
      if (view.planId !== null) fetchMore();
    });
  }

  function botName(id) {
    const b = state.bots.get(id);
    return b ? b.name : "Bot " + id;
  }

  // The Bot of a work item: read once per item, the words redrawn when it is known.
  function workerOf(item) {
    if (item === null || item === undefined) return null;
    const k = String(item);
    const known = workers.get(k);
    if (known === undefined) {
      workers.set(k, null);
      api("GET", "/v1/work-items/" + enc(k))
        .then((w) => {
          workers.set(k, w && w.bot_id !== undefined ? w.bot_id : null);
          draw();
        })
        .catch(() => {});
      return null;
    }
    return known;
  }

  function whose(r) {
    const bot = workerOf(r.work_item_id);
    return bot === null || bot === undefined ? "the Bot" : botName(bot);
  }

  function ticketName(id) {
    if (id === null || id === undefined) return null;
    const t = view.tickets.get(String(id));
    return t ? String(t.number).padStart(2, "0") + " " + t.title : "ticket " + id;
  }

  function minutes(ms) {
    const m = Math.round((Number(ms) || 0) / 60000);
    if (m < 1) return "under a minute";
    if (m < 60) return m + " min";
    const h = Math.floor(m / 60);
    return h + " h" + (m % 60 ? " " + (m % 60) + " min" : "");
  }

  // The row in words.
  function words(r) {
    const p = r.payload || {};
    const who = whose(r);
    const on = ticketName(r.ticket_id);
    const onTicket = on ? " on " + on : "";
    switch (r.kind) {
      case "supervisor_picked_up": {
        const cut = CUT[p.cause] || "stopped";
        const attempt = p.attempt ? ", attempt " + p.attempt + " of " + PICKUPS_PER_HOUR : "";
        const free = p.spends_budget === false ? " (a clean stop cut it: not counted)" : "";
        return "Picked up " + who + "\u2019s " + cut + " turn" + onTicket + attempt + free;
      }
      case "supervisor_called_back":
        return "Called " + who + " back" + (on ? " on " + on : "") + " after " + minutes(p.quiet_ms) + " quiet" + (p.n > 1 ? " (call-back " + p.n + ")" : "");
      case "supervisor_notice":
        return (on ? on : "A ticket") + " has stalled: called back twice with no progress, so nobody is called again until something moves";
      case "supervisor_retry_budget":
        return who + "\u2019s work failed " + PICKUPS_PER_HOUR + " times within an hour; it is not picked up again until you say so";
      case "supervisor_unknown_effect":
        return who + "\u2019s turn was cut off during " + (p.call || "a command") + "; whether it finished is unknown, so nothing continues it by itself";
      case "supervisor_requeued":
        return who + " had mail waiting while idle: its work was queued again";
      case "supervisor_wait_invalid":
        return who + "\u2019s wait no longer stands" + (p.what ? " (" + p.what + ")" : "") + ": it needs attention";
      case "supervisor_pickup_refused":
        return "Could not pick up " + who + "\u2019s work" + (p.why ? ": " + p.why : "") + " (not counted)";
      case "closing_check_sent_back": {
        const why = (p.rules || []).map((x) => RULES[x] || String(x).replace(/_/g, " "));
        return "Sent " + who + "\u2019s reply back before it reached you" + (why.length ? ": " + why.join("; ") : "");
      }
      case "scribe_answer": {
        const landed = Array.isArray(p.landed) ? p.landed.length : Number(p.landed) || 0;
        const dropped = Array.isArray(p.dropped) ? p.dropped.length : Number(p.dropped) || 0;
        if (p.failure) return "The scribe could not read a line: " + p.failure;
        return "The scribe read a line: " + landed + (landed === 1 ? " entry" : " entries") + " noted" + (dropped ? ", " + dropped + " dropped" : "");
      }
      case "external_job_finished":
        return "External job " + (p.tool ? p.tool + " " : "") + (p.status || "finished") + onTicket;
      case "check_back_voided":
        return "A check-back was voided" + (p.reason === "ball_is_yours" ? ": the ticket waits on you" : p.reason ? " (" + p.reason + ")" : "");
      case "ceiling_reached":
        return (on || "A ticket") + " is stuck: " + (STUCK[p.case] || "its hand-overs keep failing") + "; you were asked how it goes on";
      case "ceiling_answered":
        return "You answered " + (on || "the ticket") + "\u2019s ceiling card: " + (CHOSEN[p.action] || p.action);
      case "reply_withheld":
        return "Did not post " + who + "\u2019s reply" + onTicket + ": nobody had asked, and it said again what its message " + p.repeats + " said";
      default:
        return String(r.kind).replace(/_/g, " ") + onTicket;
    }
  }

  function fmtTime(ms) {
    const d = new Date(ms);
    return isNaN(d.getTime()) ? "" : d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  }

  function draw() {
    if (!list) return;
    list.replaceChildren();
    for (const r of view.rows) {
      const li = el("li", "work-log-row");
      li.dataset.id = r.id;
      li.dataset.kind = r.kind;
      const t = el("time", "work-log-at hint", fmtTime(r.at));
      t.dateTime = new Date(r.at).toISOString();
      li.appendChild(t);
      li.appendChild(el("span", "work-log-words", words(r)));
      list.appendChild(li);
    }
    empty.hidden = view.rows.length > 0;
  }

  return { mount, open, close, listen, tickets };
};
