// Troupe web page: Lattice — its entry in the workflow selector (mode, goal, model-call cap)
// and its panel: the Run's status and reason, state, mode, calls of the cap, requirements, the
// Pathway (history, current, future) with each Step's Blueprint and loop attempts, and the
// person's Approve, Resume and Cancel. There is no Pause: a Run pauses on its own.
// workflow.js creates it with the shared state and helpers; all text is set with textContent.
"use strict";

window.troupeLattice = function (ctx) {
  const { $, state, api, showError, applyWorkflowView, refreshWorkflow } = ctx;

  // The events that change a Run; the panel re-reads the workflow on each.
  const EVENTS = [
    "lattice_run_created",
    "lattice_state_changed",
    "lattice_run_paused",
    "lattice_run_resumed",
    "lattice_run_completed",
    "lattice_run_cancelled",
    "lattice_run_updated",
    "lattice_pathway_replaced",
    "lattice_action_submitted",
    "lattice_action_consumed",
    "lattice_step_blueprint_bound",
    "lattice_step_started",
    "lattice_step_completed",
    "lattice_step_failed",
    "lattice_step_cancelled",
    "lattice_loop_cancelled",
    "lattice_budget_exhausted",
  ];

  const STATES = {
    clarifying: "clarifying the goal",
    planning: "planning the Pathway",
    reviewing_pathway: "reviewing the Pathway",
    blueprinting: "writing the Step's Blueprint",
    reviewing_blueprint: "reviewing the Blueprint",
    awaiting_execution: "awaiting your approval",
    executing: "executing the Step",
  };

  const TERMINAL = ["completed", "failed", "cancelled"];

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = text;
    return e;
  }

  function words(code) {
    return String(code).replace(/_/g, " ");
  }

  // The frame the page's other panels have (border, radius, background), in its own colours.
  function framed(e) {
    e.style.border = "1px solid var(--line)";
    e.style.borderRadius = "var(--radius)";
    e.style.padding = "0.4rem 0.75rem 0.6rem";
    e.style.marginTop = "0.5rem";
    e.style.background = "var(--bg)";
    e.style.maxWidth = "48rem";
    return e;
  }

  // ---------- the selector entry and its form ----------

  let enableBtn = null;
  let form = null;
  let panel = null;

  function buildSelector() {
    enableBtn = el("button", "secondary", "Lattice\u2026");
    enableBtn.type = "button";
    enableBtn.id = "enable-lattice";
    enableBtn.title = "Align a large goal, plan a Pathway of Steps and carry out each as a reviewed Blueprint";
    enableBtn.setAttribute("aria-expanded", "false");
    enableBtn.setAttribute("aria-controls", "lattice-form");
    $("#enable-lightloop").after(enableBtn);

    form = framed(el("form"));
    form.id = "lattice-form";
    form.hidden = true;
    form.autocomplete = "off";
    const modeLabel = el("label", null, "Mode");
    modeLabel.htmlFor = "lattice-mode";
    const mode = el("select");
    mode.id = "lattice-mode";
    for (const [value, text] of [
      ["collaborative", "collaborative: you approve each Step's Blueprint"],
      ["auto", "auto: each reviewed Blueprint runs at once"],
    ]) {
      const o = el("option", null, text);
      o.value = value;
      mode.appendChild(o);
    }
    const goalLabel = el("label", null, "Goal ");
    goalLabel.htmlFor = "lattice-goal";
    goalLabel.appendChild(el("span", "hint", "(optional: or tell the Bot in the conversation)"));
    const goal = el("textarea");
    goal.id = "lattice-goal";
    goal.rows = 2;
    goal.placeholder = "The large goal the Bot should align, plan and carry out";
    const capLabel = el("label", null, "Max model calls ");
    capLabel.htmlFor = "lattice-calls";
    capLabel.appendChild(el("span", "hint", "(optional: the Run pauses when they are spent; 0 or empty for no cap)"));
    const cap = el("input");
    cap.id = "lattice-calls";
    cap.type = "number";
    cap.min = "0";
    cap.step = "1";
    cap.inputMode = "numeric";
    cap.style.maxWidth = "10rem";
    const row = el("div", "row");
    const submit = el("button", null, "Start Lattice");
    submit.type = "submit";
    submit.id = "lattice-submit";
    const cancel = el("button", "secondary", "Cancel");
    cancel.type = "button";
    cancel.id = "lattice-form-cancel";
    row.append(submit, cancel);
    form.append(modeLabel, mode, goalLabel, goal, capLabel, cap, row);
    $("#lightloop-form").after(form);

    panel = framed(el("section"));
    panel.id = "lattice-panel";
    panel.dataset.testid = "lattice-panel";
    panel.setAttribute("aria-label", "Lattice run");
    panel.hidden = true;
    // Like the Jobs panel: the conversation stays in view below a long Pathway.
    panel.style.maxHeight = "50vh";
    panel.style.overflowY = "auto";
    panel.style.overflowWrap = "anywhere";
    panel.style.fontSize = "0.9rem";
    form.after(panel);
  }

  function showForm(show) {
    form.hidden = !show;
    enableBtn.setAttribute("aria-expanded", String(show));
    if (show) $("#lattice-goal").focus();
  }

  async function submitForm(ev) {
    ev.preventDefault();
    if (!state.current) return;
    const errEl = $("#workflow-error");
    showError(errEl, null);
    const body = { kind: "lattice", mode: $("#lattice-mode").value };
    const goal = $("#lattice-goal").value.trim();
    if (goal) body.goal = goal;
    const raw = $("#lattice-calls").value.trim();
    if (raw) {
      const n = Number(raw);
      if (!Number.isInteger(n) || n < 0) {
        showError(errEl, "Max model calls is a whole number (0 for no cap), or empty.");
        return;
      }
      body.max_model_calls = n;
    }
    const btn = $("#lattice-submit");
    const gen = state.gen;
    btn.disabled = true;
    try {
      const w = await api(
        "POST",
        "/v1/sessions/" + encodeURIComponent(state.current.id) + "/workflow",
        body
      );
      if (gen !== state.gen) return;
      form.reset();
      showForm(false);
      applyWorkflowView(w);
    } catch (e) {
      if (gen === state.gen) showError(errEl, e);
    } finally {
      btn.disabled = false;
      if (gen === state.gen) refreshWorkflow();
    }
  }

  // ---------- the panel ----------

  function statusWords(run) {
    let t = run.status;
    if (run.status_reason) t += ": " + words(run.status_reason);
    return t;
  }

  function callsWords(run) {
    if (run.max_model_calls > 0) return "calls " + run.model_call_count + " of " + run.max_model_calls;
    return "calls " + run.model_call_count + ", no cap";
  }

  // The one line the workflow bar shows while the slot holds Lattice.
  function statusText(w) {
    const run = w && w.lattice;
    if (!run) return "Workflow: Lattice";
    const parts = ["Workflow: Lattice " + run.mode];
    if (run.status === "active") parts.push(STATES[run.state] || words(run.state));
    else parts.push(statusWords(run));
    parts.push(callsWords(run));
    return parts.join(" \u00b7 ");
  }

  function field(name, value) {
    const p = el("p");
    p.appendChild(el("span", "hint", name + ": "));
    p.appendChild(document.createTextNode(value));
    return p;
  }

  function list(name, items) {
    const wrap = el("div");
    if (!items || !items.length) return wrap;
    wrap.appendChild(el("span", "hint", name));
    const ul = el("ul");
    ul.style.margin = "0.1rem 0 0.2rem";
    ul.style.paddingLeft = "1.2rem";
    for (const i of items) ul.appendChild(el("li", null, i));
    wrap.appendChild(ul);
    return wrap;
  }

  function requirementsBlock(run) {
    const box = el("div", "lattice-requirements");
    const r = run.requirements;
    if (!r) {
      const seed = run.goal_seed ? "Goal as given: " + run.goal_seed + ". " : "";
      box.appendChild(el("p", "hint", seed + "Requirements not agreed yet."));
      return box;
    }
    box.appendChild(field("Goal", r.goal));
    box.appendChild(list("Success criteria", r.success_criteria));
    box.appendChild(list("Constraints", r.constraints));
    box.appendChild(list("Non-goals", r.non_goals));
    box.appendChild(list("Assumptions", r.assumptions));
    return box;
  }

  function blueprintLink(b) {
    const a = el("a", null, "Blueprint note_" + b.note_id + " v" + b.bound_version);
    a.href = "/v1/notes/" + encodeURIComponent(b.note_id);
    a.target = "_blank";
    a.rel = "noopener";
    return a;
  }

  function attemptText(a) {
    let t = "loop " + a.loop_id + " " + a.status;
    if (a.error) t += ": " + a.error;
    else if (a.summary) t += ": " + a.summary;
    return t;
  }

  function stepRow(step) {
    const li = el("li", "job-row lattice-step");
    li.dataset.status = step.status;
    li.dataset.step = step.id;
    const head = el("div", "job-who");
    head.appendChild(el("span", "job-name", step.title));
    const badge = el("span", "badge lattice-step-status", words(step.status));
    badge.dataset.status = step.status;
    head.appendChild(badge);
    li.appendChild(head);
    li.appendChild(el("p", "hint", step.objective));
    const b = step.blueprint;
    if (b) {
      const p = el("p", "lattice-blueprint");
      p.appendChild(blueprintLink(b));
      const reviewed = b.reviewed_version === b.bound_version && b.reviewed_digest === b.content_digest;
      p.appendChild(el("span", "badge", reviewed ? "reviewed" : "not reviewed yet"));
      li.appendChild(p);
    }
    const attempts = step.loop_history || [];
    if (attempts.length) {
      const ul = el("ul", "work-items");
      for (const a of attempts) ul.appendChild(el("li", "work-item lattice-attempt", attemptText(a)));
      li.appendChild(ul);
    }
    if (step.result_summary) li.appendChild(field("Result", step.result_summary));
    if (step.failure_reason) li.appendChild(field("Failed", step.failure_reason));
    return li;
  }

  function pathwayBlock(run) {
    const box = el("div", "lattice-pathway");
    const split = run.split || { history: [], current: null, editable_future: [] };
    const groups = [
      ["Done", split.history || [], "history"],
      ["Current", split.current ? [split.current] : [], "current"],
      ["Next", split.editable_future || [], "future"],
    ];
    let any = false;
    for (const [name, steps, where] of groups) {
      if (!steps.length) continue;
      any = true;
      const h = el("h4", null, name);
      h.style.margin = "0.5rem 0 0.1rem";
      h.style.fontSize = "0.9rem";
      const ul = el("ul");
      ul.className = "lattice-steps";
      ul.dataset.part = where;
      ul.style.listStyle = "none";
      ul.style.margin = "0";
      ul.style.padding = "0";
      for (const s of steps) ul.appendChild(stepRow(s));
      box.append(h, ul);
    }
    if (!any) box.appendChild(el("p", "hint", "No Pathway yet."));
    return box;
  }

  // Resume applies to a paused Run, or to an active one whose current Step failed or was
  // cancelled (the Step goes back to blueprinting with its evidence kept).
  function canResume(run) {
    if (run.status === "paused") return true;
    const cur = run.split && run.split.current;
    return run.status === "active" && !!cur && (cur.status === "failed" || cur.status === "cancelled");
  }

  function button(id, text, cls, title, onClick) {
    const b = el("button", cls, text);
    b.type = "button";
    b.id = id;
    b.title = title;
    b.addEventListener("click", (e) => onClick(e.currentTarget));
    return b;
  }

  async function runAction(btn, run, what) {
    const errEl = $("#workflow-error");
    showError(errEl, null);
    const gen = state.gen;
    btn.disabled = true;
    try {
      await api("POST", "/v1/lattice/runs/" + encodeURIComponent(run.id) + "/" + what, {});
    } catch (e) {
      if (gen === state.gen) showError(errEl, e);
    } finally {
      btn.disabled = false;
      if (gen === state.gen) refreshWorkflow();
    }
  }

  function render(w) {
    if (!panel) return; // not bound yet
    attachEvents();
    const run = w && w.lattice;
    const kind = w && w.kind;
    // The entry is offered while no workflow or loop holds the session; a terminal Run stays
    // readable in the panel after its slot cleared.
    enableBtn.hidden = !!kind || !!(w && w.blueprint_loop);
    if (enableBtn.hidden) showForm(false);
    panel.replaceChildren();
    panel.hidden = !run || (!!kind && kind !== "lattice");
    if (panel.hidden) return;
    panel.dataset.status = run.status;
    panel.dataset.state = run.state;

    const head = el("div", "settings-head");
    const title = el("h3", null, "Lattice lat_" + run.id);
    head.appendChild(title);
    const badges = el("span", "job-who");
    const st = el("span", "badge job-status lattice-status", run.status);
    st.dataset.status = run.status === "active" ? "active" : run.status === "completed" ? "done" : run.status;
    badges.append(st, el("span", "badge lattice-mode", run.mode));
    head.appendChild(badges);
    panel.appendChild(head);

    const status = el("p", "lattice-status-line", "Status: " + statusWords(run));
    status.dataset.testid = "lattice-status";
    status.setAttribute("role", "status");
    if (run.status === "paused") status.style.fontWeight = "600";
    panel.appendChild(status);
    const stateLine = el("p", "lattice-state", "State: " + (STATES[run.state] || words(run.state)));
    stateLine.dataset.testid = "lattice-state";
    stateLine.dataset.state = run.state;
    panel.appendChild(stateLine);
    panel.appendChild(el("p", "lattice-mode-line", "Mode: " + run.mode));
    const calls = el("p", "lattice-calls", callsWords(run));
    calls.dataset.testid = "lattice-calls";
    panel.appendChild(calls);
    if (run.status === "active" && run.valid_action) {
      panel.appendChild(el("p", "hint", "Next: " + words(run.valid_action)));
    }
    panel.appendChild(requirementsBlock(run));
    panel.appendChild(pathwayBlock(run));

    const row = el("div", "row lattice-buttons");
    row.style.flexWrap = "wrap";
    if (run.status === "active" && run.state === "awaiting_execution") {
      row.appendChild(
        button("lattice-approve", "Approve", null, "Execute exactly the reviewed Blueprint of the current Step", (b) =>
          runAction(b, run, "approve")
        )
      );
    }
    if (canResume(run)) {
      row.appendChild(
        button("lattice-resume", "Resume", null, "Let the Run go on from where it stopped", (b) =>
          runAction(b, run, "resume")
        )
      );
    }
    if (!TERMINAL.includes(run.status)) {
      row.appendChild(
        button("lattice-cancel", "Cancel run", "danger", "End the Run for good; its record is kept", (b) =>
          runAction(b, run, "cancel")
        )
      );
    }
    if (row.childElementCount) panel.appendChild(row);
  }

  // The conversation's event stream is app.js's; each new one gets the Lattice listeners once.
  let attached = null;
  function attachEvents() {
    const es = state.es;
    if (!es || es === attached) return;
    attached = es;
    for (const kind of EVENTS) {
      es.addEventListener(kind, () => {
        if (state.es === es) refreshWorkflow();
      });
    }
  }

  function bind() {
    buildSelector();
    enableBtn.addEventListener("click", () => {
      showError($("#workflow-error"), null);
      showForm(form.hidden);
    });
    form.addEventListener("submit", submitForm);
    $("#lattice-form-cancel").addEventListener("click", () => showForm(false));
  }

  return { bind, render, statusText, showForm };
};
