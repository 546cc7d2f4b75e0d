// Troupe web page: a Bot's skills in the Bots panel (ADR 0052). Each Bot's entry has
// "Skills": its skills by name and catalog line, each opened to its text, with "Written by
// the retrospective of …" while a retrospective's change stands, Edit, Delete and Share
// (confirmed once more: what is shared is a copy as it is now); a form to add one; and the
// Project skills card (QE7): every shared copy, who it is from (marked when that Bot is
// archived), Turn off / Turn on, Stop sharing, and — when the owner has changed its skill —
// "Update the shared copy", which shows the skill as it is now before the person confirms.
// Read when opened; a refused change says why where it was pressed. Text is set with
// textContent.
"use strict";

window.troupeBotSkills = function (ctx) {
  const { el, api } = ctx;
  const enc = encodeURIComponent;

  const fold = window.troupePanelFold(ctx);
  const { button, why, alertLine } = fold;

  // The "Skills" fold of one Bot's entry in the list.
  function section(bot) {
    const box = el("details", "bot-skills");
    box.dataset.botId = bot.id;
    const summary = el("summary", null, "Skills");
    box.appendChild(summary);
    const list = el("ul", "bot-skill-list");
    const { node: err, say } = alertLine("bot-skill-error");
    const form = addForm();
    const shared = el("section", "project-skills");
    box.append(list, err, form, shared);

    const load = window.troupeHttp.reloader(async () => {
      let skills, copies;
      try {
        [skills, copies] = await Promise.all([
          api("GET", "/v1/bots/" + enc(bot.id) + "/skills"),
          api("GET", "/v1/project-skills"),
        ]);
      } catch (e) {
        say(why(e));
        return;
      }
      summary.textContent = "Skills (" + skills.length + ")";
      list.replaceChildren();
      if (skills.length === 0) list.appendChild(el("li", "hint", "No skills yet."));
      for (const s of skills) list.appendChild(item(s));
      drawShared(copies);
    });

    function item(s) {
      const li = el("li", "bot-skill");
      li.dataset.skillId = s.id;
      const d = el("details", "bot-skill-text");
      const head = el("summary", null);
      head.appendChild(el("span", "bot-skill-name", s.name));
      head.appendChild(el("span", "hint bot-skill-description", " — " + s.description));
      d.appendChild(head);
      d.appendChild(el("pre", "bot-skill-body", s.body));
      li.appendChild(d);
      if (s.shared_as !== null) li.appendChild(el("span", "badge", "shared"));
      if (s.retrospective_of) {
        li.appendChild(el("span", "hint bot-skill-mark", "Written by the retrospective of “" + s.retrospective_of + "”"));
      }
      const row = el("span", "bot-skill-actions");
      row.appendChild(button("Edit", "bot-skill-edit", () => edit(li, s)));
      if (s.shared_as === null) row.appendChild(button("Share", "bot-skill-share", () => confirmShare(li, s)));
      row.appendChild(button("Delete", "bot-skill-delete", (b) => change(b, "DELETE", "/v1/skills/" + enc(s.id))));
      li.appendChild(row);
      return li;
    }

    // QE7: sharing is confirmed once more, saying what sharing means.
    function confirmShare(li, s) {
      const ask = el("p", "bot-skill-confirm", "Share “" + s.name + "” with every Bot? They get a copy of it as it is now: every Bot can read it, none can change it.");
      const yes = button("Share with every Bot", "bot-skill-share-confirm", (b) =>
        change(b, "POST", "/v1/skills/" + enc(s.id) + "/share", { confirm: true })
      );
      const no = button("Cancel", "bot-skill-share-cancel", () => load());
      li.append(ask, yes, no);
    }

    function edit(li, s) {
      const description = el("input", "bot-skill-input-description");
      description.maxLength = 200;
      description.value = s.description;
      description.setAttribute("aria-label", "What " + s.name + " is for");
      const area = el("textarea", "bot-skill-input");
      area.maxLength = 20000;
      area.rows = 8;
      area.value = s.body;
      area.setAttribute("aria-label", "The text of " + s.name);
      const save = button("Save", "bot-skill-save", (b) =>
        change(b, "PATCH", "/v1/skills/" + enc(s.id), { description: description.value, body: area.value })
      );
      const cancel = button("Cancel", "bot-skill-cancel", () => load());
      li.replaceChildren(el("span", "bot-skill-name", s.name), description, area, save, cancel);
      area.focus();
    }

    function change(btn, method, path, body) {
      return fold.change(say, load, btn, method, path, body);
    }

    function addForm() {
      const f = el("form", "bot-skill-add");
      const name = el("input", "bot-skill-new-name");
      name.maxLength = 64;
      name.placeholder = "Name";
      name.setAttribute("aria-label", "New skill's name");
      const description = el("input", "bot-skill-new-description");
      description.maxLength = 200;
      description.placeholder = "What it is for";
      description.setAttribute("aria-label", "What the new skill is for");
      const body = el("textarea", "bot-skill-new-body");
      body.maxLength = 20000;
      body.rows = 4;
      body.placeholder = "How to do this kind of work";
      body.setAttribute("aria-label", "The new skill's text");
      const add = el("button", "secondary bot-skill-add-button", "Add skill");
      add.type = "submit";
      f.append(name, description, body, add);
      f.addEventListener("submit", async (ev) => {
        ev.preventDefault();
        say(null);
        add.disabled = true;
        try {
          await api("POST", "/v1/bots/" + enc(bot.id) + "/skills", {
            name: name.value,
            description: description.value,
            body: body.value,
          });
          f.reset();
          load();
        } catch (e) {
          say(why(e));
        } finally {
          add.disabled = false;
        }
      });
      return f;
    }

    // The Project skills card: every shared copy, whoever's it is.
    function drawShared(copies) {
      const on = copies.filter((p) => p.enabled).length;
      shared.replaceChildren(el("h4", null, "Project skills (" + on + " of 20 on)"));
      if (copies.length === 0) {
        shared.appendChild(el("p", "hint", "None shared. Share one of a Bot's skills to give every Bot a copy."));
        return;
      }
      const ul = el("ul", "project-skill-list");
      for (const p of copies) ul.appendChild(copyItem(p));
      shared.appendChild(ul);
    }

    function copyItem(p) {
      const li = el("li", "project-skill" + (p.enabled ? "" : " off"));
      li.dataset.projectSkillId = p.id;
      li.appendChild(el("span", "bot-skill-name", p.name));
      li.appendChild(el("span", "hint", " — " + p.description));
      const from = "from " + p.owner_name + (p.owner_archived ? " (an archived Bot)" : "");
      li.appendChild(el("span", "hint project-skill-owner", from));
      if (!p.enabled) li.appendChild(el("span", "badge", "off"));
      if (p.source_skill_id === null) {
        li.appendChild(el("span", "hint", "The owner's skill was deleted; this copy stays."));
      }
      if (p.owner_changed) {
        li.appendChild(el("p", "project-skill-changed", p.owner_name + " has changed this skill since it was shared."));
      }
      const row = el("span", "bot-skill-actions");
      if (p.owner_changed) {
        row.appendChild(button("Update the shared copy", "project-skill-update", (b) => showUpdate(li, p, b)));
      }
      row.appendChild(
        button(p.enabled ? "Turn off" : "Turn on", "project-skill-toggle", (b) =>
          change(b, "PATCH", "/v1/project-skills/" + enc(p.id), { enabled: !p.enabled })
        )
      );
      row.appendChild(button("Stop sharing", "project-skill-unshare", (b) => change(b, "DELETE", "/v1/project-skills/" + enc(p.id))));
      li.appendChild(row);
      return li;
    }

    // Shows the owner's skill as it is now; the update is confirmed against that version.
    async function showUpdate(li, p, btn) {
      say(null);
      btn.disabled = true;
      let now;
      try {
        now = await api("GET", "/v1/skills/" + enc(p.source_skill_id));
      } catch (e) {
        say(why(e));
        btn.disabled = false;
        return;
      }
      const shown = el("div", "project-skill-update-preview");
      shown.appendChild(el("p", null, "The shared copy will say, as " + p.owner_name + "'s skill says now:"));
      shown.appendChild(el("pre", "bot-skill-body", now.body));
      const yes = button("Confirm update", "project-skill-update-confirm", (b) =>
        change(b, "POST", "/v1/project-skills/" + enc(p.id) + "/update", {
          seen_updated_at: now.updated_at,
          confirm: true,
        })
      );
      const no = button("Cancel", "project-skill-update-cancel", () => load());
      shown.append(yes, no);
      li.appendChild(shown);
    }

    box.addEventListener("toggle", () => {
      if (box.open) load();
    });
    return box;
  }

  return { section };
};
