// Troupe web page: the job's plan in its view (PLAN-O1/O2, PLAN-5; digest B §1.6: with nothing
// picked, the view shows the whole job's plan) — its name, what was asked (verbatim), the goal,
// Done when and rules (only the person writes those two), the process and the progress, each
// with Edit; the name with Rename; Mark done / Set back to active; above Progress, the tickets
// counted by status, a press showing only those in the ticket list. An edit is sent with the
// version it was based on (`PATCH /v1/tasks/:id/spec`): when the plan changed meanwhile the
// daemon says `revision_conflict`, and the editor keeps what was typed, shows the text as it is
// now and saves against that. Read again on the job's `plan_changed` events, never over an open
// editor's words. Text is set with textContent.
"use strict";

window.troupeJobPlan = function (ctx) {
  const { el, api } = ctx;
  const enc = encodeURIComponent;
  const FIELDS = [
    ["goal", "Goal", "What exactly to do now"],
    ["done_when", "Done when", "Results you could check yourself, one a line; only you write them"],
    ["rules", "Rules", "Standards and constraints; only you write them"],
    ["process", "Process", "Steps, who does what"],
    ["progress", "Progress", "Done, to do, stuck"],
  ];
  const STATUS = window.troupeTicketStatuses;
  const view = { planId: null, gen: 0, plan: null, picked: false, editing: null, statusError: "", tickets: [], filter: null };
  let box = null;
  let body = null;

  function mount(host) {
    box = el("section", "job-plan");
    box.id = "job-plan";
    box.setAttribute("aria-labelledby", "job-plan-heading");
    const h = el("h4", null, "The plan");
    h.id = "job-plan-heading";
    box.appendChild(h);
    body = el("div", "job-plan-body");
    box.appendChild(body);
    box.hidden = true;
    host.appendChild(box);
  }

  function open(planId) {
    filterBy(null);
    view.planId = planId;
    view.gen++;
    view.plan = null;
    view.editing = null;
    view.picked = false;
    draw();
    load();
  }

  function close() {
    filterBy(null);
    view.planId = null;
    view.gen++;
    view.plan = null;
    view.editing = null;
    draw();
  }

  const load = window.troupeHttp.reloader(async () => {
    const gen = view.gen;
    if (view.planId === null) return;
    let plan;
    try {
      plan = await api("GET", "/v1/tasks/" + enc(view.planId));
    } catch (e) {
      return; // unreachable: the job view says so; the next event reads again
    }
    if (gen !== view.gen) return;
    view.plan = plan;
    draw();
  });

  function listen(es, mine) {
    for (const kind of ["plan_changed", "plan_delivered", "plan_reopened"]) {
      es.addEventListener(kind, (e) => {
        if (mine(e)) load();
      });
    }
  }

  function tickets(listed) {
    view.tickets = (listed && listed.tickets) || [];
    draw();
  }

  // Above Progress: the tickets counted by status; a press shows only those in the list.
  function filterBy(status) {
    view.filter = status;
    const list = document.getElementById("ticket-list");
    if (!list) return;
    if (status) list.dataset.filter = status;
    else delete list.dataset.filter;
  }

  function countRow() {
    const row = el("div", "job-plan-counts");
    row.setAttribute("role", "group");
    row.setAttribute("aria-label", "Tickets by status; press one to show only those");
    for (const [status, name] of STATUS) {
      const n = view.tickets.filter((t) => t.status === status).length;
      const b = el("button", "secondary job-plan-count", name + " " + n);
      b.type = "button";
      b.dataset.status = status;
      b.setAttribute("aria-pressed", String(view.filter === status));
      b.addEventListener("click", () => {
        filterBy(view.filter === status ? null : status);
        draw();
      });
      row.appendChild(b);
    }
    return row;
  }

  function picked(on) {
    view.picked = on;
    draw();
  }

  // Save `patch` against the version the editor was opened on; a conflict keeps the words.
  async function save(patch, ed, btn) {
    btn.disabled = true;
    ed.error = "";
    try {
      view.plan = await api("PATCH", "/v1/tasks/" + enc(view.planId) + "/spec", { version: ed.version, ...patch });
      view.editing = null;
    } catch (e) {
      if (e.code === "revision_conflict") {
        await load();
        ed.version = view.plan ? view.plan.version : ed.version;
        ed.error = "The plan changed meanwhile: its text as it is now is shown above. Save again to put yours in its place.";
      } else {
        ed.error = e.message || "That did not work; try again";
      }
    } finally {
      btn.disabled = false;
    }
    draw();
  }

  function editor(field, current, multiline) {
    const ed = view.editing;
    const wrap = el("div", "job-plan-editor");
    const input = el(multiline ? "textarea" : "input", "job-plan-input");
    if (!multiline) input.maxLength = 40;
    input.value = ed.text;
    input.setAttribute("aria-label", field === "name" ? "The job's name" : "The plan's " + field.replace("_", " "));
    if (multiline) input.rows = Math.min(12, Math.max(3, ed.text.split("\n").length + 1));
    input.addEventListener("input", () => {
      ed.text = input.value;
    });
    wrap.appendChild(input);
    const row = el("div", "row");
    const ok = el("button", "job-plan-save", "Save");
    ok.type = "button";
    ok.addEventListener("click", () => {
      if (ed.text === current) {
        view.editing = null; // nothing to change
        draw();
        return;
      }
      save({ [field]: field === "name" ? ed.text.trim() : ed.text }, ed, ok);
    });
    const cancel = el("button", "secondary job-plan-cancel", "Cancel");
    cancel.type = "button";
    cancel.addEventListener("click", () => {
      view.editing = null;
      draw();
    });
    row.append(ok, cancel);
    wrap.appendChild(row);
    if (ed.error) {
      const err = el("p", "error job-plan-error", ed.error);
      err.setAttribute("role", "alert");
      wrap.appendChild(err);
    }
    setTimeout(() => input.focus(), 0);
    return wrap;
  }

  function editButton(field, current, label) {
    const b = el("button", "secondary job-plan-edit", label);
    b.type = "button";
    b.dataset.field = field;
    b.addEventListener("click", () => {
      view.editing = { field, text: current, version: view.plan.version, error: "" };
      draw();
    });
    return b;
  }

  function fieldRow(field, name, what) {
    const p = view.plan;
    const current = p.spec[field] || "";
    const row = el("div", "job-plan-field");
    row.dataset.field = field;
    const head = el("div", "job-plan-head");
    head.appendChild(el("span", "job-plan-name", name));
    if (!view.editing || view.editing.field !== field) head.appendChild(editButton(field, current, "Edit"));
    row.appendChild(head);
    row.appendChild(current ? el("p", "job-plan-text", current) : el("p", "hint job-plan-text", what));
    if (view.editing && view.editing.field === field) row.appendChild(editor(field, current, true));
    return row;
  }

  function statusButton() {
    const p = view.plan;
    const active = p.status === "active";
    const b = el("button", "secondary job-plan-status", active ? "Mark done" : "Set back to active");
    b.type = "button";
    b.hidden = p.status === "parked"; // a stop parks it; lifting the stop is how it goes on
    b.addEventListener("click", async () => {
      const ed = { version: p.version, error: "" };
      view.editing = null;
      view.statusError = "";
      await save({ status: active ? "done" : "active" }, ed, b);
      view.statusError = ed.error;
      draw();
    });
    return b;
  }

  // Only a change redraws: a redraw under an open editor would replace the box being typed in.
  let last = "";
  function draw() {
    if (!box) return;
    box.hidden = view.planId === null || view.picked || !view.plan;
    if (box.hidden) {
      last = "";
      return;
    }
    const ed = view.editing;
    const key = JSON.stringify([
      view.plan,
      STATUS.map(([st]) => view.tickets.filter((t) => t.status === st).length),
      view.tickets.length,
      view.filter,
      ed && [ed.field, ed.version, ed.error],
      view.statusError,
    ]);
    if (key === last) return;
    last = key;
    const p = view.plan;
    body.replaceChildren();
    const name = el("div", "job-plan-field");
    name.dataset.field = "name";
    const head = el("div", "job-plan-head");
    head.appendChild(el("span", "job-plan-name", "Name"));
    head.appendChild(el("span", "job-plan-title", p.name));
    if (!view.editing || view.editing.field !== "name") head.appendChild(editButton("name", p.name, "Rename"));
    head.appendChild(statusButton());
    name.appendChild(head);
    if (view.editing && view.editing.field === "name") name.appendChild(editor("name", p.name, false));
    body.appendChild(name);
    if (p.original_request) body.appendChild(el("p", "hint job-plan-asked", "Asked: \u201c" + p.original_request + "\u201d"));
    for (const [field, label, what] of FIELDS) {
      if (field === "progress" && view.tickets.length) body.appendChild(countRow());
      body.appendChild(fieldRow(field, label, what));
    }
    // The status button's own refusal (no editor open) shows under the plan.
    if (!view.editing && view.statusError) {
      const err = el("p", "error job-plan-error", view.statusError);
      err.setAttribute("role", "alert");
      body.appendChild(err);
    }
  }

  return { mount, open, close, listen, tickets, picked };
};
