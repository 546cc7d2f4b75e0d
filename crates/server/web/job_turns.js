// Troupe web page: "Turns on this job" in the job view — every Bot's turns on the job and its
// tickets, newest first (GET /v1/tasks/:id/turns): who, on which ticket, when, how long, and how
// it went. A turn the person stopped reads "Stopped" with what it was doing then, as recorded on
// the stop (STOP-13). Read again when a turn starts or ends in the job's conversation.
// deliverables.js mounts it and hands it the job's stream; text is set with textContent.
"use strict";

window.troupeJobTurns = function (ctx) {
  const { el, state, api } = ctx;
  const enc = encodeURIComponent;
  const SHOWN = 20;
  const WORD = {
    running: "Working",
    waiting_ask: "Waits for your answer",
    completed: "Done",
    failed: "Failed",
    stopped: "Stopped",
    interrupted: "Cut off",
  };

  const view = { planId: null, gen: 0, turns: null, tickets: new Map() };
  let box = null;
  let list = null;
  let empty = null;

  function mount(host) {
    box = el("section", "job-turns");
    box.id = "job-turns";
    box.setAttribute("aria-labelledby", "job-turns-heading");
    const h = el("h4", null, "Turns on this job");
    h.id = "job-turns-heading";
    box.appendChild(h);
    list = el("ul", "job-turn-list");
    list.setAttribute("aria-live", "polite");
    box.appendChild(list);
    empty = el("p", "hint", "No Bot has worked on this job yet.");
    box.appendChild(empty);
    box.hidden = true;
    host.appendChild(box);
  }

  function open(planId) {
    view.planId = planId;
    view.gen++;
    view.turns = null;
    draw();
    load();
  }

  function close() {
    view.planId = null;
    view.gen++;
    view.turns = null;
    if (box) box.hidden = true;
  }

  // The job's tickets, as deliverables.js reads them, to name a turn's ticket by number.
  function tickets(listed) {
    view.tickets = new Map(((listed && listed.tickets) || []).map((t) => [String(t.id), t]));
    draw();
  }

  const load = window.troupeHttp.reloader(async () => {
    const gen = view.gen;
    if (view.planId === null) return;
    let turns;
    try {
      turns = await api("GET", "/v1/tasks/" + enc(view.planId) + "/turns?limit=" + SHOWN);
    } catch (e) {
      return; // unreachable: the job view says so; the next event reads again
    }
    if (gen !== view.gen) return;
    view.turns = Array.isArray(turns) ? turns : [];
    draw();
  });

  function listen(es) {
    // Turn events carry no job: any start or end in the job's conversation reads the list again.
    for (const kind of ["run_started", "run_ended"]) {
      es.addEventListener(kind, () => {
        if (view.planId !== null) load();
      });
    }
    es.addEventListener("open", () => {
      if (view.planId !== null) load();
    });
  }

  function botName(id) {
    const b = state.bots.get(id) || state.bots.get(Number(id));
    return b ? b.name : "Bot " + id;
  }

  function clock(ms) {
    const d = new Date(ms);
    return isNaN(d.getTime()) ? "" : d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  }

  function took(ms) {
    const s = Math.round(ms / 1000);
    if (s < 60) return s + "s";
    const m = Math.floor(s / 60);
    return m < 60 ? m + "m " + (s % 60) + "s" : Math.floor(m / 60) + "h " + (m % 60) + "m";
  }

  function row(t) {
    const li = el("li", "job-turn");
    li.dataset.turnId = t.id;
    li.dataset.status = t.state;
    const head = el("div", "job-turn-head");
    head.appendChild(el("span", "job-turn-bot", botName(t.bot_id)));
    if (t.ticket_id !== null && t.ticket_id !== undefined) {
      const tk = view.tickets.get(String(t.ticket_id));
      head.appendChild(el("span", "job-turn-ticket", tk ? String(tk.number).padStart(2, "0") + " " + tk.title : "ticket " + t.ticket_id));
    }
    const when = clock(t.started_at) + (t.ended_at ? " · " + took(t.ended_at - t.started_at) : "");
    head.appendChild(el("span", "job-turn-time hint", when));
    const word = el("span", "badge job-turn-state", WORD[t.state] || String(t.state));
    head.appendChild(word);
    li.appendChild(head);
    if (t.state === "stopped") {
      const by = t.stopped_by !== null && t.stopped_by !== undefined ? "You stopped it" : "Stopped";
      const at = t.stopped_while ? ", while: " + t.stopped_while : "";
      li.appendChild(el("p", "job-turn-stop hint", by + at));
    }
    return li;
  }

  function draw() {
    if (!box) return;
    box.hidden = view.planId === null;
    list.replaceChildren();
    const turns = view.turns || [];
    for (const t of turns) list.appendChild(row(t));
    empty.hidden = view.turns === null || turns.length > 0;
  }

  return { mount, open, close, listen, tickets };
};
