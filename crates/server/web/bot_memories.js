// Troupe web page: a Bot's memories in the Bots panel (digest 003-B §11.4). Each Bot's entry
// has "Memories": the notes it keeps for itself, each with its words, "Written by the
// retrospective of …" while a retrospective's words stand, and Edit, Turn off / Turn on and
// Delete; and a form to add one (40-character subject, 160-character body). Read when opened;
// a refused change says why where it was pressed. Text is set with textContent.
"use strict";

window.troupeBotMemories = function (ctx) {
  const { el, api } = ctx;
  const enc = encodeURIComponent;

  const fold = window.troupePanelFold(ctx);
  const { button, why, alertLine } = fold;

  // The "Memories" fold of one Bot's entry in the list.
  function section(bot) {
    const box = el("details", "bot-memories");
    box.dataset.botId = bot.id;
    const summary = el("summary", null, "Memories");
    box.appendChild(summary);
    const list = el("ul", "bot-memory-list");
    const { node: err, say } = alertLine("bot-memory-error");
    const form = addForm(bot, () => load());
    box.append(list, err, form);

    const load = window.troupeHttp.reloader(async () => {
      let memories;
      try {
        memories = await api("GET", "/v1/bots/" + enc(bot.id) + "/memories");
      } catch (e) {
        say(why(e));
        return;
      }
      const on = memories.filter((m) => m.enabled).length;
      summary.textContent = "Memories (" + on + " of 20 on)";
      list.replaceChildren();
      if (memories.length === 0) list.appendChild(el("li", "hint", "No memories yet."));
      for (const m of memories) list.appendChild(item(m));
    });

    function item(m) {
      const li = el("li", "bot-memory" + (m.enabled ? "" : " off"));
      li.dataset.memoryId = m.id;
      li.appendChild(el("span", "bot-memory-subject", m.subject));
      const words = el("span", "bot-memory-body", m.body);
      li.appendChild(words);
      if (!m.enabled) li.appendChild(el("span", "badge", "off"));
      if (m.retrospective_of) {
        li.appendChild(el("span", "hint bot-memory-mark", "Written by the retrospective of “" + m.retrospective_of + "”"));
      }
      const row = el("span", "bot-memory-actions");
      row.appendChild(button("Edit", "bot-memory-edit", () => edit(li, m)));
      row.appendChild(
        button(m.enabled ? "Turn off" : "Turn on", "bot-memory-toggle", (b) =>
          change(b, "PATCH", "/v1/bot-memories/" + enc(m.id), { enabled: !m.enabled })
        )
      );
      row.appendChild(button("Delete", "bot-memory-delete", (b) => change(b, "DELETE", "/v1/bot-memories/" + enc(m.id))));
      li.appendChild(row);
      return li;
    }

    function edit(li, m) {
      const area = el("textarea", "bot-memory-input");
      area.maxLength = 160;
      area.value = m.body;
      area.setAttribute("aria-label", "New words for " + m.subject);
      const save = button("Save", "bot-memory-save", (b) =>
        change(b, "PATCH", "/v1/bot-memories/" + enc(m.id), { body: area.value })
      );
      const cancel = button("Cancel", "bot-memory-cancel", () => load());
      li.replaceChildren(el("span", "bot-memory-subject", m.subject), area, save, cancel);
      area.focus();
    }

    function change(btn, method, path, body) {
      return fold.change(say, load, btn, method, path, body);
    }

    function addForm(bot, after) {
      const f = el("form", "bot-memory-add");
      const subject = el("input", "bot-memory-new-subject");
      subject.maxLength = 40;
      subject.placeholder = "Subject";
      subject.setAttribute("aria-label", "New memory's subject");
      const body = el("input", "bot-memory-new-body");
      body.maxLength = 160;
      body.placeholder = "One way of working";
      body.setAttribute("aria-label", "New memory's words");
      const add = el("button", "secondary bot-memory-add-button", "Add");
      add.type = "submit";
      f.append(subject, body, add);
      f.addEventListener("submit", async (ev) => {
        ev.preventDefault();
        say(null);
        add.disabled = true;
        try {
          await api("POST", "/v1/bots/" + enc(bot.id) + "/memories", {
            subject: subject.value,
            body: body.value,
          });
          f.reset();
          after();
        } catch (e) {
          say(why(e));
        } finally {
          add.disabled = false;
        }
      });
      return f;
    }

    box.addEventListener("toggle", () => {
      if (box.open) load();
    });
    return box;
  }

  return { section };
};
