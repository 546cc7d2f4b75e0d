// Troupe web page: groups — the conversation list with each group's Bot↔Bot directs, the
// "New group" form, member chips, the group settings (members and the lead), speakers and
// @mentions in lines, @ completion in the composer, and ask cards.
// app.js creates it with the shared state and helpers it needs.
"use strict";

window.troupeGroup = function (ctx) {
  const { $, el, state, api, showError, loadSessions, selectSession, setRunning, sessionTitle, scriptedSuffix } =
    ctx;

  const STATES = {
    idle: "idle",
    thinking: "thinking",
    running: "working",
    waiting_ask: "waiting on you",
  };

  const isGroup = (s) => !!s && s.kind === "group";
  const isBotDirect = (s) => !!s && s.kind === "bot_direct";
  const liveBots = () => [...state.bots.values()].filter((b) => !b.archived);
  const sid = () => encodeURIComponent(state.current.id);

  function botName(id) {
    const b = state.bots.get(id);
    if (b) return b.name;
    const m = state.current && (state.current.members || []).find((x) => x.bot_id === id);
    return m ? m.name : "Bot " + id;
  }

  // ---------- the conversation list ----------

  function waitingOnYou(s) {
    return (s.members || []).some((m) => m.state === "waiting_ask");
  }

  // Work here that goes on only with the person's Continue: a direct's pause, or a member's.
  function pausedHere(s) {
    return !!s.paused || (s.members || []).some((m) => m.paused);
  }

  function sessionItem(s, sub) {
    const li = el("li", "session-item" + (sub ? " sub" : ""));
    li.dataset.id = s.id;
    li.dataset.kind = s.kind || "direct";
    li.dataset.testid = "session-item";
    if (state.current && state.current.id === s.id) li.classList.add("active");
    const btn = el("button", "session-button");
    btn.type = "button";
    const top = el("span", "session-title", sessionTitle(s));
    const running = state.current && state.current.id === s.id ? state.running : s.running;
    if (running) {
      const dot = el("span", "dot");
      dot.title = "working";
      dot.setAttribute("aria-label", "working");
      top.prepend(dot);
    }
    // A Bot's question waits on the person here: said in the list, so it is seen from
    // another conversation too.
    if (waitingOnYou(s)) top.appendChild(el("span", "badge waiting", "waiting on you"));
    if (pausedHere(s)) top.appendChild(el("span", "badge paused", "paused"));
    btn.appendChild(top);
    const names = (s.bot_ids || []).map((id) => {
      const b = state.bots.get(id);
      const suffix = scriptedSuffix(b);
      return b ? b.name + (suffix ? " · " + suffix : "") : "Bot " + id;
    });
    let line = names.join(", ");
    if (isGroup(s)) line = "Group · " + line;
    else if (isBotDirect(s)) line = "Between Bots · read only";
    btn.appendChild(el("span", "session-bots hint", line));
    btn.addEventListener("click", () => selectSession(s.id));
    li.appendChild(btn);
    return li;
  }

  // Groups and directs, newest first; a Bot↔Bot direct sits under the conversation it was
  // opened from (indented), oldest first, or on its own when that one is not listed.
  let lastList = "";
  function renderSessionList() {
    const list = $("#sessions");
    // Only a change redraws the list: a redraw under the pointer or the keyboard loses them.
    const key = JSON.stringify([
      state.current && state.current.id,
      state.running,
      [...state.bots.values()].map((b) => [b.id, b.name, scriptedSuffix(b)]),
      state.sessions.map((s) => [s.id, s.kind, sessionTitle(s), s.bot_ids, s.running, s.origin_session_id, waitingOnYou(s), pausedHere(s)]),
    ]);
    if (key === lastList && list.childElementCount) return;
    lastList = key;
    list.replaceChildren();
    const byId = new Map(state.sessions.map((s) => [s.id, s]));
    const under = new Map();
    const top = [];
    for (const s of state.sessions) {
      const origin = isBotDirect(s) ? s.origin_session_id : null;
      if (origin !== null && origin !== undefined && byId.has(origin)) {
        if (!under.has(origin)) under.set(origin, []);
        under.get(origin).push(s);
      } else {
        top.push(s);
      }
    }
    top.sort((a, b) => b.id - a.id);
    for (const s of top) {
      list.appendChild(sessionItem(s, false));
      for (const d of (under.get(s.id) || []).sort((a, b) => a.id - b.id)) {
        list.appendChild(sessionItem(d, true));
      }
    }
    $("#sessions-empty").hidden = state.sessions.length > 0;
  }

  // ---------- New group ----------

  function openNewGroupForm() {
    const form = $("#new-group-form");
    showError($("#group-form-error"), null);
    $("#new-session-form").hidden = true;
    const box = $("#group-bots");
    box.querySelectorAll(".group-bot").forEach((n) => n.remove());
    for (const b of liveBots()) {
      const label = el("label", "group-bot");
      const input = el("input");
      input.type = "checkbox";
      input.value = String(b.id);
      input.name = "group-bot";
      label.appendChild(input);
      const suffix = scriptedSuffix(b);
      label.appendChild(el("span", null, b.name + (suffix ? " (" + suffix + ")" : "")));
      box.appendChild(label);
    }
    if (!liveBots().length) {
      showError($("#group-form-error"), "Add a Bot first (Bots panel below).");
      $("#bots-details").open = true;
    }
    form.hidden = false;
    $("#group-title").focus();
  }

  async function submitGroup(ev) {
    ev.preventDefault();
    const errEl = $("#group-form-error");
    showError(errEl, null);
    const ids = [...document.querySelectorAll("#group-bots input:checked")].map((i) => Number(i.value));
    if (!ids.length) {
      showError(errEl, "Pick at least one Bot.");
      return;
    }
    const body = { kind: "group", bot_ids: ids };
    const title = $("#group-title").value.trim();
    if (title) body.title = title;
    const folder = $("#group-folder").value.trim();
    if (folder) body.workspace = folder;
    const btn = $("#group-create");
    btn.disabled = true;
    try {
      const s = await api("POST", "/v1/sessions", body);
      $("#new-group-form").reset();
      $("#new-group-form").hidden = true;
      await loadSessions();
      await selectSession(s.id);
    } catch (e) {
      showError(errEl, e);
    } finally {
      btn.disabled = false;
    }
  }

  // ---------- the open conversation: mode, chips, settings ----------

  // Called by selectSession once the transcript is cleared: shows what fits this kind.
  function enter() {
    const s = state.current;
    const group = isGroup(s);
    const readOnly = isBotDirect(s);
    $("#group-bar").hidden = !s; // it also holds the Jobs button (work.js), in every kind
    $("#group-settings-toggle").hidden = !group;
    showSettings(false);
    $("#readonly-note").hidden = !readOnly;
    $("#composer-form").hidden = readOnly;
    closeMenu();
    state.lead = null;
    renderMembers();
  }

  function renderMembers() {
    const s = state.current;
    if (!s) return;
    const chips = $("#member-chips");
    chips.replaceChildren();
    if (isGroup(s) || isBotDirect(s)) {
      for (const m of s.members || []) {
        const chip = el("li", "chip");
        chip.dataset.botId = m.bot_id;
        chip.dataset.state = m.state;
        // An idle Bot a stop keeps from working says so: a line to it waits for the lift.
        const stopped = m.state === "idle" && !!ctx.isHeld && ctx.isHeld(m.bot_id);
        if (stopped) chip.dataset.held = "true";
        const label = stopped ? "stopped" : STATES[m.state] || String(m.state);
        chip.appendChild(el("span", "chip-dot"));
        chip.appendChild(el("span", "chip-name", m.name));
        chip.appendChild(el("span", "chip-state", label));
        if (m.is_lead) chip.appendChild(el("span", "badge lead", "Lead"));
        chip.title =
          m.name + ": " + label + (stopped ? " (Stops: lift it to let it work)" : "") + (m.is_lead ? " · lead" : "");
        chips.appendChild(chip);
      }
    }
    renderSub();
    renderComposerHint();
    renameStreams();
    if (!$("#group-settings").hidden) renderSettings();
    if (ctx.onMembers) ctx.onMembers();
  }

  function renderSub() {
    const s = state.current;
    if (isGroup(s)) {
      const lead = (s.members || []).find((m) => m.is_lead);
      const n = (s.members || []).length;
      $("#conv-sub").textContent =
        "Group of " + n + (n === 1 ? " Bot" : " Bots") + " · " +
        (lead ? "lines without an @name go to the lead, " + lead.name : "no lead: each Bot decides whether a line is for it");
    } else if (isBotDirect(s)) {
      const origin = state.sessions.find((x) => x.id === s.origin_session_id);
      const names = (s.bot_ids || []).map(botName).join(" and ");
      let t = "Between " + names;
      if (s.opened_by_bot_id !== null && s.opened_by_bot_id !== undefined) t += " · opened by " + botName(s.opened_by_bot_id);
      if (origin) t += " from \u201c" + sessionTitle(origin) + "\u201d";
      $("#conv-sub").textContent = t;
    }
  }

  // A plain line typed while a Bot waits on its question is that question's answer.
  function renderComposerHint() {
    const s = state.current;
    const ta = $("#composer");
    if (!isGroup(s)) {
      if (ta.dataset.groupHint) {
        ta.placeholder = ta.dataset.groupHint;
        delete ta.dataset.groupHint;
      }
      return;
    }
    if (!ta.dataset.groupHint) ta.dataset.groupHint = ta.placeholder;
    const waiting = (s.members || []).filter((m) => m.state === "waiting_ask").map((m) => m.name);
    ta.placeholder = waiting.length
      ? "A line you send now answers " + waiting.join(" and ") + "'s question"
      : "Write to the group; @Name addresses a Bot (Enter sends)";
  }

  // A streaming bubble is named after the member whose turn it is, once that is known.
  function renameStreams() {
    for (const m of (state.current && state.current.members) || []) {
      if (m.turn_id === null || m.turn_id === undefined) continue;
      const st = state.streams.get(String(m.turn_id));
      const who = st && st.el.querySelector(".meta .who");
      if (who) who.textContent = m.name;
    }
  }

  function speakerOfTurn(turnId) {
    const m = ((state.current && state.current.members) || []).find((x) => String(x.turn_id) === String(turnId));
    if (m) return m.name;
    return botName(((state.current && state.current.bot_ids) || [])[0]);
  }

  // Re-reads the open conversation (members, their states, the lead); calls that arrive
  // while one is in flight fold into one follow-up.
  const refreshView = window.troupeHttp.reloader(async () => {
    if (!state.current || !(isGroup(state.current) || isBotDirect(state.current))) return;
    const gen = state.gen;
    let v;
    try {
      v = await api("GET", "/v1/sessions/" + sid());
    } catch (e) {
      return;
    }
    if (gen !== state.gen || !state.current || v.id !== state.current.id) return;
    applyView(v);
    if (!$("#group-settings").hidden) await loadLead(gen);
  });

  function applyView(v) {
    Object.assign(state.current, v);
    const i = state.sessions.findIndex((s) => s.id === v.id);
    if (i >= 0) state.sessions[i] = state.current;
    const busy = v.running || (v.members || []).some((m) => m.state === "running");
    if (busy !== state.running) setRunning(busy);
    else renderSessionList();
    renderMembers();
  }

  // ---------- group settings ----------

  function showSettings(show) {
    $("#group-settings").hidden = !show;
    lastSettings = "";
    $("#group-settings-toggle").setAttribute("aria-expanded", String(show));
    showError($("#group-error"), null);
    if (show) {
      renderSettings();
      loadLead(state.gen);
    }
  }

  async function loadLead(gen) {
    if (!isGroup(state.current)) return;
    try {
      const l = await api("GET", "/v1/sessions/" + sid() + "/lead");
      if (gen !== state.gen) return;
      state.lead = l;
      renderSettings();
    } catch (e) {
      if (gen === state.gen) showError($("#group-error"), e);
    }
  }

  let lastSettings = "";
  function renderSettings() {
    const s = state.current;
    if (!isGroup(s)) return;
    const list = $("#group-members");
    const lead = state.lead;
    const members = s.members || [];
    // Redrawn only on a change, so a button is not swapped out under a click.
    const key = JSON.stringify([s.id, members, lead && lead.suggestion, liveBots().map((b) => b.id)]);
    if (key === lastSettings) return;
    lastSettings = key;
    list.replaceChildren();
    for (const m of members) {
      const li = el("li", "member-row");
      li.dataset.botId = m.bot_id;
      const who = el("div", "member-who");
      who.appendChild(el("span", "member-name", m.name));
      if (m.is_lead) who.appendChild(el("span", "badge lead", "Lead"));
      who.appendChild(el("span", "member-state hint", STATES[m.state] || String(m.state)));
      const sug = lead && lead.suggestion;
      if (sug && sug.bot_id === m.bot_id && !m.is_lead) {
        const n = sug.handoffs;
        who.appendChild(
          el("span", "member-suggestion hint", "Suggested: " + n + (n === 1 ? " handoff" : " handoffs") + " in the last 7 days")
        );
      }
      li.appendChild(who);
      const buttons = el("div", "member-buttons");
      const leadBtn = el("button", "secondary " + (m.is_lead ? "remove-lead" : "make-lead"), m.is_lead ? "Remove lead" : "Make lead");
      leadBtn.type = "button";
      leadBtn.addEventListener("click", () => setLead(leadBtn, m.is_lead ? null : m.bot_id));
      buttons.appendChild(leadBtn);
      const rm = el("button", "secondary remove-member", "Remove");
      rm.type = "button";
      rm.disabled = members.length <= 1;
      if (rm.disabled) rm.title = "The last Bot of a group cannot leave";
      rm.setAttribute("aria-label", "Remove " + m.name + " from the group");
      rm.addEventListener("click", () => memberAction(rm, "DELETE", "/members/" + encodeURIComponent(m.bot_id)));
      buttons.appendChild(rm);
      li.appendChild(buttons);
      list.appendChild(li);
    }
    const sel = $("#group-add-bot");
    const prev = sel.value;
    sel.replaceChildren();
    for (const b of liveBots()) {
      if (members.some((m) => m.bot_id === b.id)) continue;
      const o = el("option", null, b.name);
      o.value = String(b.id);
      sel.appendChild(o);
    }
    if (prev && [...sel.options].some((o) => o.value === prev)) sel.value = prev;
    const none = sel.options.length === 0;
    sel.disabled = none;
    $("#group-add").disabled = none;
    $("#group-add-none").hidden = !none;
  }

  async function setLead(btn, botId) {
    const gen = state.gen;
    showError($("#group-error"), null);
    btn.disabled = true;
    try {
      const l = await api("PUT", "/v1/sessions/" + sid() + "/lead", { bot_id: botId, confirmed: true });
      if (gen !== state.gen) return;
      state.lead = l;
      for (const m of state.current.members || []) m.is_lead = l.lead !== null && m.bot_id === l.lead;
      renderMembers();
    } catch (e) {
      if (gen === state.gen) showError($("#group-error"), e);
    } finally {
      btn.disabled = false;
      if (gen === state.gen) refreshView();
    }
  }

  async function memberAction(btn, method, suffix, body) {
    const gen = state.gen;
    showError($("#group-error"), null);
    btn.disabled = true;
    try {
      const v = await api(method, "/v1/sessions/" + sid() + suffix, body);
      if (gen !== state.gen) return;
      applyView(v);
      await loadLead(gen);
    } catch (e) {
      if (gen === state.gen) showError($("#group-error"), e);
      btn.disabled = false;
    }
  }

  // ---------- lines: mentions and ask cards ----------

  // Bot names (and "everyone"), longest first, for finding `@Name` in a line.
  function mentionNames() {
    const names = liveBots().map((b) => b.name);
    names.push("everyone");
    return names.sort((a, b) => b.length - a.length);
  }

  const NOT_BEFORE = /[A-Za-z0-9_\-\/\\]/; // an `@` right after these is no mention (MEN-6)
  const WORD = /[\p{L}\p{N}_]/u;

  // The text with each `@Name` of a known Bot (or @everyone) in a highlighted span.
  function appendWithMentions(parent, text) {
    const names = mentionNames();
    let plain = 0;
    let lastEnd = -1;
    for (let i = text.indexOf("@"); i !== -1; i = text.indexOf("@", i + 1)) {
      const prev = i > 0 ? text[i - 1] : "";
      // `@A/@B` names both; any other `@` inside a word, path or address names nobody.
      if (prev && NOT_BEFORE.test(prev) && !(prev === "/" && lastEnd === i - 1)) continue;
      const rest = text.slice(i + 1);
      const name = names.find(
        (n) => rest.slice(0, n.length).toLowerCase() === n.toLowerCase() && !WORD.test(rest.charAt(n.length))
      );
      if (!name) continue;
      if (i > plain) parent.appendChild(document.createTextNode(text.slice(plain, i)));
      parent.appendChild(el("span", "mention", text.slice(i, i + 1 + name.length)));
      plain = lastEnd = i + 1 + name.length;
      i = plain - 1;
    }
    if (plain < text.length) parent.appendChild(document.createTextNode(text.slice(plain)));
  }

  // Writes a finished line's body when it needs more than plain text; false leaves it to app.js.
  function renderBody(node, m) {
    const body = node.querySelector(".body");
    if (m.kind === "system") node.classList.add("app-notice");
    if (m.kind === "ask" && m.ask) {
      node.classList.add("ask");
      renderAsk(body, m);
      return true;
    }
    if (!(isGroup(state.current) || isBotDirect(state.current))) return false;
    body.replaceChildren();
    appendWithMentions(body, m.body || "");
    return true;
  }

  function askState(a) {
    if (a.answer) return "answered";
    if (a.closed_at !== null && a.closed_at !== undefined) return "closed";
    return "open";
  }

  // Why a question takes no answer any more (WQ-8 for a work question card).
  function closedWords(why) {
    if (why === "superseded") {
      return "This work was waiting for your answer and went on without it: this question takes no answer now. Say what you want in the conversation.";
    }
    if (why === "closed") return "Its work closed: this question takes no answer.";
    return "Its turn was stopped: this question takes no answer.";
  }

  function renderAsk(body, m) {
    const a = m.ask;
    const st = askState(a);
    const old = body.querySelector(".ask-card");
    // An open card keeps what the person has picked and written so far.
    if (old && old.dataset.state === st && st === "open") return;
    body.replaceChildren();
    const card = el("div", "ask-card");
    card.dataset.state = st;
    card.dataset.testid = "ask-card";
    card.appendChild(el("p", "ask-question", a.question || m.body || ""));
    const options = a.options || [];
    if (st === "answered") {
      const picked = (a.answer.options || []).map((i) => (options[i] ? options[i].label : "option " + (i + 1)));
      const done = el("div", "ask-answer");
      done.appendChild(el("p", "ask-answer-head hint", "Your answer"));
      if (picked.length) {
        const ul = el("ul", "ask-picked");
        for (const p of picked) ul.appendChild(el("li", null, p));
        done.appendChild(ul);
      }
      if (a.answer.text) done.appendChild(el("p", "ask-words", a.answer.text));
      card.appendChild(done);
    } else if (st === "closed") {
      card.appendChild(el("p", "ask-closed hint", closedWords(a.closed_why)));
      if (options.length) {
        const ul = el("ul", "ask-picked muted");
        for (const o of options) ul.appendChild(el("li", null, o.label));
        card.appendChild(ul);
      }
    } else {
      card.appendChild(askForm(m, options, !!a.multiple));
    }
    body.appendChild(card);
  }

  function askForm(m, options, multiple) {
    const form = el("form", "ask-form");
    const group = el("div", "ask-options");
    group.setAttribute("role", multiple ? "group" : "radiogroup");
    group.setAttribute("aria-label", multiple ? "Pick any that fit" : "Pick one");
    options.forEach((o, i) => {
      let pick;
      if (multiple) {
        pick = el("label", "ask-option");
        const box = el("input");
        box.type = "checkbox";
        box.value = String(i);
        pick.appendChild(box);
      } else {
        pick = el("button", "ask-option");
        pick.type = "button";
        pick.setAttribute("role", "radio");
        pick.setAttribute("aria-checked", "false");
        pick.dataset.index = String(i);
        pick.addEventListener("click", () => {
          const was = pick.getAttribute("aria-checked") === "true";
          group.querySelectorAll(".ask-option").forEach((b) => b.setAttribute("aria-checked", "false"));
          pick.setAttribute("aria-checked", String(!was)); // a second click takes the pick back
        });
      }
      pick.appendChild(el("span", "ask-label", o.label));
      if (i === 0) pick.appendChild(el("span", "badge recommended", "Recommended"));
      if (o.description) pick.appendChild(el("span", "ask-desc hint", o.description));
      group.appendChild(pick);
    });
    if (options.length) form.appendChild(group);
    const id = "ask-text-" + m.id;
    const label = el("label", null, options.length ? "Your words (optional with a pick)" : "Your answer");
    label.htmlFor = id;
    form.appendChild(label);
    const ta = el("textarea", "ask-text");
    ta.id = id;
    ta.rows = 2;
    form.appendChild(ta);
    const row = el("div", "row");
    const send = el("button", "ask-send", "Send");
    send.type = "submit";
    row.appendChild(send);
    form.appendChild(row);
    const err = el("p", "error ask-error");
    err.setAttribute("role", "alert");
    err.hidden = true;
    form.appendChild(err);
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      const picks = multiple
        ? [...group.querySelectorAll("input:checked")].map((b) => Number(b.value))
        : [...group.querySelectorAll('.ask-option[aria-checked="true"]')].map((b) => Number(b.dataset.index));
      answer(m, picks, ta.value.trim(), send, err);
    });
    return form;
  }

  async function answer(m, picks, text, btn, err) {
    showError(err, null);
    if (!picks.length && !text) {
      showError(err, "Pick an option or write an answer.");
      return;
    }
    const body = {};
    if (picks.length) body.options = picks;
    if (text) body.text = text;
    const gen = state.gen;
    btn.disabled = true;
    try {
      const line = await api("POST", "/v1/messages/" + encodeURIComponent(m.id) + "/answer", body);
      if (gen === state.gen) ctx.upsertMessage(line);
    } catch (e) {
      if (gen !== state.gen) return;
      showError(err, e);
      btn.disabled = false;
    } finally {
      if (gen === state.gen) refreshView();
    }
  }

  // ---------- @ completion in the composer ----------

  const menu = { open: false, items: [], index: 0, start: 0, end: 0 };

  // The `@query` just before the caret, if any: names may contain spaces.
  function mentionQuery(ta) {
    const caret = ta.selectionStart;
    if (caret !== ta.selectionEnd) return null;
    const before = ta.value.slice(0, caret);
    const at = before.lastIndexOf("@");
    if (at === -1 || caret - at > 41) return null;
    const prev = at > 0 ? before[at - 1] : "";
    if (prev && NOT_BEFORE.test(prev) && prev !== "/") return null;
    const q = before.slice(at + 1);
    if (/[\n@]/.test(q)) return null;
    return { start: at, end: caret, q: q.toLowerCase() };
  }

  function candidates(q) {
    const members = new Set(((state.current && state.current.members) || []).map((m) => m.bot_id));
    const out = liveBots()
      .filter((b) => b.name.toLowerCase().startsWith(q))
      .sort((a, b) => (members.has(b.id) ? 1 : 0) - (members.has(a.id) ? 1 : 0) || a.name.localeCompare(b.name))
      .map((b) => ({ name: b.name, note: members.has(b.id) ? "" : "joins the group" }));
    if ("everyone".startsWith(q)) out.push({ name: "everyone", note: "all Bots here" });
    return out;
  }

  function updateMenu() {
    const ta = $("#composer");
    const found = isGroup(state.current) ? mentionQuery(ta) : null;
    const items = found ? candidates(found.q) : [];
    // A finished name followed by a space matches nothing any more: the menu closes.
    if (!found || !items.length) {
      closeMenu();
      return;
    }
    menu.open = true;
    menu.items = items;
    menu.index = Math.min(menu.index, items.length - 1);
    menu.start = found.start;
    menu.end = found.end;
    const list = $("#mention-menu");
    list.replaceChildren();
    items.forEach((it, i) => {
      const li = el("li", "mention-option");
      li.id = "mention-opt-" + i;
      li.setAttribute("role", "option");
      li.setAttribute("aria-selected", String(i === menu.index));
      li.appendChild(el("span", "mention-name", "@" + it.name));
      if (it.note) li.appendChild(el("span", "hint", " " + it.note));
      // mousedown, not click: the textarea keeps focus and the caret.
      li.addEventListener("mousedown", (e) => {
        e.preventDefault();
        pick(i);
      });
      list.appendChild(li);
    });
    list.hidden = false;
    ta.setAttribute("aria-expanded", "true");
    ta.setAttribute("aria-activedescendant", "mention-opt-" + menu.index);
  }

  function closeMenu() {
    menu.open = false;
    menu.items = [];
    menu.index = 0;
    $("#mention-menu").hidden = true;
    $("#mention-menu").replaceChildren();
    $("#composer").setAttribute("aria-expanded", "false");
    $("#composer").removeAttribute("aria-activedescendant");
  }

  function pick(i) {
    const it = menu.items[i];
    if (!it) return;
    const ta = $("#composer");
    const text = "@" + it.name + " ";
    ta.value = ta.value.slice(0, menu.start) + text + ta.value.slice(menu.end);
    const caret = menu.start + text.length;
    ta.setSelectionRange(caret, caret);
    closeMenu();
    ta.focus();
  }

  // Keys for the menu; true when the key was used (app.js then does not send).
  function composerKey(e) {
    if (!menu.open || e.isComposing) return false;
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      const n = menu.items.length;
      menu.index = (menu.index + (e.key === "ArrowDown" ? 1 : n - 1)) % n;
      updateMenu();
    } else if (e.key === "Enter" || e.key === "Tab") {
      pick(menu.index);
    } else if (e.key === "Escape") {
      closeMenu();
    } else {
      return false;
    }
    e.preventDefault();
    return true;
  }

  // ---------- events ----------

  function listen(es, live) {
    const parse = window.troupeHttp.parseEvent;
    for (const kind of ["ask_created", "ask_answered", "ask_closed"]) {
      es.addEventListener(kind, (e) => {
        const ev = parse(e);
        if (!live()) return;
        if (ev && ev.payload && ev.payload.message) ctx.upsertMessage(ev.payload.message);
        refreshView();
      });
    }
    for (const kind of ["member_added", "member_removed", "group_lead_confirmed", "line_routed", "session_message", "run_started"]) {
      es.addEventListener(kind, () => {
        if (live()) refreshView();
      });
    }
    // A Bot may have opened a Bot↔Bot direct from here: re-read the list.
    es.addEventListener("run_ended", () => {
      if (!live()) return;
      refreshView();
      if (isGroup(state.current)) loadSessions().catch(() => {});
    });
  }

  function bind() {
    $("#new-group").addEventListener("click", openNewGroupForm);
    $("#group-cancel").addEventListener("click", () => {
      $("#new-group-form").hidden = true;
    });
    $("#new-group-form").addEventListener("submit", submitGroup);
    $("#group-settings-toggle").addEventListener("click", () => showSettings($("#group-settings").hidden));
    $("#group-settings-close").addEventListener("click", () => showSettings(false));
    $("#group-add").addEventListener("click", (e) => {
      const v = $("#group-add-bot").value;
      if (v) memberAction(e.currentTarget, "POST", "/members", { bot_id: Number(v) });
    });
    const ta = $("#composer");
    ta.setAttribute("aria-autocomplete", "list");
    ta.setAttribute("aria-controls", "mention-menu");
    ta.addEventListener("input", updateMenu);
    ta.addEventListener("click", updateMenu);
    ta.addEventListener("blur", closeMenu);
  }

  return { bind, renderSessionList, enter, renderMembers, renderBody, speakerOfTurn, refreshView, composerKey, listen, isReadOnly: () => isBotDirect(state.current), isGroup: () => isGroup(state.current) };
};
