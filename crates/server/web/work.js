// Troupe web page: work — the open conversation's jobs (plans), what each of its Bots is doing
// on them (work items, with their place in the queue), and, in a Bot↔Bot direct a delegation
// opened, the delegations as read-only records (who asked whom, what, and the answer).
// app.js creates it with the shared state and helpers it needs; it refetches on the live
// events plan_changed, work_item_changed and delegation_changed.
"use strict";

window.troupeWork = function (ctx) {
  const { $, el, state, api, showError, loadSessions, selectSession } = ctx;

  const JOB_STATUS = { active: "Active", done: "Done", parked: "Parked" };
  const DELEGATION_STATE = { open: "Open", replied: "Replied", cancelled: "Cancelled" };
  const EXPECTS = { answer: "an answer", deliverable: "a deliverable", review: "a review" };

  // What was last read for the open conversation (`gen` is state.gen when it was read).
  const view = { gen: -1, jobs: [], items: [], delegations: [], loaded: false };
  const planNames = new Map(); // plan id -> name, for delegations on jobs homed elsewhere
  let panelOpen = false; // the person's choice, kept across conversations

  // The panel's two kinds, Work and One question (job_kinds.js).
  const kinds = window.troupeJobKinds({ el, isPhone: ctx.isPhone, shownJob: ctx.shownJob });

  const isBotDirect = (s) => !!s && s.kind === "bot_direct";
  const enc = encodeURIComponent;

  function botName(id) {
    const b = state.bots.get(id);
    if (b) return b.name;
    const m = state.current && (state.current.members || []).find((x) => x.bot_id === id);
    return m ? m.name : "Bot " + id;
  }

  // The Bots whose work is shown: the conversation's, and those its delegations name.
  function botsHere() {
    const s = state.current;
    const ids = new Set(s.bot_ids || []);
    for (const m of s.members || []) ids.add(m.bot_id);
    for (const d of view.delegations) {
      ids.add(d.from_bot_id);
      ids.add(d.to_bot_id);
    }
    return [...ids];
  }

  // ---------- reading ----------

  // Called by selectSession once the transcript is cleared.
  function enter() {
    view.gen = state.gen;
    view.jobs = [];
    view.items = [];
    view.delegations = [];
    view.loaded = false;
    lastPanel = "";
    lastRecords = "";
    showError($("#work-error"), null);
    $("#work-toggle").hidden = !state.current;
    showPanel(panelOpen);
    render();
    schedule();
  }

  // Events come in bursts (a reconnect replays the backlog): refetches fold into one.
  let timer = null;
  function schedule() {
    if (timer !== null) return;
    timer = setTimeout(() => {
      timer = null;
      refresh();
    }, 60);
  }

  const refresh = window.troupeHttp.reloader(async () => {
    if (state.current) await load();
  });

  async function load() {
    const gen = state.gen;
    const sid = state.current.id;
    let jobs, dels;
    try {
      [jobs, dels] = await Promise.all([
        api("GET", "/v1/tasks?session_id=" + enc(sid)),
        api("GET", "/v1/sessions/" + enc(sid) + "/delegations"),
      ]);
    } catch (e) {
      if (gen === state.gen) showError($("#work-error"), e);
      return;
    }
    if (gen !== state.gen) return;
    view.delegations = dels || [];
    const lists = await Promise.all(
      botsHere().map((id) => api("GET", "/v1/bots/" + enc(id) + "/work-items").catch(() => []))
    );
    const planIds = new Set((jobs || []).map((j) => j.id));
    for (const d of view.delegations) planIds.add(d.plan_id);
    for (const j of jobs || []) planNames.set(j.id, j.name);
    for (const d of view.delegations) {
      if (planNames.has(d.plan_id)) continue;
      try {
        const p = await api("GET", "/v1/tasks/" + enc(d.plan_id));
        planNames.set(p.id, p.name);
      } catch (e) {
        // The record still shows, without its job's name.
      }
    }
    if (gen !== state.gen) return;
    // A Bot's items here: its desk in this conversation and its work on the jobs shown.
    const items = [];
    for (const list of lists) {
      for (const it of list || []) {
        const mine = it.session_id === sid || (it.plan_id !== null && it.plan_id !== undefined && planIds.has(it.plan_id));
        if (mine) items.push(it);
      }
    }
    view.jobs = jobs || [];
    view.items = items;
    view.loaded = true;
    showError($("#work-error"), null);
    render();
  }

  // ---------- showing ----------

  function render() {
    renderToggle();
    if (!$("#work-panel").hidden) renderPanel();
    renderRecords();
  }

  function renderToggle() {
    const btn = $("#work-toggle");
    const n = view.jobs.length;
    btn.textContent = n ? "Jobs · " + n : "Jobs";
    btn.title = n ? n + (n === 1 ? " job" : " jobs") + " in this conversation" : "No jobs in this conversation yet";
  }

  function showPanel(show) {
    panelOpen = show;
    $("#work-panel").hidden = !show;
    $("#work-toggle").setAttribute("aria-expanded", String(show));
    lastPanel = "";
    if (show) {
      kinds.reset();
      renderPanel();
    }
  }

  function stateText(it) {
    switch (it.state) {
      case "running":
        return "Working";
      case "queued":
        return it.queue_position ? "Queued, at position " + it.queue_position : "Queued";
      case "idle":
        return "Idle";
      case "waiting": {
        const w = it.waiting_on;
        if (w && w.kind === "delegation") {
          const d = view.delegations.find((x) => x.id === w.delegation_id);
          return d ? "Waiting on " + botName(d.to_bot_id) + "'s answer" : "Waiting on a delegation";
        }
        if (w && w.kind === "user") return "Waiting on you";
        return "Waiting";
      }
      case "blocked":
        return "Blocked: waiting on you";
      case "needs_attention":
        return "Needs attention";
      case "closed":
        return "Closed";
      default:
        return String(it.state);
    }
  }

  function itemLabel(it) {
    if (it.mode === "desk") return "Desk here";
    const name = it.plan_name || planNames.get(it.plan_id) || "job " + it.plan_id;
    return "\u201c" + name + "\u201d";
  }

  let lastPanel = "";
  function renderPanel() {
    const shown = ctx.shownJob ? ctx.shownJob() : null;
    const key = JSON.stringify([view.loaded, view.jobs, view.items, view.delegations, botsHere().map(botName), shown, ctx.isPhone()]);
    if (key === lastPanel) return;
    lastPanel = key;

    const jobs = $("#jobs-list");
    kinds.draw($("#job-kinds"), jobs, view.jobs, jobRow);
    $("#jobs-empty").hidden = !view.loaded || view.jobs.length > 0;

    const work = $("#bot-work");
    work.replaceChildren();
    for (const id of botsHere()) {
      const li = el("li", "bot-work-row");
      li.dataset.botId = id;
      li.appendChild(el("span", "member-name", botName(id)));
      const mine = view.items.filter((it) => it.bot_id === id);
      const open = mine.filter((it) => it.state !== "closed");
      const ul = el("ul", "work-items");
      for (const it of open) ul.appendChild(itemRow(it));
      if (!open.length) ul.appendChild(el("li", "hint", view.loaded ? "Nothing here yet." : "Loading…"));
      li.appendChild(ul);
      const closed = mine.length - open.length;
      if (closed) li.appendChild(el("p", "hint", closed + (closed === 1 ? " closed item" : " closed items")));
      work.appendChild(li);
    }
  }

  function jobRow(j) {
    const li = el("li", "job-row");
    li.dataset.planId = j.id;
    li.dataset.status = j.status;
    const who = el("div", "job-who");
    who.appendChild(el("span", "job-name", j.name));
    const st = el("span", "badge job-status", JOB_STATUS[j.status] || String(j.status));
    st.dataset.status = j.status;
    who.appendChild(st);
    if (j.dormant) {
      const d = el("span", "badge dormant", "Dormant");
      d.title = "Out of the Bots' choices until you write about it or edit it";
      who.appendChild(d);
    }
    // The job view (deliverables.js) opens from here.
    if (ctx.jobButton) who.appendChild(ctx.jobButton(j));
    li.appendChild(who);
    // Its delegations, each a link to the Bot↔Bot direct that records it.
    for (const d of view.delegations.filter((x) => x.plan_id === j.id)) {
      const row = el("div", "job-delegation hint");
      row.appendChild(
        el(
          "span",
          null,
          botName(d.from_bot_id) + " asked " + botName(d.to_bot_id) + " · " + (DELEGATION_STATE[d.state] || d.state)
        )
      );
      if (!state.current || d.pair_session_id !== state.current.id) {
        const btn = el("button", "secondary open-thread", "Read");
        btn.type = "button";
        btn.setAttribute("aria-label", "Read the thread between " + botName(d.from_bot_id) + " and " + botName(d.to_bot_id));
        btn.addEventListener("click", () => openThread(d.pair_session_id));
        row.appendChild(btn);
      }
      li.appendChild(row);
    }
    return li;
  }

  function itemRow(it) {
    const li = el("li", "work-item");
    li.dataset.id = it.id;
    li.dataset.state = it.state;
    li.dataset.mode = it.mode;
    li.appendChild(el("span", "work-item-name", itemLabel(it)));
    li.appendChild(el("span", "work-item-state", stateText(it)));
    return li;
  }

  async function openThread(id) {
    try {
      if (!state.sessions.some((s) => s.id === id)) await loadSessions();
      await selectSession(id);
    } catch (e) {
      showError($("#work-error"), e);
    }
  }

  // ---------- delegation records (a Bot↔Bot direct) ----------

  let lastRecords = "";
  function renderRecords() {
    const s = state.current;
    const box = $("#delegation-records");
    const mine = isBotDirect(s) ? view.delegations.filter((d) => d.pair_session_id === s.id) : [];
    const show = isBotDirect(s) && (s.opened_via === "delegation" || mine.length > 0);
    box.hidden = !show;
    if (!show) return;
    const key = JSON.stringify([s.id, view.loaded, mine, mine.map((d) => planNames.get(d.plan_id))]);
    if (key === lastRecords) return;
    lastRecords = key;
    const list = $("#delegation-list");
    list.replaceChildren();
    for (const d of mine) list.appendChild(record(d));
    $("#delegations-empty").hidden = !view.loaded || mine.length > 0;
  }

  function fmtTime(v) {
    if (v === null || v === undefined) return "";
    const d = new Date(v < 1e12 ? v * 1000 : v);
    return isNaN(d.getTime()) ? "" : d.toLocaleString();
  }

  function resultText(r) {
    if (r === null || r === undefined) return "";
    if (typeof r === "string") return r;
    if (typeof r.text === "string") return r.text;
    return JSON.stringify(r);
  }

  function record(d) {
    const from = botName(d.from_bot_id);
    const to = botName(d.to_bot_id);
    const li = el("li", "delegation");
    li.dataset.id = d.id;
    li.dataset.state = d.state;
    li.dataset.testid = "delegation";
    const head = el("div", "delegation-head");
    head.appendChild(el("span", "delegation-who", from + " asked " + to));
    head.appendChild(el("span", "badge expects", "expects " + (EXPECTS[d.expects] || d.expects)));
    const st = el("span", "badge delegation-state", DELEGATION_STATE[d.state] || String(d.state));
    st.dataset.state = d.state;
    head.appendChild(st);
    li.appendChild(head);
    const job = planNames.get(d.plan_id);
    if (job) li.appendChild(el("p", "delegation-job hint", "Job: \u201c" + job + "\u201d"));
    const ask = el("p", "delegation-ask", d.ask);
    if (d.created_at) ask.title = fmtTime(d.created_at);
    li.appendChild(ask);
    if (d.state === "replied") {
      const res = el("div", "delegation-result");
      res.appendChild(el("p", "hint", to + " replied" + (d.replied_at ? " · " + fmtTime(d.replied_at) : "")));
      res.appendChild(el("p", "delegation-answer", resultText(d.result)));
      li.appendChild(res);
    } else if (d.state === "cancelled") {
      li.appendChild(el("p", "hint", "Cancelled: it will not be answered."));
    } else {
      li.appendChild(el("p", "delegation-wait hint", d.waiting ? from + " waits for the answer." : "Not answered yet; " + from + " goes on meanwhile."));
    }
    return li;
  }

  // ---------- events ----------

  function listen(es, live) {
    for (const kind of [
      "plan_changed",
      "work_item_changed",
      "delegation_changed",
      "member_added",
      "member_removed",
      "run_started",
      "run_ended",
      "open",
    ]) {
      es.addEventListener(kind, () => {
        if (live()) schedule();
      });
    }
  }

  function bind() {
    $("#work-toggle").addEventListener("click", () => showPanel($("#work-panel").hidden));
    $("#work-close").addEventListener("click", () => showPanel(false));
  }

  return { bind, enter, listen, refresh: schedule, showPanel };
};
