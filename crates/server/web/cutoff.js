// Troupe web page: Continue under a Bot's line whose turn was cut off — it failed or was
// interrupted (WI-13). Pressed, POST /v1/turns/:id/continue has that work picked up again (or
// queued for a work slot, which the row then says). Only the Bot's latest line in the
// conversation offers it: an older cut-off line's work may have finished since, and running it
// again would repeat it. All text is set with textContent.
"use strict";

window.troupeCutoff = function (ctx) {
  const { el, api, state } = ctx;
  const notes = new Map(); // line id -> what pressing Continue on it did

  function cutOff(m) {
    return m.author === "bot" && m.turn_id != null && (m.status === "failed" || m.status === "interrupted");
  }

  // The newest line the transcript holds from this Bot.
  function latestOf(botId) {
    let latest = -1;
    for (const [id, node] of state.msgEls) {
      if (node.dataset.bot === String(botId) && id > latest) latest = id;
    }
    return latest;
  }

  function draw(node, m) {
    const old = node.querySelector(".cutoff-row");
    if (old) old.remove();
    const note = notes.get(m.id);
    if (!cutOff(m) || (!note && latestOf(m.bot_id) > m.id)) return;
    const row = el("div", "cutoff-row");
    if (note) {
      row.appendChild(el("span", "hint cutoff-note", note));
    } else {
      const go = el("button", "link cutoff-continue", "Continue");
      go.type = "button";
      go.title = "Have the Bot pick this work up again where it stopped";
      go.addEventListener("click", () => press(m, node, go));
      row.appendChild(go);
    }
    node.appendChild(row);
  }

  async function press(m, node, button) {
    button.disabled = true;
    try {
      const out = await api("POST", "/v1/turns/" + encodeURIComponent(m.turn_id) + "/continue");
      notes.set(m.id, out.queued ? "Queued, at position " + out.position : "Picked up again");
    } catch (e) {
      notes.set(m.id, e.code === "already_working" ? "This work is running already." : e.message);
    }
    draw(node, m);
  }

  // Called for every line app.js draws. A Bot's new line takes the button off its older ones.
  function decorate(node, m) {
    node.dataset.bot = m.bot_id == null ? "" : String(m.bot_id);
    node.troupeLine = m;
    draw(node, m);
    if (m.author !== "bot") return;
    for (const [id, other] of state.msgEls) {
      if (id < m.id && other.dataset.bot === node.dataset.bot && other.querySelector(".cutoff-continue")) {
        draw(other, other.troupeLine);
      }
    }
  }

  return { decorate };
};
