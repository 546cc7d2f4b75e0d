// Troupe web page: "What you asked for" in the job view (RL-19) — the job's requirements ledger
// in the groups GET /v1/tasks/:id/requirements returns them (words you took out, the job's own,
// inherited by source job, waiting for you, old rules, set aside), each entry on two lines: its
// number and words, then its restatement, where it came from, how often it was said and its
// scope, with the buttons it offers here. A press sends the version the user saw; when the
// entry moved on meanwhile (409 `requirement_changed`) the list is read again and says so.
// "Needs a look" under the title scrolls to the entries waiting for the user. The job's own
// shows its top 10 until "Show N more" (all of them while a ticket is picked, read against it:
// an entry held to that ticket marked, one held to another dimmed).
// deliverables.js mounts it and hands it the job's stream; text is set with textContent.
"use strict";

window.troupeRequirements = function (ctx) {
  const { el, api } = ctx;
  const enc = encodeURIComponent;
  const TOP = 10;
  const GROUP = {
    taken_out: "Words you took out",
    own: "This job\u2019s own",
    inherited: "Inherited",
    waiting: "Waiting for you",
    old_rules: "Old rules",
    set_aside: "Set aside for this job",
  };
  const ACTION = {
    confirm: "Confirm",
    not_a_requirement: "Not a requirement",
    not_for_this_job: "Not for this job",
    restore: "Restore",
    no_longer_holds: "No longer holds",
    whole_conversation: "For the whole conversation",
    keep_it: "Keep it",
  };
  const SOURCE = {
    you_said: "you said",
    your_answer: "your answer",
    your_annotation: "your annotation",
    board: "you wrote on the board",
    old_rule: "old rule",
    complaint_whole: "your words kept whole as a complaint",
  };
  const SCOPE = {
    ticket: "this ticket",
    job: "this job",
    session: "every job of the conversation",
    standing: "every video job",
  };

  const view = { planId: null, gen: 0, data: null, more: false, picked: false, ticket: null, note: null, jobs: new Map(), tickets: new Map() };
  let box = null;
  let lists = null;
  let needs = null;

  function mount(host) {
    box = el("section", "asked");
    box.id = "asked";
    box.dataset.testid = "asked";
    box.setAttribute("aria-labelledby", "asked-heading");
    const h = el("h4", null, "What you asked for");
    h.id = "asked-heading";
    box.appendChild(h);
    needs = el("button", "link asked-needs");
    needs.type = "button";
    needs.hidden = true;
    needs.addEventListener("click", () => {
      const first = box.querySelector('.asked-group[data-group="taken_out"], .asked-group[data-group="waiting"], .asked-group[data-group="old_rules"]');
      if (first) first.scrollIntoView({ block: "center" });
    });
    box.appendChild(needs);
    lists = el("div", "asked-groups");
    lists.setAttribute("aria-live", "polite");
    box.appendChild(lists);
    host.appendChild(box);
    box.hidden = true;
  }

  function open(planId) {
    view.planId = planId;
    view.gen++;
    view.data = null;
    view.more = false;
    view.note = null;
    box.hidden = false;
    draw();
    load();
  }

  function close() {
    view.planId = null;
    view.gen++;
    view.data = null;
    if (box) box.hidden = true;
  }

  // With a ticket picked the job's own shows in full, read against that ticket: an entry held
  // to it is marked, one held to another ticket dims.
  function picked(on, ticket) {
    const id = on && ticket !== undefined && ticket !== null ? String(ticket) : null;
    if (view.picked === !!on && view.ticket === id) return;
    view.picked = !!on;
    view.ticket = id;
    draw();
  }

  // The job's tickets, as deliverables.js reads them, to name the one an entry is held to.
  function tickets(listed) {
    view.tickets = new Map(((listed && listed.tickets) || []).map((t) => [String(t.id), t]));
    draw();
  }

  const load = window.troupeHttp.reloader(async () => {
    const gen = view.gen;
    if (view.planId === null) return;
    let data;
    try {
      data = await api("GET", "/v1/tasks/" + enc(view.planId) + "/requirements");
    } catch (e) {
      return; // unreachable: the job view says so; the next event reads again
    }
    if (gen !== view.gen) return;
    view.data = data;
    draw();
  });

  function listen(es, mine) {
    es.addEventListener("requirement_changed", (e) => {
      if (mine(e)) load();
    });
    es.addEventListener("open", () => {
      if (view.planId !== null) load();
    });
  }

  // An inherited group names the job it came from; its name is read once.
  function jobName(id) {
    const k = String(id);
    if (!view.jobs.has(k)) {
      view.jobs.set(k, null);
      api("GET", "/v1/tasks/" + enc(k))
        .then((p) => {
          view.jobs.set(k, p.name);
          draw();
        })
        .catch(() => {});
    }
    return view.jobs.get(k) || "job " + k;
  }

  function draw() {
    if (!lists) return;
    lists.replaceChildren();
    const d = view.data;
    if (view.note) lists.appendChild(el("p", "asked-note", view.note));
    if (!d) {
      lists.appendChild(el("p", "hint", "Loading\u2026"));
      needs.hidden = true;
      return;
    }
    needs.hidden = !d.needs_a_look;
    needs.textContent = "Needs a look: " + d.needs_a_look + (d.needs_a_look === 1 ? " entry" : " entries");
    const groups = d.groups || [];
    if (!groups.some((g) => (g.entries || []).length)) {
      lists.appendChild(el("p", "hint asked-empty", "Nothing recorded yet."));
      return;
    }
    for (const g of groups) {
      const entries = g.entries || [];
      if (!entries.length) continue;
      const sec = el("div", "asked-group");
      sec.dataset.group = g.group;
      let title = GROUP[g.group] || String(g.group);
      if (g.group === "inherited" && g.from_job !== null && g.from_job !== undefined) {
        title = "Inherited from \u201c" + jobName(g.from_job) + "\u201d";
      }
      sec.appendChild(el("h5", "asked-group-title", title));
      const ul = el("ul", "asked-list");
      const cut = g.group === "own" && !view.more && !view.picked && entries.length > TOP;
      for (const r of cut ? entries.slice(0, TOP) : entries) ul.appendChild(row(r));
      sec.appendChild(ul);
      if (cut) {
        const more = el("button", "link asked-more", "Show " + (entries.length - TOP) + " more");
        more.type = "button";
        more.addEventListener("click", () => {
          view.more = true;
          draw();
        });
        sec.appendChild(more);
      }
      lists.appendChild(sec);
    }
  }

  function row(r) {
    const li = el("li", "asked-row");
    if (view.ticket !== null && r.ticket_id !== null && r.ticket_id !== undefined) {
      li.classList.add(String(r.ticket_id) === view.ticket ? "for-this-ticket" : "other-ticket");
    }
    li.dataset.id = r.id;
    li.dataset.state = r.state;
    li.dataset.version = r.version;
    const one = el("div", "asked-line");
    one.appendChild(el("span", "asked-label", r.label));
    one.appendChild(el("span", "asked-quote", "\u201c" + r.quote + "\u201d"));
    if (r.polarity === "must_not") one.appendChild(el("span", "badge asked-not", "must not"));
    if (r.number) one.appendChild(el("span", "badge asked-number", r.number));
    if (r.said_count >= 2) {
      const c = el("span", "badge asked-count", "said " + r.said_count + "\u00d7");
      c.title = "You said it " + r.said_count + " times";
      one.appendChild(c);
    }
    li.appendChild(one);
    const two = el("div", "asked-line hint");
    if (r.restatement) two.appendChild(el("span", "asked-restatement", r.restatement));
    const held = r.ticket_id !== null && r.ticket_id !== undefined ? view.tickets.get(String(r.ticket_id)) : null;
    const scope = held ? "ticket" : SCOPE[r.scope] || String(r.scope);
    const bits = [SOURCE[r.source_kind] || String(r.source_kind), "for " + scope];
    two.appendChild(el("span", "asked-source", bits.join(" \u00b7 ")));
    // Held to one ticket: named, and a press opens it (digest B §1.6).
    if (held && ctx.pickTicket) {
      const name = "#" + String(held.number).padStart(2, "0") + " " + held.title;
      const open = el("button", "link asked-ticket", name);
      open.type = "button";
      open.dataset.ticketId = held.id;
      open.addEventListener("click", () => ctx.pickTicket(held.id));
      two.appendChild(open);
    }
    const line = r.source_line_id !== null && r.source_line_id !== undefined
      ? document.querySelector('#transcript .msg[data-id="' + r.source_line_id + '"]')
      : null;
    if (line) {
      const jump = el("button", "link asked-jump", "Show the line");
      jump.type = "button";
      jump.addEventListener("click", () => {
        line.scrollIntoView({ block: "center" });
        line.classList.add("flash");
        setTimeout(() => line.classList.remove("flash"), 1500);
      });
      two.appendChild(jump);
    }
    li.appendChild(two);
    if ((r.actions || []).length) {
      const bar = el("div", "asked-actions");
      for (const a of r.actions) {
        const b = el("button", "secondary asked-action", ACTION[a] || a);
        b.type = "button";
        b.dataset.action = a;
        b.addEventListener("click", () => press(r, a, b));
        bar.appendChild(b);
      }
      li.appendChild(bar);
    }
    const err = el("p", "error asked-error");
    err.setAttribute("role", "alert");
    err.hidden = true;
    li.appendChild(err);
    return li;
  }

  async function press(r, action, btn) {
    const gen = view.gen;
    btn.disabled = true;
    view.note = null;
    try {
      await api("POST", "/v1/requirements/" + enc(r.id) + "/action", {
        action,
        version: r.version,
        task_id: view.planId,
      });
    } catch (e) {
      if (gen !== view.gen) return;
      btn.disabled = false;
      if (e.code === "requirement_changed") {
        // The entry moved on since it was drawn: show it as it stands, then ask again.
        view.note = r.label + " changed since you saw it; here it is now.";
      } else {
        const err = btn.closest(".asked-row").querySelector(".asked-error");
        err.textContent = e.message || "That did not work; try again";
        err.hidden = false;
        return;
      }
    }
    if (gen === view.gen) load();
  }

  return { mount, open, close, listen, picked, tickets };
};
