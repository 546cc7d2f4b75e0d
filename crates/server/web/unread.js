// Troupe web page: the person's lines no Bot has read yet (UQ-16, UQ-17, UQ-18). Under each such
// line a row says when each Bot holding it will read it — "Queued · read at its next step",
// "Queued · read when its turn comes", "Stopped by you · …", "Held by a lasting stop · …" —
// with Take back (POST /v1/messages/:id/withdraw) while no Bot has read it, and Insert now
// (POST /v1/messages/:id/insert) while a Bot holding it is working (its step is cut) or held by
// the person's own Stop (the Stop lifts and the Bot starts on the line); never under a lasting
// stop, which the row names instead. The row goes once the line is
// read. A line taken back says so, its words go back to an empty composer, and "Edit again"
// puts them after what the composer holds. The rows come from GET /v1/sessions/:id/unread,
// re-read when the conversation's stream says something moved. All text is set with textContent.
"use strict";

window.troupeUnread = function (ctx) {
  const { $, el, api, state, upsertMessage } = ctx;
  const READ_AT = {
    next_step: "Queued \u00b7 read at its next step",
    its_turn: "Queued \u00b7 read when its turn comes",
    stopped: "Stopped by you \u00b7 your next line or Insert now lifts the stop",
    held: "Held by a lasting stop \u00b7 read once that stop is lifted; Insert now cannot",
  };
  let rows = new Map(); // line id -> its unread entry
  const notes = new Map(); // line id -> a word from the last button pressed on its row

  function botName(id) {
    const b = state.bots.get(id);
    return b ? b.name : "Bot " + id;
  }

  function putInComposer(words, append) {
    const box = $("#composer");
    if (!box || box.disabled) return;
    if (box.value === "") box.value = words;
    else if (append) box.value = box.value + (box.value.endsWith("\n") ? "" : "\n") + words;
    else return;
    box.focus();
  }

  function draw(node, u) {
    const old = node.querySelector(".unread-row");
    if (old) old.remove();
    if (!u) return;
    const row = el("div", "unread-row");
    row.dataset.testid = "unread-row";
    const many = u.unread_by.length > 1;
    for (const b of u.unread_by) {
      const text = READ_AT[b.read_at] || b.read_at;
      row.appendChild(el("span", "unread-state", many ? botName(b.bot_id) + ": " + text : text));
    }
    if (u.can_take_back) {
      const back = el("button", "link unread-take-back", "Take back");
      back.type = "button";
      back.addEventListener("click", () => takeBack(u.message_id, back));
      row.appendChild(back);
    }
    if (u.unread_by.some((b) => b.read_at === "next_step" || b.read_at === "stopped")) {
      const now = el("button", "link unread-insert", "Insert now");
      now.type = "button";
      now.title = "Have the Bot read this line at once: its step is cut, or your Stop lifted";
      now.addEventListener("click", () => insertNow(u.message_id, now));
      row.appendChild(now);
    }
    const note = notes.get(u.message_id);
    if (note) row.appendChild(el("span", "hint unread-note", note));
    node.appendChild(row);
  }

  async function takeBack(id, button) {
    button.disabled = true;
    try {
      const line = await api("POST", "/v1/messages/" + id + "/withdraw");
      notes.delete(id);
      upsertMessage(line);
      putInComposer(line.body || "", false);
    } catch (e) {
      notes.set(id, e.code === "already_read" ? "A Bot has read it already; you can still edit it." : e.message);
    }
    refresh();
  }

  async function insertNow(id, button) {
    button.disabled = true;
    try {
      const out = await api("POST", "/v1/messages/" + id + "/insert");
      if (out.cut || out.lifted.length) notes.delete(id);
      else if (out.held.length) notes.set(id, "Held by a lasting stop; it reads this once that stop is lifted.");
      else notes.set(id, "No step to cut right now; it reads this at its next step.");
    } catch (e) {
      notes.set(id, e.message);
    }
    refresh();
  }

  // Called for every line app.js draws: a line taken back says so; an unread one keeps its row.
  function decorate(node, m) {
    const old = node.querySelector(".taken-back");
    if (old) old.remove();
    if (m.author === "user" && m.routing === "withdrawn") {
      node.classList.add("withdrawn");
      const note = el("div", "taken-back");
      note.appendChild(el("span", "hint", "You took this line back \u00b7 "));
      const again = el("button", "link", "Edit again");
      again.type = "button";
      again.addEventListener("click", () => putInComposer(m.body || "", true));
      note.appendChild(again);
      node.appendChild(note);
    }
    draw(node, rows.get(m.id));
  }

  // One read at a time; a change during one reads once more after it.
  const refresh = window.troupeHttp.reloader(async () => {
    const current = state.current;
    if (!current) return;
    let list;
    try {
      list = await api("GET", "/v1/sessions/" + encodeURIComponent(current.id) + "/unread");
    } catch (e) {
      return; // the next change reads again
    }
    if (state.current !== current) return;
    rows = new Map(list.map((u) => [u.message_id, u]));
    for (const [id, node] of state.msgEls) draw(node, rows.get(id));
  });

  function listen(es, live) {
    rows = new Map();
    notes.clear();
    const kinds = ["session_message", "message_created", "run_started", "run_ended", "line_routed", "hold_upsert", "work_item_changed"];
    for (const kind of kinds) es.addEventListener(kind, () => live() && refresh());
    refresh();
  }

  return { decorate, listen, refresh };
};
