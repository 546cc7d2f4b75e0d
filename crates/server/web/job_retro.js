// Troupe web page: the job view's "Retrospective" (digest 003-B §11.5). Once a delivered job
// has been quiet half an hour, each Bot that handed over in it looks back; nothing is posted,
// and this section is where it shows: who looked back (or was skipped, nothing having gone
// wrong for it), the summary, where it tripped up, why work came back, what to do again, and
// each change to its memories and skills — opened to show before and now (a skill only its
// changed lines), one not made with why — with Undo while the change stands as written. Read
// again on retrospective_recorded and after an Undo; text is set with textContent.
// deliverables.js mounts it.
"use strict";

window.troupeJobRetro = function (ctx) {
  const { el, state, api } = ctx;
  const enc = encodeURIComponent;

  const VERDICT = {
    still_holds: "still holds",
    happened_again: "happened again",
    no_longer_holds: "no longer holds",
  };

  const view = { planId: null, items: [], gen: 0 };
  let box = null;
  let list = null;
  let err = null;

  function mount(host) {
    box = el("section", "job-retro");
    box.id = "job-retro";
    box.appendChild(el("h3", null, "Retrospective"));
    list = el("div", "job-retro-list");
    list.setAttribute("aria-live", "polite");
    err = el("p", "error job-retro-error");
    err.setAttribute("role", "alert");
    err.hidden = true;
    box.append(list, err);
    box.hidden = true;
    host.appendChild(box);
  }

  function open(planId) {
    view.planId = planId;
    view.gen++;
    view.items = [];
    say(null);
    draw();
    load();
  }

  function close() {
    view.planId = null;
    view.gen++;
    if (box) box.hidden = true;
  }

  const load = window.troupeHttp.reloader(async () => {
    const gen = view.gen;
    if (view.planId === null) return;
    let items;
    try {
      items = await api("GET", "/v1/tasks/" + enc(view.planId) + "/retrospectives");
    } catch (e) {
      return; // unreachable: the job view says so; the next event reads again
    }
    if (gen !== view.gen) return;
    view.items = Array.isArray(items) ? items : [];
    draw();
  });

  function listen(es, mine) {
    es.addEventListener("retrospective_recorded", (e) => {
      if (mine(e)) load();
    });
  }

  function botName(id) {
    const b = state.bots && state.bots.get(id);
    return b ? b.name : "Bot " + id;
  }

  function say(text) {
    if (!err) return;
    err.hidden = !text;
    err.textContent = text || "";
  }

  function bullets(title, items) {
    if (!items || items.length === 0) return null;
    const part = el("div", "job-retro-part");
    part.appendChild(el("span", "job-retro-title", title));
    const ul = el("ul", null);
    for (const i of items) ul.appendChild(el("li", null, i));
    part.appendChild(ul);
    return part;
  }

  // A skill's change shows only the lines it changed (digest 003-B §11.5).
  function changedLines(before, after) {
    const b = (before || "").split("\n");
    const a = (after || "").split("\n");
    const inB = new Set(b);
    const inA = new Set(a);
    return {
      removed: b.filter((l) => l.trim() && !inA.has(l)),
      added: a.filter((l) => l.trim() && !inB.has(l)),
    };
  }

  function changeItem(c) {
    const li = el("li", "job-retro-change");
    li.dataset.changeId = c.id;
    li.dataset.target = c.target;
    const skill = c.target === "skill";
    const what = skill
      ? c.before === null && !c.refused
        ? "New skill"
        : "Changed skill"
      : c.kind === "write"
        ? c.before === null
          ? "New memory"
          : "Rewrote"
        : "Forgot";
    const d = el("details", null);
    d.appendChild(el("summary", null, what + " “" + c.subject + "”" + (c.undone_at ? " · undone" : "")));
    if (skill && c.refused) {
      d.appendChild(el("p", "job-retro-after", "Asked: " + c.after));
    } else if (skill) {
      const lines = changedLines(c.before, c.after);
      for (const l of lines.removed) d.appendChild(el("p", "job-retro-before", "− " + l));
      for (const l of lines.added) d.appendChild(el("p", "job-retro-after", "+ " + l));
    } else {
      if (c.before !== null) d.appendChild(el("p", "job-retro-before", "Before: " + c.before));
      if (c.after !== null) d.appendChild(el("p", "job-retro-after", "Now: " + c.after));
    }
    li.appendChild(d);
    if (c.refused) li.appendChild(el("span", "hint job-retro-refused", "Not made: " + c.refused));
    if (c.undoable) {
      const b = el("button", "secondary job-retro-undo", "Undo");
      b.type = "button";
      b.setAttribute("aria-label", "Undo: " + what + " " + c.subject);
      b.addEventListener("click", () => undo(c, b));
      li.appendChild(b);
    }
    return li;
  }

  function draw() {
    if (!box) return;
    box.hidden = view.planId === null || view.items.length === 0;
    list.replaceChildren();
    for (const r of view.items) {
      const card = el("article", "job-retro-item");
      card.dataset.retrospectiveId = r.id;
      card.dataset.state = r.state;
      const head = el("p", "job-retro-head");
      head.appendChild(el("strong", null, botName(r.bot_id)));
      const said = {
        skipped: " — skipped: nothing went wrong for it in this job",
        failed: " — could not look back: " + (r.error || ""),
        done: " looked back",
      }[r.state] || "";
      head.appendChild(document.createTextNode(said));
      card.appendChild(head);
      if (r.summary) card.appendChild(el("p", "job-retro-summary", r.summary));
      for (const part of [
        bullets("Tripped up", r.tripped_up),
        bullets("Sent back because", r.sent_back_because),
        bullets("Do again", r.do_again),
        bullets(
          "Earlier conclusions",
          (r.verdicts || []).map((v) => v.conclusion + " — " + (VERDICT[v.verdict] || v.verdict))
        ),
      ]) {
        if (part) card.appendChild(part);
      }
      if (r.changes && r.changes.length > 0) {
        const ul = el("ul", "job-retro-changes");
        for (const c of r.changes) ul.appendChild(changeItem(c));
        card.appendChild(ul);
      }
      list.appendChild(card);
    }
  }

  async function undo(c, btn) {
    say(null);
    btn.disabled = true;
    try {
      await api("POST", "/v1/retrospective-changes/" + enc(c.id) + "/undo", {});
    } catch (e) {
      say((e && e.message) || "That did not work; try again");
    } finally {
      load();
    }
  }

  return { mount, open, close, listen };
};
