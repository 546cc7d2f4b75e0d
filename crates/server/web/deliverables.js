// Troupe web page: deliverables — one job's view, opened from the Jobs panel. Its tickets with
// the board texts (T19: the stage label with parts passed, "Reviewed by …", "By X", no owner on
// a parked or dropped ticket, what it waits for; T14: "Dropped: <reason>" or "Parked", the
// counter and the approved share, "Actually: X" / "Also X"), a picked ticket's settings
// (ticket_settings.js: who ran it, status, reviewer, "Make X the reviewer", the sample)
// and hand-overs (files with a short hash, state, who approved, the checks bound to it, each
// review's verdicts and whether the reviewer ran on the maker's model), the job's checks with
// Confirm on an offer from the user's words, and the large-job banner (LJ2, ADR 0109).
//
// Deliverables events go to the job's home conversation's stream (the global stream for a job
// with none), so the view keeps its own stream for the job it shows and reads everything again
// on that job's events. The job's size facts have no read route of their own: they come from the
// stream's `large_job_changed` events (the stream replays from the start) and from the answer
// to a banner press. With the daemon unreachable every button here is disabled.
// app.js creates it; work.js asks it for each job row's Open button.
"use strict";

window.troupeDeliverables = function (ctx) {
  const { $, el, state, api, showError, showJobs } = ctx;
  // The view's other sections (worklog.js, requirements.js): mounted, opened, closed and fed
  // the job's stream with it.
  const extras = ctx.extras || [];

  const REFUSED = "That did not work; try again";
  const enc = encodeURIComponent;
  // The events that change what the view shows, each carrying `task_id`.
  const LIVE = [
    "ticket_stage_changed",
    "submission_created",
    "submission_approved",
    "submission_awaiting_word",
    "submission_superseded",
    "review_recorded",
    "review_refused",
    "review_awaiting_user",
    "check_run",
    "check_first_passed",
    "check_confirmed",
    "check_changed",
    "plan_delivered",
    "plan_reopened",
    "large_job_changed",
    "plan_changed",
  ];
  const SUB_STATE = {
    checking: "Checking",
    failed_checks: "Failed its checks",
    submitted: "Submitted",
    in_review: "In review",
    awaiting_user: "Waits for your word",
    approved: "Approved",
    rework: "Sent back",
    superseded: "Superseded",
  };
  const RESULT = { pass: "Passed", fail: "Failed", pending: "Pending", not_judged: "Not judged" };
  const OUTCOME = { passed: "Passed", failed: "Failed", blocked: "Blocked", error: "Error" };
  const VERDICT = { pass: "Pass", fail: "Fail", unknown: "Unknown", "n/a": "n/a" };

  const view = {
    planId: null, // the job shown; null when the view is closed
    gen: 0, // bumped on every open and close; stale reads check it
    plan: null, // GET /v1/tasks/:id
    list: null, // GET /v1/tasks/:id/tickets
    subs: [], // GET /v1/tasks/:id/submissions, newest first
    checks: [], // GET /v1/tasks/:id/checks (.checks)
    members: [], // the Bots of the job's conversation
    large: { state: "unread", evidence: null, user_said_no_need: false },
    picked: null, // the picked ticket's id
    heard: false, // the job's stream has opened: its size facts have been replayed
    refused: new Set(), // the controls whose last press was refused
    online: true,
    loaded: false,
  };
  let es = null;

  const idEq = (a, b) => a !== null && a !== undefined && b !== null && b !== undefined && String(a) === String(b);
  const nn = (n) => "#" + String(n).padStart(2, "0");

  function botName(id) {
    const b = state.bots.get(id);
    if (b) return b.name;
    for (const s of [state.current, ...state.sessions]) {
      const m = s && (s.members || []).find((x) => x.bot_id === id);
      if (m) return m.name;
    }
    return "Bot " + id;
  }

  function fmtTime(v) {
    if (v === null || v === undefined) return "";
    const d = new Date(v < 1e12 ? v * 1000 : v);
    return isNaN(d.getTime()) ? "" : d.toLocaleString();
  }

  // ---------- opening and reading ----------

  // The Jobs panel's Open button for a job row.
  function jobButton(j) {
    const b = el("button", "secondary job-open", "Open");
    b.type = "button";
    b.dataset.planId = j.id;
    b.setAttribute("aria-label", "Open the job \u201c" + j.name + "\u201d: its tickets and hand-overs");
    b.addEventListener("click", () => open(j.id));
    return b;
  }

  function open(planId) {
    close();
    view.planId = planId;
    view.gen++;
    view.loaded = false;
    view.large = { state: "unread", evidence: null, user_said_no_need: false };
    view.heard = false;
    view.refused = new Set();
    $("#job-view").hidden = false;
    if (showJobs) showJobs(false);
    for (const x of extras) x.open(planId);
    last = "";
    render();
    load();
  }

  function close() {
    view.gen++;
    view.planId = null;
    view.plan = null;
    view.list = null;
    view.subs = [];
    view.checks = [];
    view.members = [];
    view.picked = null;
    if (es) {
      es.close();
      es = null;
    }
    if (timer !== null) {
      clearTimeout(timer);
      timer = null;
    }
    $("#job-view").hidden = true;
    for (const x of extras) x.close();
    showError($("#job-error"), null);
  }

  // The board (ticket_board.js): a card pressed opens its ticket here.
  function pick(id) {
    view.picked = id;
    render();
    const row = document.querySelector('#ticket-list .ticket-row[data-ticket-id="' + CSS.escape(String(id)) + '"]');
    if (row) row.scrollIntoView({ block: "nearest" });
  }

  // "N need you" (job_need.js): back to the whole job.
  function unpick() {
    if (view.picked === null) return;
    view.picked = null;
    render();
  }

  function back() {
    close();
    if (showJobs) showJobs(true);
  }

  // Events come in bursts (a reconnect replays the backlog): reads fold into one.
  let timer = null;
  function schedule() {
    if (timer !== null || view.planId === null) return;
    timer = setTimeout(() => {
      timer = null;
      refresh();
    }, 60);
  }

  const refresh = window.troupeHttp.reloader(() => load());

  async function load() {
    const gen = view.gen;
    const id = view.planId;
    if (id === null) return;
    const base = "/v1/tasks/" + enc(id);
    let plan, list, subs, checks;
    try {
      [plan, list, subs, checks] = await Promise.all([
        api("GET", base),
        api("GET", base + "/tickets"),
        api("GET", base + "/submissions"),
        api("GET", base + "/checks").catch((e) => {
          if (e.code === "network") throw e;
          return null; // the job's checks are shown when the daemon serves them
        }),
      ]);
    } catch (e) {
      if (gen !== view.gen) return;
      if (e.code === "network") setOnline(false);
      showError($("#job-error"), e);
      return;
    }
    if (gen !== view.gen) return;
    const home = plan.home_session_id;
    let members = [];
    if (home !== null && home !== undefined) {
      const s = state.sessions.find((x) => idEq(x.id, home));
      if (s) members = s.bot_ids || [];
      else {
        try {
          members = (await api("GET", "/v1/sessions/" + enc(home))).bot_ids || [];
        } catch (e) {
          members = [];
        }
      }
    }
    if (gen !== view.gen) return;
    view.plan = plan;
    view.list = list;
    if (list.large) takeLarge(list.large);
    view.subs = subs || [];
    view.checks = checks ? (Array.isArray(checks) ? checks : checks.checks || []) : [];
    view.members = members;
    view.loaded = true;
    for (const x of extras) if (x.tickets) x.tickets(list);
    if (!es) openStream(home);
    setOnline(true);
    showError($("#job-error"), null);
    render();
  }

  // ---------- the job's stream ----------

  function openStream(home) {
    const gen = view.gen;
    const id = view.planId;
    const url = home === null || home === undefined ? "/v1/events" : "/v1/events?session_id=" + enc(home);
    es = new EventSource(url);
    const mine = (e) => {
      if (gen !== view.gen) return null;
      try {
        const ev = JSON.parse(e.data);
        return ev && ev.payload && idEq(ev.payload.task_id !== undefined ? ev.payload.task_id : ev.payload.plan_id, id) ? ev : null;
      } catch (err) {
        return null;
      }
    };
    for (const kind of LIVE) {
      es.addEventListener(kind, (e) => {
        const ev = mine(e);
        if (!ev) return;
        if (kind === "large_job_changed") takeLarge(ev.payload);
        schedule();
      });
    }
    // A tick's work (a pick-up, a call-back) can move a ball with no ticket event of its own.
    for (const x of extras) x.listen(es, mine, schedule);
    es.addEventListener("open", () => {
      if (gen !== view.gen) return;
      // The backlog follows the opening; the read this schedules comes after it.
      view.heard = true;
      setOnline(true);
      schedule();
    });
    es.addEventListener("error", () => {
      // The browser reconnects by itself (with Last-Event-ID); until then nothing can be pressed.
      if (gen === view.gen && es && es.readyState !== EventSource.OPEN) setOnline(false);
    });
  }

  function takeLarge(p) {
    view.large = {
      state: p.state || p.large_state || "unread",
      evidence: p.evidence !== undefined ? p.evidence : p.large_evidence,
      user_said_no_need: !!p.user_said_no_need,
    };
  }

  function setOnline(on) {
    if (view.online === on) return;
    view.online = on;
    render();
  }

  // ---------- presses ----------

  // Runs a press: the button is disabled meanwhile; a refusal shows where it was pressed (under
  // `key`, so it stays through the redraws live events make) until that control is pressed again.
  async function press(key, btn, call) {
    if (!view.online) return;
    const gen = view.gen;
    view.refused.delete(key);
    btn.disabled = true;
    try {
      const out = await call();
      if (gen !== view.gen) return;
      last = "";
      schedule();
      return out;
    } catch (e) {
      if (gen !== view.gen) return;
      if (e.code === "network") view.online = false;
      view.refused.add(key);
      last = "";
      render();
      throw e;
    }
  }

  function errorLine(cls, key) {
    const p = el("p", "error " + cls);
    p.setAttribute("role", "alert");
    p.hidden = !view.refused.has(key);
    if (!p.hidden) p.textContent = REFUSED;
    return p;
  }

  function button(text, cls, onPress) {
    const b = el("button", cls, text);
    b.type = "button";
    b.disabled = !view.online;
    b.addEventListener("click", () => onPress(b));
    return b;
  }

  // A picked ticket's status, reviewer and sample settings (ticket_settings.js).
  const settings = window.troupeTicketSettings({
    el,
    api,
    botName,
    idEq,
    press,
    errorLine,
    button,
    view: () => ({ members: view.members, online: view.online, large: view.large, hasSample: hasSample() }),
  });

  // ---------- showing ----------

  let last = "";
  function render() {
    const box = $("#job-view");
    if (view.planId === null) {
      box.hidden = true;
      return;
    }
    box.hidden = false;
    const key = JSON.stringify([view.loaded, view.heard, view.plan, view.list, view.subs, view.checks, view.members, view.large, view.picked, view.online]);
    if (key === last) return;
    last = key;
    box.classList.toggle("offline", !view.online);
    // PLAN-U3: in a done, parked or dormant job the open tickets fade; nothing implies it goes on.
    box.classList.toggle("settled", !!view.plan && (view.plan.status !== "active" || view.plan.dormant));
    $("#job-view-title").textContent = view.plan ? "Job \u201c" + view.plan.name + "\u201d" : "Job";
    renderBanner();
    renderCounter();
    renderBall();
    for (const x of extras) if (x.picked) x.picked(view.picked !== null, view.picked);
    renderTickets();
    renderChecks();
  }

  function renderBanner() {
    const box = $("#job-large");
    box.replaceChildren();
    // Until the stream has replayed the job's size facts, no button that could be wrong.
    if (!view.loaded || !view.heard) return;
    const L = view.large;
    const err = errorLine("large-error", "large");
    if (L.state === "large") {
      box.dataset.state = "large";
      box.appendChild(el("p", "large-words", "A large job: laid out in parts, with a sample made first."));
      if (L.evidence) box.appendChild(el("p", "large-evidence hint", "What showed it: " + L.evidence));
      box.appendChild(button("No need", "secondary large-no-need", (b) => choose(b, "no_need")));
    } else {
      // After "No need" the user may still change their mind: their latest word wins (LJ2
      // holds off readings, not them).
      box.dataset.state = L.user_said_no_need ? "no_need" : "not_large";
      const b = button("Treat as large", "secondary large-treat", (btn) => choose(btn, "treat_as_large"));
      b.title = "Lay it out in parts, with a sample made first";
      box.appendChild(b);
    }
    box.appendChild(err);
  }

  async function choose(btn, choice) {
    try {
      const d = await press("large", btn, () => api("POST", "/v1/tasks/" + enc(view.planId) + "/large", { choice }));
      if (d) {
        takeLarge(d);
        render();
      }
    } catch (e) {
      // Shown where it was pressed.
    }
  }

  function renderCounter() {
    const box = $("#job-counter");
    box.replaceChildren();
    const list = view.list;
    if (!list) {
      box.appendChild(el("span", "hint", "Loading…"));
      return;
    }
    box.appendChild(el("span", "job-count", list.counter));
    const tickets = list.tickets || [];
    const approved = tickets.filter((t) => t.stage === "approved").length;
    // T14: the approved share of the tickets in all; with none, no share and no bar.
    if (list.all > 0) {
      const pct = Math.round((approved / list.all) * 100);
      box.appendChild(el("span", "job-share", pct + "% approved"));
      const bar = el("span", "job-bar");
      bar.setAttribute("role", "progressbar");
      bar.setAttribute("aria-valuemin", "0");
      bar.setAttribute("aria-valuemax", "100");
      bar.setAttribute("aria-valuenow", String(pct));
      const fill = el("span", "job-bar-fill");
      fill.style.width = pct + "%";
      bar.appendChild(fill);
      box.appendChild(bar);
    }
  }

  // BH-7: who the job waits on (its first open ticket's ball); nothing in a parked, done or
  // dormant job.
  function renderBall() {
    const p = $("#job-ball");
    const b = view.plan && view.plan.ball;
    p.textContent = b && b.text ? b.text : "";
    p.dataset.holder = b ? b.holder : "";
    p.hidden = !(b && b.text);
  }

  // With a ticket picked, the job is read against it: what is held to another ticket dims.
  function heldTo(ticketId) {
    if (view.picked === null || ticketId === null || ticketId === undefined) return "";
    return idEq(ticketId, view.picked) ? " for-this-ticket" : " other-ticket";
  }

  const hasSample = () => ((view.list && view.list.tickets) || []).some((t) => t.is_sample);

  function renderTickets() {
    const ul = $("#ticket-list");
    ul.replaceChildren();
    const tickets = (view.list && view.list.tickets) || [];
    for (const t of tickets) ul.appendChild(ticketRow(t));
    $("#tickets-empty").hidden = !view.loaded || tickets.length > 0;
  }

  function ticketRow(t) {
    const picked = idEq(view.picked, t.id);
    const dropped = t.stage === "dropped";
    const li = el("li", "ticket-row" + (picked ? " picked" : ""));
    li.dataset.ticketId = t.id;
    li.dataset.stage = t.stage;
    li.dataset.status = t.status; // job_plan.js's count row filters the list by it
    const head = el("button", "ticket-head");
    head.type = "button";
    head.setAttribute("aria-expanded", String(picked));
    head.appendChild(el("span", "ticket-number", nn(t.number)));
    head.appendChild(el("span", "ticket-title", t.title));
    const label = el("span", "badge ticket-label", t.label);
    label.dataset.stage = t.stage;
    head.appendChild(label);
    if (t.is_sample) head.appendChild(el("span", "badge ticket-sample", "Sample"));
    head.addEventListener("click", () => {
      view.picked = picked ? null : t.id;
      render();
    });
    li.appendChild(head);
    if (dropped) {
      // T14/T19: a lead's drop says why; a set-aside ticket reads Parked; neither shows anyone.
      if (t.drop_line) li.appendChild(el("p", "ticket-drop hint", t.drop_line));
    } else {
      const who = [];
      if (t.stage === "approved") {
        const by = t.approved_by_bot_id !== null && t.approved_by_bot_id !== undefined ? t.approved_by_bot_id : t.owner_bot_id;
        if (by !== null && by !== undefined) who.push(["ticket-by", "By " + botName(by)]);
      } else if (t.owner_bot_id !== null && t.owner_bot_id !== undefined) {
        who.push(["ticket-owner", "Owner: " + botName(t.owner_bot_id)]);
      }
      if (!picked && t.reviewer_bot_id !== null && t.reviewer_bot_id !== undefined) {
        who.push(["ticket-reviewer", "Reviewed by " + botName(t.reviewer_bot_id)]);
      }
      if (who.length) {
        const p = el("p", "ticket-people hint");
        who.forEach(([cls, text], i) => {
          if (i) p.appendChild(document.createTextNode(" · "));
          p.appendChild(el("span", cls, text));
        });
        li.appendChild(p);
      }
      // ADR 0086: "Actually: X" (its owner ran none of it) or "Also X" (no reviewer).
      if (t.ran_line) li.appendChild(el("p", "ticket-ran hint", t.ran_line));
      // An approved ticket never "waits for" anything.
      if (t.stage !== "approved") {
        for (const w of t.waits_for || []) li.appendChild(el("p", "ticket-waits", w));
      }
      if (t.ball && t.ball.text) {
        const b = el("p", "ticket-ball", t.ball.text);
        b.dataset.holder = t.ball.holder;
        li.appendChild(b);
      }
    }
    if (picked) li.appendChild(ticketDetail(t));
    return li;
  }

  function ticketDetail(t) {
    const box = el("div", "ticket-detail");
    if (t.description) box.appendChild(el("p", "ticket-description", t.description));
    if (t.done_when) box.appendChild(el("p", "ticket-done-when hint", "Done when: " + t.done_when));
    for (const p of t.parts || []) {
      box.appendChild(el("p", "ticket-part hint", "Part " + p.label + ": " + String(p.stage).replace("_", " ") + (p.attempts ? " · " + p.attempts + (p.attempts === 1 ? " attempt" : " attempts") : "")));
    }
    settings.draw(t, box);
    const subs = view.subs.filter((s) => idEq(s.ticket_id, t.id));
    const h = el("h4", null, subs.length ? "Hand-overs" : "No hand-overs yet");
    box.appendChild(h);
    const ul = el("ul", "submission-list");
    for (const s of subs) ul.appendChild(submission(s));
    box.appendChild(ul);
    return box;
  }

  function approvedText(s) {
    switch (s.approved_by) {
      case "user":
        return "Approved by your word";
      case "no_reviewer":
        return "Approved: its checks passed and your check backed it (no reviewer)";
      case "routine":
        return "Approved as a routine's hand-over";
      case "one_go":
        return "Approved: done in one go";
      case "reviewer":
        return "Approved by " + (s.approved_by_bot_id !== null && s.approved_by_bot_id !== undefined ? botName(s.approved_by_bot_id) : "its reviewer");
      default:
        return "";
    }
  }

  function submission(s) {
    const li = el("li", "submission");
    li.dataset.id = s.id;
    li.dataset.state = s.state;
    const head = el("div", "submission-head");
    head.appendChild(el("span", "submission-who", "Hand-over " + s.id + (s.producer_bot_id !== null && s.producer_bot_id !== undefined ? " by " + botName(s.producer_bot_id) : "")));
    const st = el("span", "badge submission-state", SUB_STATE[s.state] || String(s.state));
    st.dataset.state = s.state;
    head.appendChild(st);
    li.appendChild(head);
    if (s.created_at) li.appendChild(el("p", "submission-time hint", fmtTime(s.created_at)));
    if (s.state === "approved") li.appendChild(el("p", "submission-approved", approvedText(s)));
    if (s.note) li.appendChild(el("p", "submission-note", s.note));
    for (const c of s.claims || []) li.appendChild(el("p", "submission-claim hint", "Claims: " + c));
    if (s.content) li.appendChild(el("p", "submission-content", s.content));
    if ((s.files || []).length) {
      const ul = el("ul", "submission-files");
      for (const f of s.files) {
        const row = el("li", "submission-file");
        row.appendChild(el("span", "file-path", f.path));
        const hash = el("code", "file-hash", String(f.sha256 || "").slice(0, 8));
        hash.title = "SHA-256 " + f.sha256;
        row.appendChild(hash);
        if (typeof f.size === "number") row.appendChild(el("span", "file-size hint", sizeText(f.size)));
        ul.appendChild(row);
      }
      li.appendChild(ul);
    }
    if ((s.checks || []).length) {
      const ul = el("ul", "submission-checks");
      for (const c of s.checks) ul.appendChild(submissionCheck(s, c));
      li.appendChild(ul);
    }
    for (const r of s.reviews || []) li.appendChild(review(r));
    return li;
  }

  function sizeText(n) {
    if (n < 1024) return n + " B";
    if (n < 1024 * 1024) return (n / 1024).toFixed(1) + " KiB";
    return (n / (1024 * 1024)).toFixed(1) + " MiB";
  }

  // ---------- checks ----------

  function ticketNumber(id) {
    const t = ((view.list && view.list.tickets) || []).find((x) => idEq(x.id, id));
    return t ? nn(t.number) : "ticket " + id;
  }

  const checkText = (c) => window.troupeCheckText(c, ticketNumber);

  function gateBadge(gate, toConfirm) {
    const b = el("span", "badge check-gate", toConfirm ? "To confirm" : gate ? "Gate" : "Not a gate");
    b.dataset.gate = toConfirm ? "to_confirm" : gate ? "gate" : "no";
    return b;
  }

  function confirmButton(checkId, key) {
    return button("Confirm", "confirm-check", (b) =>
      press(key, b, () => api("POST", "/v1/checks/" + enc(checkId) + "/confirm", {})).catch(() => {})
    );
  }

  function outputTail(text) {
    const pre = el("pre", "check-output", text);
    return pre;
  }

  // A seams run judged by a model looking at pictures: shown, holding nothing back.
  function referenceBadge() {
    const b = el("span", "badge for-reference", "For reference");
    b.title = "Judged by a model looking at pictures: it neither holds the hand-over back nor backs it";
    return b;
  }

  // A check bound to a hand-over, with its result for it.
  function submissionCheck(s, c) {
    const li = el("li", "sub-check");
    li.dataset.checkId = c.check_id;
    li.dataset.result = c.result;
    const full = view.checks.find((x) => idEq(x.id, c.check_id));
    const toConfirm = c.kind === "words" && !c.gate && !c.confirmed_by_user;
    const head = el("div", "check-head");
    head.appendChild(el("span", "check-text", full ? checkText(full) : String(c.kind)));
    head.appendChild(gateBadge(c.gate, toConfirm));
    const r = el("span", "badge check-result", RESULT[c.result] || String(c.result));
    r.dataset.result = c.result;
    head.appendChild(r);
    li.appendChild(head);
    if (c.for_reference) head.appendChild(referenceBadge());
    if (c.detail) li.appendChild(el("p", "check-detail hint", c.detail));
    if (c.output_tail) li.appendChild(outputTail(c.output_tail));
    if (toConfirm) {
      const key = "confirm:" + s.id + ":" + c.check_id;
      li.appendChild(confirmButton(c.check_id, key));
      const err = errorLine("confirm-error", key);
      li.appendChild(err);
    }
    return li;
  }

  function renderChecks() {
    const box = $("#job-checks");
    const ul = $("#job-check-list");
    ul.replaceChildren();
    // Checks from the person's words have their own section (words_checks.js, CW-21).
    const shown = view.checks.filter((c) => c.kind !== "words");
    box.hidden = !shown.length;
    // SC9: the checks held to the sample come last, under the sample's line, failures first;
    // a failure is also listed under "Needs a look" with its ticket and first reason.
    const rank = { failed: 0, error: 1, blocked: 1, passed: 3 };
    const standard = shown
      .filter((c) => c.kind === "standard")
      .sort((a, b) => {
        const ra = rank[((a.runs || [])[0] || {}).outcome] ?? 2;
        const rb = rank[((b.runs || [])[0] || {}).outcome] ?? 2;
        return ra - rb;
      });
    const ordered = shown.filter((c) => c.kind !== "standard");
    const failing = standard.filter((c) => ((c.runs || [])[0] || {}).outcome === "failed");
    for (const c of failing) {
      const li = el("li", "needs-a-look");
      li.dataset.checkId = c.id;
      li.appendChild(el("span", "check-text", "Needs a look: " + ticketNumber(c.ticket_id) + " — " + ((c.runs[0].detail || "").split("; ")[0])));
      ul.appendChild(li);
    }
    for (const c of ordered.concat(standard)) {
      if (c === standard[0]) {
        const sample = el("li", "held-to-sample");
        sample.appendChild(el("span", "check-text", "Held to the sample: " + ticketNumber(c.sample_ticket_id)));
        ul.appendChild(sample);
      }
      const li = el("li", "job-check" + heldTo(c.ticket_id));
      li.dataset.checkId = c.id;
      li.dataset.kind = c.kind;
      const toConfirm = c.to_confirm !== undefined ? !!c.to_confirm : c.kind === "words" && !c.confirmed;
      const head = el("div", "check-head");
      const where = c.ticket_id !== null && c.ticket_id !== undefined ? ticketNumber(c.ticket_id) + " · " : "";
      head.appendChild(el("span", "check-text", where + checkText(c)));
      head.appendChild(gateBadge(!!c.gate, toConfirm));
      const run = (c.runs || [])[0];
      if (run) {
        const r = el("span", "badge check-result", OUTCOME[run.outcome] || String(run.outcome));
        r.dataset.outcome = run.outcome;
        head.appendChild(r);
        if (run.for_reference) head.appendChild(referenceBadge());
      }
      li.appendChild(head);
      if (c.line) li.appendChild(el("p", "check-line hint", "Done when: " + c.line + (c.matches_line === false ? " (no longer in the Done when)" : "")));
      if (run && run.detail) li.appendChild(el("p", "check-detail hint", run.detail));
      if (run && run.output_tail) li.appendChild(outputTail(run.output_tail));
      if (toConfirm) {
        const key = "confirm:job:" + c.id;
        li.appendChild(confirmButton(c.id, key));
        const err = errorLine("confirm-error", key);
        li.appendChild(err);
      }
      ul.appendChild(li);
    }
  }

  // ---------- reviews ----------

  function review(r) {
    const box = el("div", "review");
    box.dataset.id = r.id;
    box.dataset.outcome = r.outcome;
    box.dataset.result = r.result;
    box.dataset.sameModel = String(!!r.same_model);
    const head = el("div", "review-head");
    const who = botName(r.reviewer_bot_id);
    head.appendChild(el("span", "review-who", who + (r.outcome === "approve" ? " approved it" : " sent it back")));
    if (r.result === "refused") head.appendChild(el("span", "badge review-result", "Refused"));
    else if (r.result === "awaiting_user") head.appendChild(el("span", "badge review-result", "Waits for your word"));
    const m = el("span", "badge " + (r.same_model ? "same-model" : "other-model"), r.same_model ? "Same model" : "Another model");
    m.title = r.same_model
      ? "The reviewer ran on the maker's model (" + (r.reviewer_model || "unknown") + " / " + (r.producer_model || "unknown") + "); an unknown model counts as the same"
      : "Reviewer: " + (r.reviewer_model || "unknown") + " · maker: " + (r.producer_model || "unknown");
    head.appendChild(m);
    box.appendChild(head);
    if (r.note) box.appendChild(el("p", "review-note", r.note));
    for (const why of r.reasons || []) box.appendChild(el("p", "review-reason hint", why));
    if ((r.verdicts || []).length) {
      const ul = el("ul", "verdicts");
      for (const v of r.verdicts) {
        const li = el("li", "verdict");
        li.dataset.verdict = v.verdict;
        li.appendChild(el("span", "verdict-item", v.requirement_id));
        li.appendChild(el("span", "badge verdict-word", VERDICT[v.verdict] || String(v.verdict)));
        if (v.evidence) li.appendChild(el("span", "verdict-evidence", v.evidence));
        ul.appendChild(li);
      }
      box.appendChild(ul);
    }
    return box;
  }

  // ---------- wiring ----------

  // Called by selectSession: another conversation closes the job view.
  function enter() {
    close();
  }

  function bind() {
    $("#job-view-back").addEventListener("click", back);
    const ball = el("p", "job-ball");
    ball.id = "job-ball";
    ball.hidden = true;
    $("#job-counter").after(ball);
    const more = el("div", "job-extras");
    $("#job-error").before(more);
    for (const x of extras) x.mount(more);
    $("#job-view-close").addEventListener("click", close);
    // holds.js marks the whole page offline when its own stream drops.
    new MutationObserver(() => {
      if (view.planId === null) return;
      if (document.body.classList.contains("daemon-offline")) setOnline(false);
    }).observe(document.body, { attributes: true, attributeFilter: ["class"] });
  }

  return { bind, enter, jobButton, open, close, unpick, pick, shown: () => view.planId };
};
