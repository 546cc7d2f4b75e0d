// Troupe web page: stops (holds) — the composer Stop in a direct, the stop menu beside Send
// in a group, "Stop everything" in the header, the Stops panel (each stop in force, with Lift)
// and the dropped jobs above the conversation list. A stop is a hold the daemon keeps until
// the person lifts it; the page writes no line about it. Holds are re-read on `hold_upsert`,
// which arrives on the global event stream (GET /v1/events without session_id) and on the
// open conversation's. With the daemon unreachable every stop and Lift button is disabled.
// app.js creates it with the shared state and helpers it needs.
"use strict";

window.troupeHolds = function (ctx) {
  const { $, el, state, api, showError, sessionTitle, isPhone, setRunning, refreshView } = ctx;

  // A tap on Stop this soon after a send is the send's double tap, not a stop (STOP-10).
  const SEND_GUARD_MS = 600;
  const REFUSED = "That did not work; try again";
  // A member in one of these states has work going in the conversation.
  const WORKING = new Set(["running", "thinking", "waiting_ask"]);

  const view = {
    holds: [], // holds in force, newest first (GET /v1/holds)
    loaded: false,
    online: true,
    lastSend: -Infinity, // performance.now() of the last send
    menuOpen: false,
    jobs: new Map(), // plan id -> {id, name, home_session_id}: jobs of the Bots at work here
    jobsGen: -1,
  };

  const enc = encodeURIComponent;
  const isGroup = (s) => !!s && s.kind === "group";
  const isBotDirect = (s) => !!s && s.kind === "bot_direct";
  const isDirect = (s) => !!s && !isGroup(s) && !isBotDirect(s);
  const quote = (t) => "\u201c" + t + "\u201d";

  function botName(id) {
    const b = state.bots.get(id);
    if (b) return b.name;
    for (const s of [state.current, ...state.sessions]) {
      const m = s && (s.members || []).find((x) => x.bot_id === id);
      if (m) return m.name;
    }
    return "Bot " + id;
  }

  function conversationName(id) {
    const s = state.sessions.find((x) => x.id === id) || (state.current && state.current.id === id ? state.current : null);
    return s ? quote(sessionTitle(s)) : "conversation " + id;
  }

  function fmtTime(v) {
    if (v === null || v === undefined) return "";
    const d = new Date(v < 1e12 ? v * 1000 : v);
    return isNaN(d.getTime()) ? "" : d.toLocaleString();
  }

  // ---------- reading ----------

  let timer = null;
  function schedule() {
    if (timer !== null) return;
    timer = setTimeout(() => {
      timer = null;
      reload();
    }, 50);
  }

  const reload = window.troupeHttp.reloader(async () => {
    try {
      view.holds = (await api("GET", "/v1/holds")) || [];
      view.loaded = true;
      setOnline(true);
    } catch (e) {
      if (e.code === "network") setOnline(false);
      return;
    }
    render();
    if (ctx.onHolds) ctx.onHolds();
  });

  // A Bot a hold in force keeps from working in the open conversation (its own, the
  // conversation's or everything's), for its chip.
  function isHeld(bot) {
    const s = state.current;
    return botHeld(bot) || (!!s && sessionHeld(s.id));
  }

  function setOnline(on) {
    if (view.online === on) return;
    view.online = on;
    render();
  }

  // The jobs the Bots at work in this group are on (their work items with a live turn here).
  async function loadJobs() {
    const s = state.current;
    if (!isGroup(s)) return;
    const gen = state.gen;
    const here = new Map();
    let homes = [];
    try {
      homes = (await api("GET", "/v1/tasks?session_id=" + enc(s.id))) || [];
    } catch (e) {
      // Without the conversation's jobs, a job is still offered, not judged covered by its home.
    }
    const turns = new Map(working().map((w) => [w.bot_id, w.turn_id]));
    const lists = await Promise.all(
      [...turns.keys()].map((id) => api("GET", "/v1/bots/" + enc(id) + "/work-items").catch(() => []))
    );
    if (gen !== state.gen) return;
    for (const list of lists) {
      for (const it of list || []) {
        if (it.plan_id === null || it.plan_id === undefined || it.state !== "running") continue;
        const turn = turns.get(it.bot_id);
        const live = turn !== null && turn !== undefined && it.turn_id === turn;
        const homed = homes.find((j) => j.id === it.plan_id);
        if (!live && !homed) continue;
        here.set(it.plan_id, {
          id: it.plan_id,
          name: it.plan_name || (homed && homed.name) || "job " + it.plan_id,
          home_session_id: homed ? homed.home_session_id : null,
        });
      }
    }
    view.jobs = here;
    view.jobsGen = gen;
    renderMenu();
  }

  // ---------- what is held ----------

  const inForce = () => view.holds.filter((h) => h.status === "in_force");
  const held = (pred) => inForce().some((h) => h.scope && (h.scope.kind === "everything" || pred(h.scope)));

  function sessionHeld(sid) {
    return held((sc) => sc.kind === "session" && sc.session_id === sid);
  }
  function botHeld(bot) {
    return held((sc) => sc.kind === "bot" && sc.bot_id === bot);
  }
  function jobHeld(job) {
    return held(
      (sc) =>
        (sc.kind === "plan" && sc.plan_id === job.id) ||
        (sc.kind === "session" && job.home_session_id !== null && sc.session_id === job.home_session_id)
    );
  }

  // The Bots at work in the open group, and in the Bot↔Bot directs opened from it.
  function working() {
    const s = state.current;
    if (!isGroup(s)) return [];
    const out = new Map();
    for (const m of s.members || []) {
      if (WORKING.has(m.state)) out.set(m.bot_id, { bot_id: m.bot_id, turn_id: m.turn_id });
    }
    for (const d of state.sessions) {
      if (!isBotDirect(d) || d.origin_session_id !== s.id) continue;
      for (const m of d.members || []) {
        if (WORKING.has(m.state) && !out.has(m.bot_id)) out.set(m.bot_id, { bot_id: m.bot_id, turn_id: null });
      }
    }
    return [...out.values()];
  }

  // The stop menu's choices, minus what a hold in force already covers (HOLD-M1).
  function choices() {
    const s = state.current;
    if (!isGroup(s)) return [];
    const out = [];
    if (!sessionHeld(s.id)) {
      out.push({ label: "Stop the work in this group", scope: { kind: "session", session_id: s.id } });
    }
    for (const w of working()) {
      if (botHeld(w.bot_id)) continue;
      out.push({ label: "Stop all of " + botName(w.bot_id) + "'s work", scope: { kind: "bot", bot_id: w.bot_id } });
    }
    const jobs = view.jobsGen === state.gen ? [...view.jobs.values()].filter((j) => !jobHeld(j)) : [];
    for (const j of jobs) {
      out.push({
        label: jobs.length === 1 ? "Stop this job" : "Stop the job " + quote(j.name),
        scope: { kind: "plan", task_id: j.id },
      });
    }
    if (!held(() => false)) out.push({ label: "Stop every Bot", scope: { kind: "everything" } });
    return out;
  }

  // ---------- the composer: Stop in a direct, the menu in a group ----------

  function renderComposer() {
    const s = state.current;
    const stop = $("#stop");
    const toggle = $("#stop-menu-toggle");
    const send = $("#send");
    const direct = isDirect(s) && state.running;
    stop.hidden = !direct;
    stop.disabled = !view.online;
    // At phone width with nothing typed, Stop takes Send's place.
    send.hidden = direct && isPhone() && !$("#composer").value.trim();
    const menu = isGroup(s) && working().length > 0 && choices().length > 0;
    toggle.hidden = !menu;
    toggle.disabled = !view.online;
    if (!menu) closeMenu();
    else renderMenu();
    if (!direct) showError($("#stop-error"), null);
  }

  function noteSend() {
    view.lastSend = performance.now();
  }

  async function composerStop() {
    const s = state.current;
    if (!isDirect(s) || !view.online) return;
    if (performance.now() - view.lastSend < SEND_GUARD_MS) return; // the send's double tap
    const gen = state.gen;
    const btn = $("#stop");
    showError($("#stop-error"), null);
    btn.disabled = true;
    try {
      await api("POST", "/v1/turns/stop", { session_id: s.id });
      schedule();
    } catch (e) {
      if (gen !== state.gen) return;
      if (e.code === "not_running") {
        setRunning(false); // it ended meanwhile: nothing to stop
      } else {
        if (e.code === "network") setOnline(false);
        showError($("#stop-error"), REFUSED);
      }
    } finally {
      btn.disabled = !view.online;
    }
  }

  function openMenu() {
    view.menuOpen = true;
    $("#stop-menu-toggle").setAttribute("aria-expanded", "true");
    showError($("#stop-menu-error"), null);
    renderMenu();
    schedule();
    loadJobs();
  }

  function closeMenu() {
    view.menuOpen = false;
    lastMenu = "";
    $("#stop-menu").hidden = true;
    $("#stop-menu-toggle").setAttribute("aria-expanded", "false");
  }

  let lastMenu = "";
  function renderMenu() {
    const box = $("#stop-menu");
    if (!view.menuOpen) {
      box.hidden = true;
      lastMenu = "";
      return;
    }
    const list = choices();
    const key = JSON.stringify([list, view.online]);
    box.hidden = false;
    if (key === lastMenu) return;
    lastMenu = key;
    const ul = $("#stop-menu-list");
    ul.replaceChildren();
    for (const c of list) {
      const li = el("li");
      li.setAttribute("role", "none");
      const b = el("button", "stop-choice", c.label);
      b.type = "button";
      b.setAttribute("role", "menuitem");
      b.dataset.kind = c.scope.kind;
      if (c.scope.bot_id !== undefined) b.dataset.botId = c.scope.bot_id;
      b.disabled = !view.online;
      b.addEventListener("click", () => menuStop(b, c.scope));
      li.appendChild(b);
      ul.appendChild(li);
    }
    if (!list.length) ul.appendChild(el("li", "hint", "Everything here is stopped already."));
  }

  async function menuStop(btn, scope) {
    const s = state.current;
    if (!s || !view.online) return;
    const gen = state.gen;
    showError($("#stop-menu-error"), null);
    btn.disabled = true;
    try {
      const h = await api("POST", "/v1/holds", { scope, session_id: s.id });
      if (gen !== state.gen) return;
      if (h && !view.holds.some((x) => x.id === h.id)) view.holds.unshift(h);
      closeMenu();
      render();
      schedule();
      refreshView();
    } catch (e) {
      if (gen !== state.gen) return;
      if (e.code === "network") setOnline(false);
      showError($("#stop-menu-error"), REFUSED);
      btn.disabled = !view.online;
    }
  }

  // ---------- Stop everything (the header) ----------

  async function stopEverything() {
    if (!view.online) return;
    const btn = $("#stop-everything");
    showError($("#stop-everything-error"), null);
    btn.disabled = true;
    try {
      const h = await api("POST", "/v1/holds", { scope: { kind: "everything" } });
      if (h && !view.holds.some((x) => x.id === h.id)) view.holds.unshift(h);
      // The Stops panel opens on it: the press shows what it did and where to lift it.
      $("#stops-details").open = true;
      render();
      schedule();
      refreshView();
    } catch (e) {
      if (e.code === "network") setOnline(false);
      showError($("#stop-everything-error"), REFUSED);
    } finally {
      btn.disabled = !view.online;
    }
  }

  // ---------- the Stops panel and the dropped jobs ----------

  function scopeText(h) {
    const sc = h.scope || {};
    const job = h.plan_title ? quote(h.plan_title) : "job " + (sc.plan_id !== undefined ? sc.plan_id : "?");
    switch (sc.kind) {
      case "everything":
        return "Every Bot's work";
      case "bot":
        return "All of " + botName(sc.bot_id) + "'s work";
      case "session":
        return "The work in " + conversationName(sc.session_id);
      case "plan":
        return "The job " + job;
      case "ticket":
        return "A ticket of a job";
      case "bot_plan":
        return botName(sc.bot_id) + "'s work on " + job;
      case "turn":
        return botName(sc.bot_id) + "'s turn in " + conversationName(sc.session_id);
      default:
        return String(sc.kind || "a stop");
    }
  }

  function sourceText(h) {
    if (h.source === "user_text") return "You said stop";
    if (h.source === "migration") return "Kept by the app";
    if (h.composer_stop) return "You pressed Stop";
    if (h.session_id !== null && h.session_id !== undefined) return "You chose it from the stop menu in " + conversationName(h.session_id);
    if (h.scope && h.scope.kind === "everything") return "You pressed Stop everything";
    return "You pressed a stop button";
  }

  function effectText(h) {
    const e = h.effect || {};
    const turns = e.stopped_turns || [];
    const parts = [];
    if (turns.length) {
      parts.push("Stopped " + turns.map((t) => botName(t.bot_id) + " in " + conversationName(t.session_id)).join(", "));
    } else {
      parts.push("Nothing was running");
    }
    const parked = (e.plans_parked || []).length;
    if (parked) parts.push(parked + (parked === 1 ? " job parked" : " jobs parked"));
    const cbs = (e.check_backs_set_aside || []).length;
    if (cbs) parts.push(cbs + (cbs === 1 ? " check-back set aside" : " check-backs set aside"));
    return parts.join(" · ");
  }

  function liftButton(h, cls, err) {
    const b = el("button", "secondary " + cls, "Lift");
    b.type = "button";
    b.disabled = !view.online;
    b.setAttribute("aria-label", "Lift: " + scopeText(h));
    b.addEventListener("click", () => lift(h, b, err));
    return b;
  }

  async function lift(h, btn, err) {
    if (!view.online) return;
    showError(err, null);
    btn.disabled = true;
    try {
      const after = await api("POST", "/v1/holds/" + enc(h.id) + "/lift", {});
      if (after && after.status !== "in_force") view.holds = view.holds.filter((x) => x.id !== h.id);
      render();
      schedule();
      refreshView();
    } catch (e) {
      if (e.code === "network") setOnline(false);
      showError(err, REFUSED);
      btn.disabled = !view.online;
    }
  }

  let lastPanel = "";
  function renderPanel() {
    const list = inForce();
    const key = JSON.stringify([list, view.online, view.loaded, state.sessions.map((s) => [s.id, sessionTitle(s)])]);
    if (key === lastPanel) return;
    lastPanel = key;
    $("#stops-count").textContent = list.length ? String(list.length) : "";
    const ul = $("#stops-list");
    ul.replaceChildren();
    for (const h of list) {
      const li = el("li", "stop-row");
      li.dataset.holdId = h.id;
      li.dataset.kind = h.scope ? h.scope.kind : "";
      const head = el("div", "stop-head");
      head.appendChild(el("span", "stop-scope", scopeText(h)));
      if (h.cancel) head.appendChild(el("span", "badge dropped", "Dropped"));
      li.appendChild(head);
      if (h.plan_title) li.appendChild(el("p", "stop-job hint", "Job: " + quote(h.plan_title)));
      li.appendChild(el("p", "stop-meta hint", sourceText(h) + " · " + fmtTime(h.created_at)));
      li.appendChild(el("p", "stop-effect hint", effectText(h)));
      const err = el("p", "error stop-error");
      err.setAttribute("role", "alert");
      err.hidden = true;
      const row = el("div", "stop-buttons");
      row.appendChild(liftButton(h, "stop-lift", err));
      li.appendChild(row);
      li.appendChild(err);
      ul.appendChild(li);
    }
    $("#stops-empty").hidden = !view.loaded || list.length > 0;
  }

  let lastDropped = "";
  function renderDropped() {
    const list = inForce().filter((h) => h.cancel);
    const key = JSON.stringify([list, view.online, state.sessions.map((s) => [s.id, sessionTitle(s)])]);
    if (key === lastDropped) return;
    lastDropped = key;
    const ul = $("#dropped");
    ul.replaceChildren();
    ul.hidden = !list.length;
    for (const h of list) {
      const li = el("li", "dropped-row");
      li.dataset.holdId = h.id;
      const who = el("div", "dropped-who");
      who.appendChild(el("span", "dropped-scope", scopeText(h)));
      who.appendChild(el("span", "badge dropped", "Dropped"));
      li.appendChild(who);
      li.appendChild(el("span", "dropped-time hint", fmtTime(h.created_at)));
      const err = el("p", "error stop-error");
      err.setAttribute("role", "alert");
      err.hidden = true;
      li.appendChild(liftButton(h, "dropped-lift", err));
      li.appendChild(err);
      ul.appendChild(li);
    }
  }

  function render() {
    renderPanel();
    renderDropped();
    renderComposer();
    $("#stop-everything").disabled = !view.online;
    document.body.classList.toggle("daemon-offline", !view.online);
  }

  // ---------- events ----------

  // The global stream: hold_upsert for every hold made, changed or lifted.
  let global = null;
  function openGlobal() {
    if (global) return;
    global = window.troupeHttp.globalEvents();
    global.addEventListener("hold_upsert", schedule);
    global.addEventListener("open", () => {
      setOnline(true);
      schedule();
    });
    global.addEventListener("error", () => {
      // The browser reconnects by itself (with Last-Event-ID); until then, nothing can be pressed.
      if (global.readyState !== EventSource.OPEN) setOnline(false);
    });
  }

  // The open conversation's stream (app.js): its own copy of hold_upsert, and its turns.
  function listen(es, live) {
    es.addEventListener("hold_upsert", () => {
      if (live()) schedule();
    });
    for (const kind of ["run_started", "run_ended", "member_added", "member_removed"]) {
      es.addEventListener(kind, () => {
        if (!live()) return;
        renderComposer();
        if (view.menuOpen) loadJobs();
      });
    }
  }

  // Called by selectSession once the transcript is cleared.
  function enter() {
    closeMenu();
    view.jobs = new Map();
    view.jobsGen = -1;
    showError($("#stop-error"), null);
    showError($("#stop-menu-error"), null);
    renderComposer();
  }

  function bind() {
    $("#stop").addEventListener("click", composerStop);
    $("#stop-menu-toggle").addEventListener("click", () => (view.menuOpen ? closeMenu() : openMenu()));
    $("#stop-everything").addEventListener("click", stopEverything);
    $("#composer").addEventListener("input", renderComposer);
    window.addEventListener("resize", renderComposer);
    document.addEventListener("keydown", (e) => {
      if (e.key === "Escape" && view.menuOpen) closeMenu();
    });
    document.addEventListener("click", (e) => {
      if (!view.menuOpen) return;
      if (e.target.closest && (e.target.closest("#stop-menu") || e.target.closest("#stop-menu-toggle"))) return;
      closeMenu();
    });
  }

  function start() {
    render();
    openGlobal();
    reload();
  }

  // What a stop covers and who made it, as the Stops panel says it (the job view lists them too).
  const describe = (h) => ({ scope: scopeText(h), source: sourceText(h) });

  return { bind, start, enter, listen, renderComposer, noteSend, reload: schedule, isHeld, describe };
};
