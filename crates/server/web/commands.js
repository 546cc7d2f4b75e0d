// Troupe web page: the shell commands a turn ran, each a collapsed block (command, exit
// status, duration, output tail) under the Bot's last reply of that turn, and the files it
// wrote or deleted, a line each.
// app.js creates it with the shared state and helpers it needs.
"use strict";

window.troupeCommands = function (ctx) {
  const { $, el, state, api, scrollToEnd, speakerOfTurn } = ctx;

  function fmtDuration(ms) {
    if (typeof ms !== "number" || !isFinite(ms)) return "";
    if (ms < 1000) return ms + "ms";
    const s = ms / 1000;
    if (s < 60) return s.toFixed(1) + "s";
    return Math.floor(s / 60) + "m" + Math.round(s % 60) + "s";
  }

  // The opened conversation's turns (read once by app.js): each ended one's commands and files.
  async function loadPastCommands(gen, turns) {
    const done = turns.filter((t) => t.status !== "running").slice(-20);
    for (const t of done) {
      if (gen !== state.gen) return;
      await loadCommands(t.id, gen);
    }
  }

  // The turn's commands, then the files it wrote or deleted (the effect ledger's record).
  async function loadCommands(turnId, gen) {
    const base = "/v1/turns/" + encodeURIComponent(turnId);
    let cmds, files;
    try {
      [cmds, files] = await Promise.all([api("GET", base + "/commands"), api("GET", base + "/files")]);
    } catch (e) {
      return;
    }
    if (gen !== state.gen || !Array.isArray(cmds) || !Array.isArray(files)) return;
    if (cmds.length === 0 && files.length === 0) return;
    const box = commandsBoxFor(turnId);
    box.replaceChildren();
    for (const c of cmds) box.appendChild(renderCommand(c));
    // The same change made again and again (a model repeating its write) is one row with a count.
    let last = null;
    for (const f of files) {
      const text = fileText(f);
      if (last && last.dataset.text === text && last.dataset.tool === f.tool) {
        const times = Number(last.dataset.times) + 1;
        last.dataset.times = String(times);
        last.textContent = text + " · " + times + " times";
        continue;
      }
      last = renderFile(f, text);
      box.appendChild(last);
    }
  }

  function fileText(f) {
    const ok = f.outcome === "succeeded";
    return ok && f.detail ? f.detail : f.summary + " · " + f.outcome + (f.detail ? ": " + f.detail : "");
  }

  function renderFile(f, text) {
    const row = el("div", f.outcome === "succeeded" ? "file-change" : "file-change nonzero", text);
    row.dataset.tool = f.tool;
    row.dataset.text = text;
    row.dataset.times = "1";
    return row;
  }

  // Whose turn it is: known from the turns read at opening, else read once (a turn that began
  // after the page opened).
  function nameSpeaker(who, turnId) {
    const key = String(turnId);
    if (state.turnBots.has(key)) {
      who.textContent = speakerOfTurn(turnId);
      return;
    }
    api("GET", "/v1/turns/" + encodeURIComponent(turnId))
      .then((t) => {
        if (!t || t.bot_id === undefined) return;
        state.turnBots.set(key, t.bot_id);
        who.textContent = speakerOfTurn(turnId);
      })
      .catch(() => {});
  }

  // The commands block sits under the Bot's last reply of the turn.
  function commandsBoxFor(turnId) {
    const key = String(turnId);
    let existing = document.querySelector('.commands[data-turn="' + CSS.escape(key) + '"]');
    const replies = [...document.querySelectorAll("#transcript .msg.bot")].filter(
      (m) => m.dataset.turn === key
    );
    const host = replies.length ? replies[replies.length - 1] : null;
    if (!existing) {
      existing = el("div", "commands");
      existing.dataset.turn = key;
    }
    if (host) {
      if (existing.parentElement !== host) host.appendChild(existing);
    } else if (!existing.parentElement) {
      // No reply of the turn to sit under yet: the block says whose it is itself.
      const wrap = el("div", "msg bot orphan-commands");
      wrap.dataset.turn = key;
      const meta = el("div", "meta");
      const who = el("span", "who", "");
      meta.appendChild(who);
      nameSpeaker(who, turnId);
      wrap.appendChild(meta);
      wrap.appendChild(existing);
      // An ended turn's block goes where its turn ended among the lines; a live one's at the end.
      const at = state.turnEnds.get(key);
      const later =
        at === undefined
          ? null
          : [...document.querySelectorAll("#transcript > .msg[data-at]")].find((m) => Number(m.dataset.at) > at);
      $("#transcript").insertBefore(wrap, later);
    }
    return existing;
  }

  function renderCommand(c) {
    const d = el("details", "command");
    d.dataset.callId = c.call_id || "";
    const sum = el("summary");
    sum.appendChild(el("code", "cmd-text", "$ " + (c.command || "")));
    const parts = [];
    if (c.timed_out) parts.push("timed out");
    else if (c.cancelled) parts.push("cancelled");
    if (typeof c.exit_code === "number") parts.push("exit " + c.exit_code);
    else if (c.signal !== undefined && c.signal !== null) parts.push("signal " + c.signal);
    const dur = fmtDuration(c.duration_ms);
    if (dur) parts.push(dur);
    const status = el("span", "cmd-status", parts.length ? " · " + parts.join(" · ") : "");
    if (typeof c.exit_code === "number" && c.exit_code !== 0) d.classList.add("nonzero");
    if (c.timed_out || c.cancelled) d.classList.add("nonzero");
    sum.appendChild(status);
    d.appendChild(sum);
    const out = c.output_tail;
    d.appendChild(el("pre", "cmd-output", out ? out : "(no output)"));
    return d;
  }

  function onCommandFinished(ev) {
    const p = ev.payload || {};
    if (ev.run_id === undefined || ev.run_id === null) return;
    const box = commandsBoxFor(ev.run_id);
    const existing = [...box.querySelectorAll(".command")].find((c) => c.dataset.callId === String(p.call_id));
    const node = renderCommand(p);
    if (existing) existing.replaceWith(node);
    else box.appendChild(node);
    scrollToEnd();
  }

  return { loadPastCommands, loadCommands, onCommandFinished };
};
