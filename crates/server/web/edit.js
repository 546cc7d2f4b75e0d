// Troupe web page: editing a sent line (UQ-7, UQ-8; ADR 0063). A person's plain line gets an
// Edit button in its hover bar, and ↑ in an empty composer edits the newest one. The line's
// words open in place: Enter saves (PATCH /v1/messages/:id), Shift+Enter is a new line, Esc
// cancels, and the Enter that confirms an IME composition does not save. The server says what
// is editable: a refusal (`not_editable` with its reason) shows under the editor. An edited
// line says "Edited" beside its time; pressed, it lists the earlier words
// (GET /v1/messages/:id/versions). app.js calls decorate on every line it draws and hands over
// the composer's keys and the conversation's stream. All text is set with textContent.
"use strict";

window.troupeEdit = function (ctx) {
  const { $, el, api, upsertMessage, isReadOnly } = ctx;
  const enc = encodeURIComponent;
  const REASON = {
    bot_line: "Only your own lines can be edited.",
    answer: "An answer to a Bot's question cannot be edited.",
    executed_stop: "The app carried this line out as a stop; it cannot be edited.",
    archived: "The conversation is archived.",
    bot_direct: "This is a conversation between Bots.",
    bot_gone: "The Bot of this conversation is gone.",
    taken_back: "You took this line back; send it again instead.",
    cleared: "This line's history was cleared.",
  };

  function editable(m) {
    return m.author === "user" && (m.kind || "line") === "line" && m.routing !== "withdrawn" && !isReadOnly();
  }

  function fmtTime(ms) {
    const d = new Date(ms < 1e12 ? ms * 1000 : ms);
    return isNaN(d.getTime()) ? "" : d.toLocaleString();
  }

  // Called for every line drawn: the meta row is drawn afresh each time, so the buttons are too.
  function decorate(node, m) {
    const meta = node.querySelector(".meta");
    node.dataset.editable = editable(m) ? "1" : "";
    if (m.edited) {
      const b = el("button", "link line-edited", "Edited");
      b.type = "button";
      if (m.edited_at) b.title = "Edited " + fmtTime(m.edited_at);
      b.setAttribute("aria-expanded", String(!!node.querySelector(".line-versions")));
      b.addEventListener("click", () => toggleVersions(node, m.id, b));
      meta.appendChild(b);
    }
    if (editable(m)) {
      const b = el("button", "secondary edit-line", "Edit");
      b.type = "button";
      b.title = "Change what you wrote (\u2191 in an empty box edits your newest line)";
      b.addEventListener("click", () => start(node, m.id));
      meta.appendChild(b);
    }
  }

  async function toggleVersions(node, id, btn) {
    const open = node.querySelector(".line-versions");
    if (open) {
      open.remove();
      btn.setAttribute("aria-expanded", "false");
      return;
    }
    const box = el("div", "line-versions");
    box.appendChild(el("p", "hint", "Loading earlier words\u2026"));
    node.appendChild(box);
    btn.setAttribute("aria-expanded", "true");
    try {
      const vs = await api("GET", "/v1/messages/" + enc(id) + "/versions");
      box.replaceChildren();
      box.appendChild(el("p", "hint", vs && vs.length ? "Earlier words, oldest first:" : "No earlier words kept."));
      const ol = el("ol", "line-version-list");
      for (const v of vs || []) {
        const li = el("li", "line-version");
        li.dataset.version = v.version;
        li.appendChild(el("span", "line-version-at hint", (v.version === 1 ? "Sent " : "Saved ") + fmtTime(v.at)));
        li.appendChild(el("p", "line-version-body", v.body));
        ol.appendChild(li);
      }
      box.appendChild(ol);
    } catch (e) {
      box.replaceChildren(el("p", "error", e.message));
    }
  }

  // Opens the editor on a line, with its words as they stand now.
  function start(node, id) {
    if (node.dataset.editing) {
      const ta = node.querySelector(".line-editor textarea");
      if (ta) ta.focus();
      return;
    }
    node.dataset.editing = "1";
    const box = el("div", "line-editor");
    const ta = el("textarea", "line-editor-text");
    ta.rows = 2;
    ta.value = node.querySelector(".body").textContent;
    ta.setAttribute("aria-label", "Your line's new words");
    box.appendChild(ta);
    box.appendChild(el("p", "hint", "Enter saves \u00b7 Shift+Enter new line \u00b7 Esc cancels"));
    const err = el("p", "error line-editor-error");
    err.setAttribute("role", "alert");
    err.hidden = true;
    box.appendChild(err);
    node.querySelector(".body").after(box);
    ta.addEventListener("keydown", (e) => {
      if (e.key === "Escape") {
        e.preventDefault();
        stop(node);
        $("#composer").focus();
      } else if (e.key === "Enter" && !e.shiftKey && !e.isComposing && e.keyCode !== 229) {
        e.preventDefault();
        save(node, id, ta, err);
      }
    });
    ta.focus();
    ta.setSelectionRange(ta.value.length, ta.value.length);
    node.scrollIntoView({ block: "nearest" });
  }

  function stop(node) {
    const box = node.querySelector(".line-editor");
    if (box) box.remove();
    delete node.dataset.editing;
  }

  async function save(node, id, ta, err) {
    const body = ta.value;
    err.hidden = true;
    if (!body.trim()) {
      err.textContent = "A line cannot be empty.";
      err.hidden = false;
      return;
    }
    if (body === node.querySelector(".body").textContent) {
      stop(node); // nothing changed: nothing to keep
      return;
    }
    ta.disabled = true;
    try {
      const m = await api("PATCH", "/v1/messages/" + enc(id), { body });
      stop(node);
      upsertMessage(m);
      $("#composer").focus();
    } catch (e) {
      ta.disabled = false;
      const reason = e.code === "not_editable" ? REASON[String(e.message).split(/[:\s]/)[0]] : null;
      err.textContent = reason || e.message;
      err.hidden = false;
      ta.focus();
    }
  }

  // ↑ in an empty composer edits the newest of the person's lines; true when it took the key.
  function composerKey(e) {
    if (e.key !== "ArrowUp" || e.shiftKey || e.altKey || e.ctrlKey || e.metaKey || e.isComposing) return false;
    if ($("#composer").value !== "") return false;
    const mine = document.querySelectorAll('#transcript .msg.user[data-id][data-editable="1"]');
    const node = mine[mine.length - 1];
    if (!node) return false;
    e.preventDefault();
    start(node, Number(node.dataset.id));
    return true;
  }

  // An edit, or buttons set on a line after it was posted (a card), redraw the line in place.
  function listen(es, live) {
    for (const kind of ["session_message_edited", "session_message_control"]) {
      es.addEventListener(kind, (e) => {
        if (!live()) return;
        try {
          const ev = JSON.parse(e.data);
          if (ev && ev.payload && ev.payload.message) upsertMessage(ev.payload.message);
        } catch (err) {
          // not an event of ours
        }
      });
    }
  }

  return { decorate, composerKey, listen };
};
