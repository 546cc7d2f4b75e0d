// Troupe web page: Boss Mode — its entry in the workflow selector (standing instructions), the
// Boss panel on a root (the tree with each session's role, Bot, status and current task; Spawn
// worker; Assign to a selected idle direct child; Cancel), and on a worker's page the composer
// closed: the root is the tree's only entry. The tree is re-read on the events of the root and
// of its direct workers. workflow.js creates it with the shared state and helpers; all text is
// set with textContent.
"use strict";

window.troupeBoss = function (ctx) {
  const { $, state, api, showError, applyWorkflowView, refreshWorkflow, selectSession } = ctx;

  // The events that change what the tree shows: a turn starting or ending, a line.
  const EVENTS = ["run_started", "run_ended", "session_message"];
  // Each direct worker watched gets its own event stream; a few at most, so the page keeps
  // connections for everything else (the root's own events refresh the rest: reports wake it).
  const MAX_WORKER_STREAMS = 3;

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = text;
    return e;
  }

  function framed(e) {
    e.style.border = "1px solid var(--line)";
    e.style.borderRadius = "var(--radius)";
    e.style.padding = "0.4rem 0.75rem 0.6rem";
    e.style.marginTop = "0.5rem";
    e.style.background = "var(--bg)";
    e.style.maxWidth = "48rem";
    return e;
  }

  function labelled(text, hint, forId) {
    const l = el("label", null, text);
    l.htmlFor = forId;
    if (hint) {
      l.appendChild(document.createTextNode(" "));
      l.appendChild(el("span", "hint", hint));
    }
    return l;
  }

  function slotOf(w) {
    const s = (w && w.slot) || (state.current && state.current.workflow);
    return s && s.kind === "boss" ? s : null;
  }

  // ---------- the selector entry and its form ----------

  let enableBtn = null;
  let form = null;
  let panel = null;
  let workerNote = null;

  function buildSelector() {
    enableBtn = el("button", "secondary", "Boss\u2026");
    enableBtn.type = "button";
    enableBtn.id = "enable-boss";
    enableBtn.title = "Make this conversation the root of a tree of persistent workers it delegates to";
    enableBtn.setAttribute("aria-expanded", "false");
    enableBtn.setAttribute("aria-controls", "boss-form");
    $("#enable-lightloop").after(enableBtn);

    form = framed(el("form"));
    form.id = "boss-form";
    form.hidden = true;
    form.autocomplete = "off";
    const text = el("textarea");
    text.id = "boss-instructions";
    text.rows = 2;
    text.placeholder = "How the Boss should run its team (optional)";
    const row = el("div", "row");
    const submit = el("button", null, "Start Boss");
    submit.type = "submit";
    submit.id = "boss-submit";
    const cancel = el("button", "secondary", "Cancel");
    cancel.type = "button";
    cancel.id = "boss-form-cancel";
    row.append(submit, cancel);
    form.append(labelled("Standing instructions", "(optional)", "boss-instructions"), text, row);
    $("#lightloop-form").after(form);

    panel = framed(el("section"));
    panel.id = "boss-panel";
    panel.dataset.testid = "boss-panel";
    panel.setAttribute("aria-label", "Boss tree");
    panel.hidden = true;
    panel.style.maxHeight = "50vh";
    panel.style.overflowY = "auto";
    panel.style.overflowWrap = "anywhere";
    panel.style.fontSize = "0.9rem";
    form.after(panel);

    workerNote = el("p", "notice");
    workerNote.id = "boss-worker-note";
    workerNote.dataset.testid = "boss-worker-note";
    workerNote.hidden = true;
    $("#composer-form").before(workerNote);
  }

  function showForm(show) {
    form.hidden = !show;
    enableBtn.setAttribute("aria-expanded", String(show));
    if (show) $("#boss-instructions").focus();
  }

  async function submitForm(ev) {
    ev.preventDefault();
    if (!state.current) return;
    const errEl = $("#workflow-error");
    showError(errEl, null);
    const body = { kind: "boss" };
    const instructions = $("#boss-instructions").value.trim();
    if (instructions) body.instructions = instructions;
    const btn = $("#boss-submit");
    const gen = state.gen;
    btn.disabled = true;
    try {
      const w = await api("POST", "/v1/sessions/" + encodeURIComponent(state.current.id) + "/workflow", body);
      if (gen !== state.gen) return;
      form.reset();
      showForm(false);
      applyWorkflowView(w);
    } catch (e) {
      if (gen === state.gen) showError(errEl, e);
    } finally {
      btn.disabled = false;
      if (gen === state.gen) refreshWorkflow();
    }
  }

  // The one line the workflow bar shows while the slot holds Boss.
  function statusText(w) {
    const s = slotOf(w);
    if (s && s.role === "worker") {
      return "Workflow: Boss worker \u00b7 " + (s.worker_role || "worker") + " \u00b7 root session " + s.root_session_id;
    }
    return "Workflow: Boss (root)";
  }

  // ---------- the panel (a root) ----------

  // The tree last read, for the session it was read for.
  let tree = null;
  let treeFor = null;
  // The spawn and assign forms are built once per session, so typing survives a tree refresh.
  let controlsFor = null;

  const loadTree = window.troupeHttp.reloader(async () => {
    if (!state.current) return;
    const gen = state.gen;
    const sid = state.current.id;
    let t;
    try {
      t = await api("GET", "/v1/boss/session/" + encodeURIComponent(sid) + "/tree");
    } catch (e) {
      if (gen === state.gen) showError($("#boss-error"), e);
      return;
    }
    if (gen !== state.gen || !state.current || state.current.id !== sid) return;
    tree = t;
    treeFor = sid;
    drawTree();
    watchWorkers();
  });

  function roleWords(n) {
    return n.role === "boss" ? "boss" : n.worker_role || "worker";
  }

  function nodeRow(n, depth) {
    const li = el("li", "job-row boss-node");
    li.dataset.session = String(n.session_id);
    li.dataset.status = n.status;
    li.dataset.depth = String(depth);
    const head = el("div", "job-who");
    const name = el("button", "secondary boss-open", roleWords(n));
    name.type = "button";
    name.title = "Open session " + n.session_id;
    name.addEventListener("click", () => selectSession(n.session_id));
    head.appendChild(name);
    if (n.bot) head.appendChild(el("span", "hint boss-bot", n.bot));
    const badge = el("span", "badge boss-status", n.status);
    badge.dataset.status = n.status === "idle" ? "done" : "active";
    head.appendChild(badge);
    li.appendChild(head);
    if (n.current_task) {
      li.appendChild(el("p", "hint boss-task", "Task " + n.current_task.task_id + ": " + n.current_task.task_title));
    }
    if (depth === 1) {
      const cancel = el("button", "secondary boss-cancel", "Cancel");
      cancel.type = "button";
      cancel.title = "Remove what you assigned this worker and interrupt its turn";
      cancel.dataset.session = String(n.session_id);
      cancel.addEventListener("click", (e) => cancelWorker(e.currentTarget, n.session_id));
      li.appendChild(cancel);
    }
    const kids = n.children || [];
    if (kids.length) {
      const ul = el("ul", "boss-children");
      ul.style.listStyle = "none";
      ul.style.margin = "0.2rem 0 0";
      ul.style.paddingLeft = "1rem";
      for (const k of kids) ul.appendChild(nodeRow(k, depth + 1));
      li.appendChild(ul);
    }
    return li;
  }

  function drawTree() {
    const box = $("#boss-tree");
    if (!box || !tree) return;
    const ul = el("ul", "boss-tree");
    ul.style.listStyle = "none";
    ul.style.margin = "0";
    ul.style.padding = "0";
    const kids = tree.children || [];
    if (!kids.length) box.replaceChildren(el("p", "hint", "No workers yet: spawn one, or ask the Boss."));
    else {
      for (const k of kids) ul.appendChild(nodeRow(k, 1));
      box.replaceChildren(ul);
    }
    // Assign goes to an idle direct child; keep the choice across refreshes while it stays idle.
    const select = $("#boss-assign-worker");
    const chosen = select.value;
    select.replaceChildren();
    for (const k of kids.filter((k) => k.status === "idle")) {
      const o = el("option", null, roleWords(k) + " (session " + k.session_id + ")");
      o.value = String(k.session_id);
      select.appendChild(o);
    }
    if ([...select.options].some((o) => o.value === chosen)) select.value = chosen;
    $("#boss-assign").disabled = select.options.length === 0;
    $("#boss-assign-none").hidden = select.options.length > 0;
  }

  // The forms fold away under the tree, so the panel leaves the conversation its room.
  function fold(id, title, form) {
    const box = el("details", "boss-fold");
    box.id = id;
    box.appendChild(el("summary", null, title));
    box.appendChild(form);
    return box;
  }

  function buildControls() {
    panel.replaceChildren();
    const head = el("div", "settings-head");
    head.appendChild(el("h3", null, "Boss tree"));
    panel.appendChild(head);
    const box = el("div");
    box.id = "boss-tree";
    box.dataset.testid = "boss-tree";
    box.setAttribute("aria-live", "polite");
    panel.appendChild(box);

    // Spawn worker: a role and a Bot (this conversation's unless chosen).
    const spawn = el("form", "boss-spawn");
    spawn.id = "boss-spawn-form";
    spawn.autocomplete = "off";
    const role = el("input");
    role.id = "boss-spawn-role";
    role.type = "text";
    role.placeholder = "code, research, \u2026";
    role.required = true;
    const bot = el("select");
    bot.id = "boss-spawn-bot";
    const own = el("option", null, "this conversation's Bot");
    own.value = "";
    bot.appendChild(own);
    for (const b of state.bots.values()) {
      if (b.archived) continue;
      const o = el("option", null, b.name);
      o.value = b.name;
      bot.appendChild(o);
    }
    const spawnBtn = el("button", null, "Spawn worker");
    spawnBtn.type = "submit";
    spawnBtn.id = "boss-spawn";
    spawn.append(labelled("Role", null, "boss-spawn-role"), role, labelled("Bot", null, "boss-spawn-bot"), bot, spawnBtn);
    spawn.addEventListener("submit", submitSpawn);
    panel.appendChild(fold("boss-spawn-details", "Spawn a worker\u2026", spawn));

    // Assign: to a selected idle direct child.
    const assign = el("form", "boss-assign");
    assign.id = "boss-assign-form";
    assign.autocomplete = "off";
    const worker = el("select");
    worker.id = "boss-assign-worker";
    const none = el("p", "hint", "No idle worker of this root to assign to.");
    none.id = "boss-assign-none";
    const taskId = el("input");
    taskId.id = "boss-task-id";
    taskId.type = "text";
    taskId.placeholder = "t1";
    taskId.required = true;
    const task = el("textarea");
    task.id = "boss-task";
    task.rows = 2;
    task.required = true;
    task.placeholder = "What the worker should do";
    const acc = el("textarea");
    acc.id = "boss-acceptance";
    acc.rows = 2;
    acc.placeholder = "One per line";
    const assignBtn = el("button", null, "Assign");
    assignBtn.type = "submit";
    assignBtn.id = "boss-assign";
    assign.append(
      labelled("Worker", "(idle direct workers)", "boss-assign-worker"),
      worker,
      none,
      labelled("Task id", "(1\u201364 of letters, digits, . _ -; a repeat delivers nothing)", "boss-task-id"),
      taskId,
      labelled("Task", null, "boss-task"),
      task,
      labelled("Acceptance criteria", "(optional)", "boss-acceptance"),
      acc,
      assignBtn
    );
    assign.addEventListener("submit", submitAssign);
    panel.appendChild(fold("boss-assign-details", "Assign a task\u2026", assign));

    const result = el("p", "hint");
    result.id = "boss-result";
    result.setAttribute("role", "status");
    panel.appendChild(result);
    const err = el("p", "error");
    err.id = "boss-error";
    err.setAttribute("role", "alert");
    err.hidden = true;
    panel.appendChild(err);
  }

  async function bossAction(btn, path, body, done) {
    if (!state.current) return;
    showError($("#boss-error"), null);
    const gen = state.gen;
    btn.disabled = true;
    try {
      const r = await api("POST", "/v1/boss/session/" + encodeURIComponent(state.current.id) + path, body);
      if (gen === state.gen) done(r);
    } catch (e) {
      if (gen === state.gen) showError($("#boss-error"), e);
    } finally {
      btn.disabled = false;
      if (gen === state.gen) loadTree();
    }
  }

  function submitSpawn(ev) {
    ev.preventDefault();
    const role = $("#boss-spawn-role").value.trim();
    if (!role) {
      showError($("#boss-error"), "Name the worker's role first.");
      return;
    }
    const body = { role };
    const agent = $("#boss-spawn-bot").value;
    if (agent) body.agent = agent;
    bossAction($("#boss-spawn"), "/worker", body, (w) => {
      $("#boss-spawn-form").reset();
      $("#boss-result").textContent = "Spawned " + w.worker_role + " (session " + w.session_id + ", " + w.bot + ").";
    });
  }

  function submitAssign(ev) {
    ev.preventDefault();
    const worker = Number($("#boss-assign-worker").value);
    const taskId = $("#boss-task-id").value.trim();
    const task = $("#boss-task").value.trim();
    if (!worker || !taskId || !task) {
      showError($("#boss-error"), "Choose a worker and give a task id and a task.");
      return;
    }
    const acceptance = $("#boss-acceptance")
      .value.split("\n")
      .map((l) => l.trim())
      .filter((l) => l);
    const body = { worker_session_id: worker, task_id: taskId, task };
    if (acceptance.length) body.acceptance = acceptance;
    bossAction($("#boss-assign"), "/assign", body, (a) => {
      if (a.delivered) {
        $("#boss-assign-form").reset();
        $("#boss-result").textContent = "Assigned " + a.task_id + " to session " + a.worker_session_id + ".";
      } else {
        $("#boss-result").textContent = "Task " + a.task_id + " was assigned before: nothing new was delivered.";
      }
    });
  }

  function cancelWorker(btn, worker) {
    bossAction(btn, "/cancel", { worker_session_id: worker }, (c) => {
      const parts = [];
      parts.push(c.cancelled ? "its turn was interrupted" : "nothing was running");
      parts.push(c.removed + " pending task" + (c.removed === 1 ? "" : "s") + " removed");
      $("#boss-result").textContent = "Cancelled session " + worker + ": " + parts.join(", ") + ".";
    });
  }

  // ---------- events ----------

  // The root's own stream is app.js's; it gets the tree listeners once per stream.
  let attached = null;
  function attachEvents() {
    const es = state.es;
    if (!es || es === attached) return;
    attached = es;
    for (const kind of EVENTS) {
      es.addEventListener(kind, () => {
        if (state.es === es && panelShown()) loadTree();
      });
    }
  }

  function panelShown() {
    return panel && !panel.hidden;
  }

  // session id -> EventSource of a direct worker of the root on screen.
  const workerStreams = new Map();

  function closeWorkerStreams(keep) {
    for (const [sid, es] of workerStreams) {
      if (keep && keep.has(sid)) continue;
      es.close();
      workerStreams.delete(sid);
    }
  }

  function watchWorkers() {
    if (!panelShown() || !tree) {
      closeWorkerStreams(null);
      return;
    }
    const want = new Set((tree.children || []).slice(0, MAX_WORKER_STREAMS).map((k) => k.session_id));
    closeWorkerStreams(want);
    for (const sid of want) {
      if (workerStreams.has(sid)) continue;
      const es = new EventSource("/v1/events?session_id=" + encodeURIComponent(sid));
      for (const kind of EVENTS) {
        es.addEventListener(kind, () => {
          if (workerStreams.get(sid) === es && panelShown()) loadTree();
        });
      }
      workerStreams.set(sid, es);
    }
  }

  // ---------- render ----------

  // Whether this page closed the composer (a worker), so it opens it again elsewhere.
  let closedComposer = false;

  function renderWorker(s) {
    workerNote.replaceChildren();
    workerNote.appendChild(document.createTextNode("A Boss worker: talk to its root. "));
    const open = el("button", "secondary", "Open the root (session " + s.root_session_id + ")");
    open.type = "button";
    open.id = "boss-open-root";
    open.addEventListener("click", () => selectSession(s.root_session_id));
    workerNote.appendChild(open);
    workerNote.hidden = false;
    $("#composer").disabled = true;
    $("#send").disabled = true;
    $("#composer").placeholder = "A Boss worker: talk to its root";
    closedComposer = true;
    // Only the root changes a worker's workflow.
    $("#workflow-off").hidden = true;
  }

  function openComposer() {
    workerNote.hidden = true;
    if (!closedComposer) return;
    closedComposer = false;
    $("#composer").disabled = false;
    $("#send").disabled = false;
    $("#composer").placeholder = "Write to the Bot (Enter sends, Shift+Enter for a new line)";
  }

  function render(w) {
    if (!panel) return; // not bound yet
    attachEvents();
    const kind = w && w.kind;
    enableBtn.hidden = !!kind || !!(w && w.blueprint_loop);
    if (enableBtn.hidden) showForm(false);
    const s = slotOf(w);
    const group = state.current && (state.current.kind === "group" || state.current.kind === "bot_direct");
    if (s && s.role === "worker" && !group) renderWorker(s);
    else openComposer();
    const root = !!s && s.role === "boss" && !group && !!state.current;
    panel.hidden = !root;
    if (!root) {
      controlsFor = null;
      tree = null;
      treeFor = null;
      closeWorkerStreams(null);
      return;
    }
    if (controlsFor !== state.current.id) {
      buildControls();
      controlsFor = state.current.id;
      if (treeFor !== state.current.id) tree = null;
    }
    if (tree) drawTree();
    loadTree();
  }

  function bind() {
    buildSelector();
    enableBtn.addEventListener("click", () => {
      showError($("#workflow-error"), null);
      showForm(form.hidden);
    });
    form.addEventListener("submit", submitForm);
    $("#boss-form-cancel").addEventListener("click", () => showForm(false));
  }

  return { bind, render, statusText, showForm };
};
