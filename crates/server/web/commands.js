// Troupe web page: the shell commands a turn ran, each a collapsed block (command, exit
// status, duration, output tail) under the Bot's last reply of that turn, and the files it
// wrote or deleted, a line each. An ended turn's last reply also says when the turn ended and
// how long it took ("14:05 · 5m 9s", TURN-15/16). Past turns' blocks are read when their reply
// nears the viewport, so a long conversation opens with one read per turn it shows.
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

  // TURN-16: "5m 9s", "42s", "1h 3m".
  function replyDuration(ms) {
    if (typeof ms !== "number" || !isFinite(ms) || ms < 0) return "";
    const s = Math.round(ms / 1000);
    if (s < 60) return s + "s";
    const m = Math.floor(s / 60);
    if (m < 60) return m + "m " + (s % 60) + "s";
    return Math.floor(m / 60) + "h " + (m % 60) + "m";
  }

  // The turn's last reply says when the turn ended and how long it took.
  function stampReply(turnId) {
    const t = state.turnTimes.get(String(turnId));
    const host = lastReply(turnId);
    if (!t || !host || t.ended_at === null || t.ended_at === undefined) return;
    const meta = host.querySelector(".meta");
    if (!meta) return;
    // Only the turn's last reply carries it (TURN-15).
    for (const old of document.querySelectorAll("#transcript .msg.bot .reply-time")) {
      if (old.parentElement !== meta && old.closest(".msg").dataset.turn === String(turnId)) old.remove();
    }
    let stamp = meta.querySelector(".reply-time");
    if (!stamp) {
      stamp = el("span", "reply-time");
      meta.appendChild(stamp);
    }
    const at = new Date(t.ended_at).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
    const took = replyDuration(t.ended_at - t.started_at);
    stamp.replaceChildren(el("span", null, at));
    if (took) {
      stamp.appendChild(el("span", "sep", " \u00b7 "));
      stamp.appendChild(el("span", "reply-duration", took));
    }
  }

  function lastReply(turnId) {
    const key = String(turnId);
    const replies = [...document.querySelectorAll("#transcript .msg.bot:not(.orphan-commands)")].filter(
      (m) => m.dataset.turn === key
    );
    return replies.length ? replies[replies.length - 1] : null;
  }

  // The opened conversation's turns (read once by app.js): each ended one's commands and files,
  // read when its last reply nears the viewport; a turn with no reply shown is read at once.
  let watcher = null;
  function loadPastCommands(gen, turns) {
    if (watcher) watcher.disconnect();
    const waiting = new Map();
    watcher =
      typeof IntersectionObserver === "function"
        ? new IntersectionObserver(
            (seen) => {
              for (const s of seen) {
                if (!s.isIntersecting) continue;
                watcher.unobserve(s.target);
                const id = waiting.get(s.target);
                waiting.delete(s.target);
                if (id !== undefined && gen === state.gen) loadCommands(id, gen);
              }
            },
            { root: $("#transcript"), rootMargin: "400px 0px" }
          )
        : null;
    for (const t of turns) {
      if (t.status === "running") continue;
      const host = lastReply(t.id);
      if (host && watcher) {
        waiting.set(host, t.id);
        watcher.observe(host);
      } else {
        loadCommands(t.id, gen);
      }
    }
  }

  // A turn that just ended: its times (read once), then its blocks.
  function turnEnded(turnId, gen) {
    api("GET", "/v1/turns/" + encodeURIComponent(turnId))
      .then((t) => {
        if (gen !== state.gen || !t) return;
        state.turnTimes.set(String(turnId), { started_at: t.started_at, ended_at: t.ended_at });
        stampReply(turnId);
      })
      .catch(() => {});
    return loadCommands(turnId, gen);
  }

  // The turn's commands, then the files it wrote or deleted (the effect ledger's record).
  async function loadCommands(turnId, gen) {
    stampReply(turnId);
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

  return { loadPastCommands, loadCommands, turnEnded, stampReply, onCommandFinished };
};
