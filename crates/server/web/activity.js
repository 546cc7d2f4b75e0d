// Troupe web page: what each working Bot of the open conversation is doing, in one line under
// the header, and, in a group, each member whose work is paused, with its Continue and Abandon.
// A Bot can work for minutes with nothing said (tool after tool); without this the person saw
// only "working", even when every call failed the same way.
// app.js creates it with the shared state and helpers it needs.
"use strict";

window.troupeActivity = function (ctx) {
  const { $, el, state, api, refreshView } = ctx;
  const turns = new Map(); // turn id -> {bot, tool, writing, hops, calls, note}
  const readOnce = new Set(); // turn ids whose record has been read at least once
  const pending = new Map(); // turn id -> timer of its next read
  const READ_EVERY_MS = 1500; // a Bot calls tools faster than the page needs to re-read them

  function botName(id) {
    const bot = state.bots.get(id);
    return bot ? bot.name : "A Bot";
  }

  function render() {
    const box = $("#activity");
    box.replaceChildren();
    for (const [id, t] of turns) {
      const li = el("li", "activity-item");
      li.dataset.turnId = id;
      const parts = [];
      if (t.hops) parts.push("step " + t.hops);
      if (t.calls) parts.push(t.calls + (t.calls === 1 ? " tool call" : " tool calls"));
      // A call still being written can take minutes (a long file, or a model repeating itself).
      if (t.writing) parts.push("writing " + t.writing.name + ": " + t.writing.chars.toLocaleString() + " characters");
      else if (t.tool) parts.push("last " + t.tool);
      li.appendChild(el("span", "activity-bot", t.bot === null ? "Working" : botName(t.bot)));
      li.appendChild(el("span", "activity-what", parts.length ? parts.join(" · ") : "thinking"));
      if (t.note) li.appendChild(el("span", "activity-note", t.note));
      box.appendChild(li);
    }
    box.hidden = turns.size === 0;
  }

  // The stored turn: its step and call counts and the last failure streak it reported.
  async function read(id, gen) {
    readOnce.add(id);
    let t;
    try {
      t = await api("GET", "/v1/turns/" + encodeURIComponent(id));
    } catch (e) {
      return;
    }
    if (gen !== state.gen || !t) return;
    apply(t);
    render();
  }

  // A turn as the API gives it (`TurnView`): shown while it runs, dropped once it ended.
  function apply(t) {
    const id = String(t.id);
    readOnce.add(id);
    if (t.status !== "running") {
      turns.delete(id);
      return;
    }
    const cur = turns.get(id) || { tool: null, writing: null };
    const notes = t.failure_notes || [];
    turns.set(id, {
      bot: t.bot_id === undefined ? null : t.bot_id,
      tool: cur.tool,
      // A new stored step means the call that was being written has been made.
      writing: cur.hops === t.hops ? cur.writing : null,
      hops: t.hops,
      calls: t.tool_calls,
      note: notes.length ? notes[notes.length - 1] : null,
    });
  }

  function seen(id, tool, gen) {
    const key = String(id);
    const cur = turns.get(key) || { bot: null, hops: 0, calls: 0, note: null };
    cur.tool = tool;
    cur.writing = null;
    turns.set(key, cur);
    render();
    if (!readOnce.has(key)) read(key, gen);
    // The step's counts are stored once its tools have run: read again a moment later (one
    // read per moment however many tools start), so they do not stay a step behind.
    if (!pending.has(key)) {
      pending.set(key, setTimeout(() => {
        pending.delete(key);
        if (gen === state.gen && turns.has(key)) read(key, gen);
      }, READ_EVERY_MS));
    }
  }

  // Another conversation: nothing of the last one's stays.
  function enter() {
    turns.clear();
    readOnce.clear();
    for (const timer of pending.values()) clearTimeout(timer);
    pending.clear();
    render();
  }

  // The opened conversation's turns (read once by app.js): one that runs shows at once.
  function seed(list) {
    for (const t of list) if (t.status === "running") apply(t);
    render();
  }

  function listen(es, live) {
    const parse = window.troupeHttp.parseEvent;
    es.addEventListener("tool_started", (e) => {
      const n = parse(e);
      if (live() && n && n.turn_id !== undefined) seen(n.turn_id, n.name, state.gen);
    });
    es.addEventListener("tool_writing", (e) => {
      const n = parse(e);
      if (!live() || !n || n.turn_id === undefined) return;
      const key = String(n.turn_id);
      if (!turns.has(key)) seen(key, n.name, state.gen);
      turns.get(key).writing = { name: n.name, chars: n.chars };
      render();
    });
    es.addEventListener("run_started", (e) => {
      const ev = parse(e);
      if (live() && ev && ev.run_id !== undefined && ev.run_id !== null) read(String(ev.run_id), state.gen);
    });
    es.addEventListener("run_ended", (e) => {
      const ev = parse(e);
      if (!live() || !ev || ev.run_id === undefined || ev.run_id === null) return;
      turns.delete(String(ev.run_id));
      render();
    });
  }

  // ---------- a group's paused members ----------

  const PAUSED = {
    failed: "its last turn failed",
    aborted: "its turn was stopped",
    interrupted: "its turn was cut off",
    workflow: "its workflow paused it",
  };
  let shownPauses = "";

  // A direct's pause is the conversation's own banner (#paused); in a group each member pauses
  // on its own, so each gets its line and its buttons.
  function renderPauses() {
    const s = state.current;
    const members = s && s.kind !== "direct" ? (s.members || []).filter((m) => m.paused) : [];
    const key = JSON.stringify([s && s.id, members.map((m) => [m.bot_id, m.paused])]);
    if (key === shownPauses) return;
    shownPauses = key;
    const box = $("#member-pauses");
    box.replaceChildren();
    for (const m of members) {
      const li = el("li", "notice member-paused");
      li.dataset.botId = m.bot_id;
      let text = m.name + " will not go on by itself: " + (PAUSED[m.paused.reason] || m.paused.reason);
      if (m.paused.description) text += " (" + m.paused.description + ")";
      li.appendChild(el("span", "member-paused-why", text));
      const err = el("span", "error", "");
      err.hidden = true;
      for (const [what, label, cls] of [
        ["continue", "Continue", null],
        ["abandon", "Abandon", "danger"],
      ]) {
        const b = el("button", cls, label);
        b.type = "button";
        b.dataset.action = what;
        b.addEventListener("click", () => memberAction(b, err, m.bot_id, what));
        li.appendChild(b);
      }
      li.appendChild(err);
      box.appendChild(li);
    }
    box.hidden = members.length === 0;
  }

  async function memberAction(btn, err, bot, what) {
    const gen = state.gen;
    const path = "/v1/sessions/" + encodeURIComponent(state.current.id) + "/" + what +
      "?bot_id=" + encodeURIComponent(bot);
    btn.disabled = true;
    err.hidden = true;
    try {
      await api("POST", path, {});
      if (gen === state.gen) refreshView();
    } catch (e) {
      if (gen !== state.gen) return;
      err.textContent = e.message;
      err.hidden = false;
    } finally {
      btn.disabled = false;
    }
  }

  return { enter, seed, listen, renderPauses };
};
