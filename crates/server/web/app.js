// Troupe web page: plain JavaScript, no build step, no framework.
// All text coming from the API is written with textContent, never innerHTML.
"use strict";

(function () {
  const $ = (sel) => document.querySelector(sel);
  const { api } = window.troupeHttp; // http.js

  const state = {
    bots: new Map(), // id -> Bot
    sessions: [], // [Session]
    current: null, // current Session
    gen: 0, // bumped on every session switch; stale async work checks it
    es: null, // EventSource of the current session
    msgEls: new Map(), // message id -> element
    lastId: 0, // highest message id seen in the current session
    streams: new Map(), // turn id -> {el, text, msgId}: the bubble text is streaming into
    // Live deltas and stored events travel separately, so a delta can arrive after the
    // stored message that contains it. turn id -> {body, seen}: the last stored reply of the
    // turn and the streamed text already accounted for; late deltas that continue it are
    // dropped instead of starting a new bubble.
    closed: new Map(),
    ended: new Set(), // turn ids whose run_ended was seen: their late deltas are dropped
    // turn id -> bubble kept when its turn ended before the stored reply arrived (a stop
    // records the end first): the stored reply takes that bubble over instead of adding one.
    orphans: new Map(),
    turnBots: new Map(), // turn id -> the Bot whose turn it is, from the turns read once
    turnEnds: new Map(), // turn id -> when it ended (or began), to place a block with no reply
    turnTimes: new Map(), // turn id -> {started_at, ended_at}, for its last reply's stamp
    running: false,
    liveTurns: new Set(), // ids of the turns heard starting and not yet ending here
    activeTurn: null,
    workflow: null, // the current session's WorkflowView (GET /v1/sessions/{id}/workflow)
    wfLoading: false, // a workflow refresh is in flight
    wfAgain: false, // another refresh was asked for meanwhile
    lead: null, // the open group's LeadView (GET /v1/sessions/{id}/lead), read by group.js
    defaultRole: null, // the `default` role's endpoint, offered to a new Bot
    botKindChosen: false, // the person picked the new Bot's endpoint kind themselves
  };

  // The workflow header (workflow.js): Plan, Light Loop, BlueprintLoop, Continue and Abandon.
  const wf = window.troupeWorkflow({
    $,
    state,
    api,
    showError,
    renderPaused,
    loadSessions,
    selectSession,
    fetchNewMessages,
  });

  // The commands a turn ran, under its last reply (commands.js).
  // A turn's speaker, once commands.js knows whose turn it is.
  const speakerOfTurn = (turnId) => botLabel(state.bots.get(state.turnBots.get(String(turnId))));
  const cmd = window.troupeCommands({ $, el, state, api, scrollToEnd, speakerOfTurn });
  // activity.js: what working Bots do, and a group's paused members with their Continue.
  const act = window.troupeActivity({ $, el, state, api, refreshView: () => grp.refreshView() });

  // The Bots panel (bots.js): the list, the new-Bot form, the new conversation's Bot picker.
  const bots = window.troupeBots({
    $,
    el,
    state,
    api,
    showError,
    renderSessions: () => renderSessions(),
    renderHeader: () => renderHeader(),
    // Each Bot's "Memories" (bot_memories.js).
    memories: window.troupeBotMemories({ el, api }),
    // Each Bot's "Skills" and the Project skills card (bot_skills.js).
    skills: window.troupeBotSkills({ el, api }),
    // Each Bot's "Routines": its work on a schedule (bot_routines.js).
    routines: window.troupeBotRoutines({ el, api }),
  });

  // Stops (holds.js), created below; group.js tells it when members change.
  let hold = null;

  // Groups (group.js): the list with Bot↔Bot directs, members, the lead, mentions, asks.
  const grp = window.troupeGroup({
    $,
    el,
    state,
    api,
    showError,
    loadSessions,
    selectSession,
    setRunning,
    sessionTitle,
    scriptedSuffix: bots.scriptedSuffix,
    upsertMessage,
    onMembers: () => {
      if (hold) hold.renderComposer();
      act.renderPauses();
    },
    isHeld: (bot) => !!hold && hold.isHeld(bot),
  });

  // Work (work.js): the conversation's jobs, its Bots' work items, delegation records.
  // Each job row gets the job view's Open button (deliverables.js, created just below).
  let deliv = null;
  const work = window.troupeWork({
    $, el, state, api, showError, loadSessions, selectSession,
    jobButton: (j) => deliv.jobButton(j),
    // The job on screen is never folded away as one question (PLAN-U1).
    shownJob: () => (deliv ? deliv.shown() : null),
    isPhone: () => isPhone(),
  });

  // A job's view (deliverables.js): tickets, hand-overs, checks, reviews, the large-job banner.
  // Its work log (worklog.js), "What you asked for" (requirements.js), "Checks from what you
  // said" (words_checks.js), "Turns on this job" (job_turns.js) and its stops (job_holds.js)
  // are sections of it.
  deliv = window.troupeDeliverables({
    $, el, state, api, showError, showJobs: (on) => work.showPanel(on),
    extras: [
      // "N need you" in the title row, a press back to the whole job (job_need.js).
      window.troupeJobNeed({ el, unpick: () => deliv.unpick() }),
      // On a narrow screen, a Tickets / Plan / Trace switch (job_tabs.js).
      window.troupeJobTabs({ el, unpick: () => deliv.unpick() }),
      // The job's plan with its edits, while no ticket is picked (job_plan.js).
      window.troupeJobPlan({ el, api }),
      // The tickets as a board of five columns, cards dragged between them (ticket_board.js).
      window.troupeTicketBoard({ el, api, pick: (id) => deliv.pick(id) }),
      // Who does what in this job and its engine, while no ticket is picked (job_who.js).
      window.troupeJobWho({ el, api, openEngine: (e) => eng.openOn(e) }),
      window.troupeWorkLog({ el, state, api }),
      window.troupeRequirements({ el, api, pickTicket: (id) => deliv.pick(id) }),
      window.troupeWordsChecks({ el, api }),
      window.troupeJobTurns({ el, state, api }),
      // "Last change …", Done / Parked / Dormant and what is left open (job_state.js).
      window.troupeJobState({ el, api }),
      // Stop this job / Stop every Bot and the stops over the job, with Lift (job_holds.js).
      window.troupeJobHolds({
        el,
        api,
        describe: (h) => hold.describe(h),
        holdsChanged: () => hold.reload(),
      }),
      // Its Bots' look back once delivered, with Undo per change (job_retro.js).
      window.troupeJobRetro({ el, state, api }),
    ],
  });

  // A line's Flow (line_flow.js): how it was read, where it was filed, whom it woke.
  const flow = window.troupeLineFlow({ el, api, openJob: (id) => deliv.open(id) });
  // A line's Edit and "Edited" (edit.js), the ceiling card's buttons (ceiling.js).
  const edit = window.troupeEdit({ $, el, api, upsertMessage, isReadOnly: () => grp.isReadOnly() });
  const ceiling = window.troupeCeiling({ el, api, upsertMessage, composer: () => $("#composer") });
  const unread = window.troupeUnread({ $, el, api, state, upsertMessage }); // unread.js: Take back, Insert now
  const cutoff = window.troupeCutoff({ el, api, state }); // cutoff.js: Continue under a cut-off turn

  // The Quality and Lessons pages (quality.js), opened from the sidebar.
  const qual = window.troupeQuality({ $, el, state, api });
  // Engines (engines.js): the sidebar fold, the default, and the conversation's engine.
  const eng = window.troupeEngines({ $, el, state, api, showError });
  window.troupeNotifications({ $, el, api, selectSession });
  // Runtime Boss (runtime_boss.js): its settings panel, and a boss's pushes waiting for a yes.
  const rboss = window.troupeRuntimeBoss({ $, el, api, state, selectSession, loadSessions });

  // Stops (holds.js): the composer Stop, a group's stop menu, Stop everything, the Stops panel.
  hold = window.troupeHolds({
    $,
    el,
    state,
    api,
    showError,
    sessionTitle,
    isPhone,
    setRunning,
    refreshView: () => grp.refreshView(),
    onHolds: () => grp.renderMembers(),
  });

  // MCP servers (mcp.js): the Bots panel's section, with the Add server form.
  const mcp = window.troupeMcp({ $, el, api, showError });

  function showError(el, err) {
    if (!err) {
      el.hidden = true;
      el.textContent = "";
      return;
    }
    el.textContent = typeof err === "string" ? err : err.message;
    el.hidden = false;
  }

  // ---------- small DOM helpers ----------

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = text;
    return e;
  }

  function fmtTime(v) {
    if (v === undefined || v === null || v === "") return "";
    const d = typeof v === "number" ? new Date(v < 1e12 ? v * 1000 : v) : new Date(v);
    if (isNaN(d.getTime())) return String(v);
    return d.toLocaleString();
  }

  function botLabel(bot) {
    if (!bot) return "unknown Bot";
    return bot.name;
  }

  function isPhone() {
    return window.matchMedia("(max-width: 719px)").matches; // as style.css's phone rules
  }


  // Bot ids the page found in a conversation and has read the Bots for since.
  const botsAskedFor = new Set();

  async function loadSessions() {
    const sessions = await api("GET", "/v1/sessions");
    state.sessions = sessions || [];
    // A Bot made since the page read its Bots (over the API, in another tab) would be named
    // "Bot 2" and speak as "unknown Bot": read the Bots again, once per such id.
    const unknown = state.sessions
      .flatMap((s) => s.bot_ids || [])
      .filter((id) => !state.bots.has(id) && !botsAskedFor.has(id));
    if (unknown.length) {
      unknown.forEach((id) => botsAskedFor.add(id));
      await bots.loadBots().catch(() => {});
    }
    if (state.current) {
      const cur = state.sessions.find((s) => s.id === state.current.id);
      if (cur) {
        state.current = cur;
        renderPaused();
        grp.renderMembers();
        wf.renderWorkflow();
      }
    }
    renderSessions();
  }

  function sessionTitle(s) {
    if (s.title) return s.title;
    const bot = state.bots.get((s.bot_ids || [])[0]);
    return bot ? "Chat with " + bot.name : "Conversation " + s.id;
  }

  function renderSessions() {
    grp.renderSessionList();
  }

  function openNewSessionForm() {
    const form = $("#new-session-form");
    showError($("#session-error"), null);
    form.hidden = false;
    $("#new-group-form").hidden = true;
    if (state.bots.size === 0) {
      showError($("#session-error"), "Add a Bot first (Bots panel below).");
      $("#bots-details").open = true;
    }
    $("#session-bot").focus();
  }

  async function submitSession(ev) {
    ev.preventDefault();
    const errEl = $("#session-error");
    showError(errEl, null);
    const botId = $("#session-bot").value;
    if (!botId) {
      showError(errEl, "Pick a Bot.");
      return;
    }
    const bot = [...state.bots.values()].find((b) => String(b.id) === botId);
    const body = { kind: "direct", bot_ids: [bot ? bot.id : botId] };
    const title = $("#session-title").value.trim();
    if (title) body.title = title;
    const folder = $("#session-folder").value.trim();
    if (folder) body.workspace = folder;
    const btn = $("#session-create");
    btn.disabled = true;
    try {
      const s = await api("POST", "/v1/sessions", body);
      $("#new-session-form").reset();
      $("#new-session-form").hidden = true;
      await loadSessions();
      await selectSession(s.id);
    } catch (e) {
      showError(errEl, e);
    } finally {
      btn.disabled = false;
    }
  }

  // ---------- Conversation ----------

  function renderHeader() {
    const s = state.current;
    if (!s) return;
    $("#conv-title").textContent = sessionTitle(s);
    const names = (s.bot_ids || []).map((id) => {
      const b = state.bots.get(id);
      return b ? b.name + " · " + bots.endpointLabel(b) : "Bot " + id;
    });
    $("#conv-sub").textContent = names.join(", ");
    // Where the Bots' files and commands start, so the person knows where to look.
    const folder = $("#conv-folder");
    folder.textContent = s.workspace ? "Folder: " + s.workspace : "";
    folder.hidden = !s.workspace;
    grp.renderMembers();
    document.title = sessionTitle(s) + " · Troupe";
  }

  const PAUSE_REASONS = {
    failed: "the last turn failed",
    aborted: "the turn was stopped",
    interrupted: "the turn was interrupted",
    workflow: "the workflow paused it",
  };

  // The pause latch, and what else keeps the Bot from going on by itself (an unknown effect).
  function renderPaused() {
    const box = $("#paused");
    const paused = state.current && state.current.paused;
    const blocked = state.current && state.current.blocked_by;
    const parts = [];
    if (paused) {
      const why = PAUSE_REASONS[paused.reason] || String(paused.reason || "paused");
      let text = "Paused (" + String(paused.reason || "") + "): " + why;
      if (paused.description) text += " — " + paused.description;
      parts.push(text);
    }
    if (blocked) {
      let text = String(blocked.message || blocked.reason);
      if (blocked.call && blocked.call.summary) text += " Call: " + String(blocked.call.summary);
      parts.push(text);
    }
    if (parts.length) {
      $("#paused-reason").textContent = parts.join(" ");
      box.hidden = false;
    } else {
      $("#paused-reason").textContent = "";
      box.hidden = true;
    }
  }

  function setRunning(on) {
    state.running = !!on;
    if (hold) hold.renderComposer();
    renderSessions();
  }

  async function selectSession(id) {
    const gen = ++state.gen;
    if (state.es) {
      state.es.close();
      state.es = null;
    }
    state.msgEls.clear();
    state.streams.clear();
    state.closed.clear();
    state.ended.clear();
    state.orphans.clear();
    state.turnBots.clear();
    state.turnEnds.clear();
    state.turnTimes.clear();
    state.lastId = 0;
    state.activeTurn = null;
    state.liveTurns.clear();
    const s = state.sessions.find((x) => x.id === id);
    state.current = s || { id, bot_ids: [], title: null, running: false, paused: null };
    state.workflow = null;
    const tr = $("#transcript");
    tr.replaceChildren();
    renderHeader();
    renderPaused();
    showError($("#workflow-error"), null);
    $("#lightloop-form").reset();
    wf.showLightloopForm(false);
    $("#blueprint-form").reset();
    wf.showBlueprintForm(false);
    wf.renderWorkflow();
    setRunning(state.current.running);
    $("#composer").disabled = false;
    $("#send").disabled = false;
    showError($("#composer-error"), null);
    grp.enter();
    act.enter();
    work.enter();
    deliv.enter();
    qual.enter();
    hold.enter();
    eng.enter();
    if (isPhone()) setSidebarCollapsed(true);
    if (location.hash !== "#session=" + id) history.replaceState(null, "", "#session=" + id);
    try {
      await fetchNewMessages(gen);
    } catch (e) {
      if (gen === state.gen) showError($("#composer-error"), e);
    }
    if (gen !== state.gen) return;
    if (state.msgEls.size === 0) {
      tr.appendChild(el("p", "hint empty-note", "No messages yet. Say hello."));
    }
    scrollToEnd(true);
    openEvents(gen);
    wf.refreshWorkflow();
    // The turns, read once: what runs now (activity.js), what the ended ones did (commands.js).
    api("GET", "/v1/turns?session_id=" + encodeURIComponent(id))
      .then((turns) => {
        if (gen !== state.gen || !Array.isArray(turns)) return;
        for (const t of turns) {
          state.turnBots.set(String(t.id), t.bot_id);
          state.turnEnds.set(String(t.id), t.ended_at || t.started_at);
          state.turnTimes.set(String(t.id), { started_at: t.started_at, ended_at: t.ended_at });
        }
        act.seed(turns);
        return cmd.loadPastCommands(gen, turns);
      })
      .catch(() => {});
    $("#composer").focus();
  }

  async function fetchNewMessages(gen) {
    const sid = state.current.id;
    for (;;) {
      const msgs = await api(
        "GET",
        "/v1/sessions/" + encodeURIComponent(sid) + "/messages?after=" + state.lastId + "&limit=200"
      );
      if (gen !== state.gen) return;
      for (const m of msgs || []) upsertMessage(m);
      if (!msgs || msgs.length < 200) return;
    }
  }

  function upsertMessage(m) {
    if (!m || (state.current && m.session_id !== undefined && m.session_id !== state.current.id)) return;
    const empty = document.querySelector("#transcript .empty-note");
    if (empty) empty.remove();
    if (typeof m.id === "number" && m.id > state.lastId) state.lastId = m.id;
    const turnKey = m.turn_id === null || m.turn_id === undefined ? null : String(m.turn_id);
    let node = state.msgEls.get(m.id);
    let stream = null;
    if (m.author === "bot" && turnKey !== null) {
      stream = state.streams.get(turnKey);
      if (stream && stream.msgId !== undefined && stream.msgId !== m.id) stream = null;
    }
    if (!node && stream) {
      // The stored message takes over the bubble that was streaming for this turn.
      node = stream.el;
      stream.msgId = m.id;
    }
    if (!node && m.author === "bot" && turnKey !== null && state.orphans.has(turnKey)) {
      // The turn ended before its reply was stored: the reply takes the bubble left behind.
      node = state.orphans.get(turnKey);
      state.orphans.delete(turnKey);
    }
    const fresh = !node;
    if (fresh) {
      node = el("div");
      node.appendChild(el("div", "meta"));
      node.appendChild(el("div", "body"));
    }
    node.className = "msg " + (m.author || "system");
    node.dataset.id = m.id;
    if (m.created_at) node.dataset.at = m.created_at;
    if (turnKey !== null) node.dataset.turn = turnKey;
    else delete node.dataset.turn;
    node.dataset.status = m.status || "done";

    const meta = node.querySelector(".meta");
    meta.replaceChildren();
    if (m.author === "user") meta.appendChild(el("span", "who", "You"));
    else if (m.author === "bot") meta.appendChild(el("span", "who", botLabel(state.bots.get(m.bot_id))));
    else meta.appendChild(el("span", "who", "system"));
    if (m.created_at) meta.title = fmtTime(m.created_at);
    edit.decorate(node, m);
    flow.decorate(node, m);
    if (m.status === "failed") {
      node.classList.add("failed");
      meta.appendChild(el("span", "badge failed", "failed"));
    } else if (m.status === "interrupted") {
      node.classList.add("interrupted");
      meta.appendChild(el("span", "badge", "interrupted"));
    }

    const body = node.querySelector(".body");
    if (m.status === "working") {
      node.classList.add("streaming");
      if (!stream && m.author === "bot" && turnKey !== null) {
        stream = { el: node, text: "", msgId: m.id };
        state.streams.set(turnKey, stream);
      }
      const shown = stream && stream.text.length > (m.body || "").length ? stream.text : m.body || "";
      body.textContent = shown;
    } else {
      if (!grp.renderBody(node, m)) body.textContent = m.body || "";
      if (m.author === "bot" && turnKey !== null) {
        state.closed.set(turnKey, { body: m.body || "", seen: stream ? stream.text : "" });
      }
      if (stream) state.streams.delete(turnKey);
    }
    ceiling.decorate(node, m);
    unread.decorate(node, m);
    state.msgEls.set(m.id, node);
    cutoff.decorate(node, m);
    if (fresh) insertInOrder(node, m.id);
    // Keep a turn's commands under its last reply.
    if (turnKey !== null && m.author === "bot") {
      const box = document.querySelector('.commands[data-turn="' + CSS.escape(turnKey) + '"]');
      if (box && box.parentElement !== node) {
        const orphan = box.parentElement && box.parentElement.classList.contains("orphan-commands")
          ? box.parentElement
          : null;
        node.appendChild(box);
        if (orphan) orphan.remove();
      }
      cmd.stampReply(turnKey);
    }
    scrollToEnd();
  }

  function insertInOrder(node, id) {
    const tr = $("#transcript");
    // Messages arrive in id order almost always; walk back from the end otherwise.
    let after = tr.lastElementChild;
    while (after && after.dataset.id && Number(after.dataset.id) > id) {
      after = after.previousElementSibling;
    }
    if (!after) tr.prepend(node);
    else after.after(node);
  }

  function onDelta(d) {
    if (!d || !state.current) return;
    if (d.session_id !== undefined && d.session_id !== state.current.id) return;
    const key = String(d.turn_id);
    if (state.ended.has(key)) return;
    let stream = state.streams.get(key);
    if (!stream) {
      const closed = state.closed.get(key);
      if (closed && closed.body.startsWith(closed.seen + (d.text || ""))) {
        closed.seen += d.text || ""; // a late piece of a reply that is already stored
        return;
      }
      state.closed.delete(key);
      const node = el("div", "msg bot streaming");
      node.dataset.turn = key;
      node.dataset.status = "working";
      const meta = el("div", "meta");
      meta.appendChild(el("span", "who", grp.speakerOfTurn(d.turn_id)));
      node.appendChild(meta);
      node.appendChild(el("div", "body"));
      const empty = document.querySelector("#transcript .empty-note");
      if (empty) empty.remove();
      $("#transcript").appendChild(node);
      stream = { el: node, text: "", msgId: undefined };
      state.streams.set(key, stream);
    }
    stream.text += d.text || "";
    stream.el.querySelector(".body").textContent = stream.text;
    scrollToEnd();
  }

  // The turn ended: a bubble still streaming either duplicates a stored reply (then it
  // goes) or is all that is left of the reply (then it stays, marked as cut short).
  function finishStream(key, status) {
    const st = state.streams.get(key);
    if (!st) return;
    state.streams.delete(key);
    if (st.msgId !== undefined) return;
    const stored = [...document.querySelectorAll("#transcript .msg.bot[data-id]")].some(
      (m) => m.dataset.turn === key && m.querySelector(".body").textContent.includes(st.text)
    );
    // A turn that completed without storing what it streamed had its reply withheld (it
    // repeated one already posted: AC-12); the page shows what the conversation holds.
    if (stored || status === "completed") {
      st.el.remove();
      return;
    }
    st.el.classList.remove("streaming");
    if (status && status !== "completed") {
      st.el.classList.add(status === "failed" ? "failed" : "interrupted");
    }
    state.orphans.set(key, st.el);
  }

  function scrollToEnd(force) {
    const tr = $("#transcript");
    const near = tr.scrollHeight - tr.scrollTop - tr.clientHeight < 160;
    if (force || near) tr.scrollTop = tr.scrollHeight;
  }

  // ---------- events ----------

  function openEvents(gen) {
    const sid = state.current.id;
    const es = new EventSource("/v1/events?session_id=" + encodeURIComponent(sid));
    state.es = es;
    const parse = window.troupeHttp.parseEvent;
    const live = () => gen === state.gen;
    grp.listen(es, live);
    act.listen(es, live);
    work.listen(es, live);
    hold.listen(es, live);
    edit.listen(es, live);
    ceiling.listen(es, live);
    unread.listen(es, live);
    rboss.listen(es, live);
    es.addEventListener("session_message", (e) => {
      const ev = parse(e);
      if (live() && ev && ev.payload) upsertMessage(ev.payload.message);
      if (live()) wf.refreshWorkflow();
    });
    // The workflow slot, its ending and the pause latch each have their own event.
    for (const kind of [
      "workflow_changed",
      "workflow_ended",
      "thread_paused",
      "thread_resumed",
      "wake_refused",
      "loop_guard_updated",
      "blueprint_loop_created",
      "blueprint_loop_updated",
    ]) {
      es.addEventListener(kind, () => {
        if (live()) wf.refreshWorkflow();
      });
    }
    es.addEventListener("run_started", (e) => {
      const ev = parse(e);
      if (!live()) return;
      state.activeTurn = ev ? ev.run_id : null;
      if (ev && ev.run_id !== undefined && ev.run_id !== null) state.liveTurns.add(String(ev.run_id));
      setRunning(true);
      wf.refreshWorkflow();
    });
    es.addEventListener("run_ended", (e) => {
      const ev = parse(e);
      if (!live()) return;
      // A job's work speaks here beside the desk: the conversation runs while any turn does.
      if (ev && ev.run_id !== undefined && ev.run_id !== null) state.liveTurns.delete(String(ev.run_id));
      setRunning(state.liveTurns.size > 0);
      if (ev && ev.run_id !== undefined && ev.run_id !== null) {
        const key = String(ev.run_id);
        state.ended.add(key);
        finishStream(key, ev.payload && ev.payload.status);
        cmd.turnEnded(ev.run_id, gen);
      }
      // Catch up on anything the stream may have missed.
      fetchNewMessages(gen).catch(() => {});
      wf.refreshWorkflow();
    });
    es.addEventListener("command_finished", (e) => {
      const ev = parse(e);
      if (live() && ev) cmd.onCommandFinished(ev);
    });
    es.addEventListener("delta", (e) => {
      if (live()) onDelta(parse(e));
    });
    es.addEventListener("open", () => {
      if (!live()) return;
      $("#conv-head").classList.remove("offline");
      // After a reconnect, fetch what was stored meanwhile.
      fetchNewMessages(gen).catch(() => {});
      wf.refreshWorkflow();
    });
    es.addEventListener("error", () => {
      if (live()) $("#conv-head").classList.add("offline");
    });
  }

  // ---------- composer ----------

  async function send(ev) {
    if (ev) ev.preventDefault();
    if (!state.current) return;
    const ta = $("#composer");
    const text = ta.value;
    if (!text.trim()) return;
    const gen = state.gen;
    hold.noteSend();
    showError($("#composer-error"), null);
    // The line shows once it is stored (its session_message event), but the request returns
    // only once the line is read and routed, a model's time. Send stays ready meanwhile, for
    // the next line (TURN-10): the composer empties now, and gets the words back on a failure.
    ta.value = "";
    hold.renderComposer();
    ta.focus();
    try {
      const m = await api("POST", "/v1/sessions/" + encodeURIComponent(state.current.id) + "/messages", {
        body: text,
      });
      if (gen === state.gen) {
        upsertMessage(m);
        scrollToEnd(true);
        grp.refreshView();
      }
    } catch (e) {
      if (gen === state.gen) {
        if (!ta.value) {
          ta.value = text;
          hold.renderComposer();
        }
        showError($("#composer-error"), e);
      }
    }
  }

  // ---------- layout ----------

  function setSidebarCollapsed(collapsed) {
    $("#sidebar").classList.toggle("collapsed", collapsed);
    $("#sidebar-toggle").setAttribute("aria-expanded", String(!collapsed));
  }

  // ---------- start ----------

  function init() {
    bots.bind();
    $("#new-session").addEventListener("click", openNewSessionForm);
    $("#session-cancel").addEventListener("click", () => {
      $("#new-session-form").hidden = true;
    });
    $("#new-session-form").addEventListener("submit", submitSession);
    $("#composer-form").addEventListener("submit", send);
    $("#composer").addEventListener("keydown", (e) => {
      if (grp.composerKey(e)) return;
      if (edit.composerKey(e)) return;
      if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
        e.preventDefault();
        send();
      }
    });
    wf.bind();
    grp.bind();
    work.bind();
    deliv.bind();
    hold.bind();
    hold.start();
    mcp.bind();
    mcp.start();
    qual.bind();
    eng.bind();
    // Focus mode (focus.js): the conversation without the work's machinery.
    window.troupeFocus({ $ }).bind();
    $("#sidebar-toggle").addEventListener("click", () => {
      setSidebarCollapsed(!$("#sidebar").classList.contains("collapsed"));
    });

    bots
      .loadBots()
      .then(loadSessions)
      .then(() => {
        // A link like /#session=12 opens that conversation.
        const m = /^#session=(.+)$/.exec(location.hash);
        const s = m && state.sessions.find((x) => String(x.id) === decodeURIComponent(m[1]));
        if (s) return selectSession(s.id);
      })
      .catch((e) => showError($("#composer-error"), e));
    // The running dots of other conversations: a light poll.
    setInterval(() => {
      if (document.hidden) return;
      loadSessions().catch(() => {});
      wf.refreshWorkflow();
    }, 5000);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
