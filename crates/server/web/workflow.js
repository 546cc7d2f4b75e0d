// Troupe web page: the workflow header of a conversation — the workflow slot (Plan, Light
// Loop), a BlueprintLoop's status and its forms, and the pause latch's Continue / Abandon.
// app.js creates it with the shared state and helpers it needs.
"use strict";

window.troupeWorkflow = function (ctx) {
  const { $, state, api, showError, renderPaused, loadSessions, selectSession, fetchNewMessages } =
    ctx;

  // Lattice's selector entry and panel (lattice.js).
  const lattice = window.troupeLattice({ $, state, api, showError, applyWorkflowView, refreshWorkflow });
  // Boss Mode's selector entry, its tree panel and a worker's closed composer (boss.js).
  const boss = window.troupeBoss({ $, state, api, showError, applyWorkflowView, refreshWorkflow, selectSession });

  const PHASES = {
    executing: "executing",
    stop_pending: "review about to start",
    reviewing: "under review",
  };

  const LOOP_STATUS = {
    armed: "starting",
    running: "executing",
    auditing: "under audit",
  };

  // The BlueprintLoop this session executes, as one line: status, iteration, the auditor.
  function blueprintText(l) {
    const parts = ["BlueprintLoop " + l.id + " \u201c" + l.title + "\u201d"];
    let status = LOOP_STATUS[l.status] || String(l.status);
    if (l.status === "running" && l.stop_request) status = "audit about to start";
    parts.push(status);
    const iteration = ((l.audit && l.audit.attempts) || 0) + 1;
    const max = typeof l.max_iterations === "number" ? " of " + l.max_iterations : "";
    parts.push("iteration " + iteration + max);
    if (l.audit_thread_id) parts.push("auditor: " + l.audit_agent + " (thread " + l.audit_thread_id + ")");
    return parts.join(" \u00b7 ");
  }

  const GUARD_PAUSES = {
    model_call_budget_exhausted: "paused: model-call budget spent",
    no_progress: "paused: no progress",
  };

  // The loop's continuation guard: calls spent of the budget, and why it paused.
  function guardText(g) {
    if (!g) return "";
    const parts = [];
    const max = g.max_model_calls > 0 ? " of " + g.max_model_calls : " (no limit)";
    parts.push("model calls " + g.model_calls + max);
    if (g.paused) parts.push(GUARD_PAUSES[g.paused] || "paused: " + String(g.paused));
    return " \u00b7 " + parts.join(" \u00b7 ");
  }

  function workflowText(w) {
    if (w && w.blueprint_loop) return blueprintText(w.blueprint_loop) + guardText(w.guard);
    const kind = w && w.kind;
    if (!kind) {
      let t = "Workflow: none";
      const last = w && w.last_terminal;
      if (last && last.status) t += " (last Light Loop " + last.status + ")";
      return t;
    }
    if (kind === "plan") return "Workflow: Plan";
    if (kind === "lattice") return lattice.statusText(w);
    if (kind === "boss") return boss.statusText(w);
    if (kind === "lightloop") {
      const parts = ["Workflow: Light Loop"];
      if (w.phase) parts.push(PHASES[w.phase] || String(w.phase));
      if (typeof w.iteration === "number") {
        const max = w.slot && typeof w.slot.max_iterations === "number" ? w.slot.max_iterations : null;
        parts.push("iteration " + w.iteration + (max !== null ? " of " + max : ""));
      }
      if (w.reviewer && w.reviewer.running) parts.push("reviewer working");
      return parts.join(" · ") + guardText(w.guard);
    }
    return "Workflow: " + String(kind) + " (not known to this page)";
  }

  function renderWorkflow() {
    const panel = $("#workflow-panel");
    // A workflow belongs to a Bot's direct; groups and Bot↔Bot directs have none to set.
    if (!state.current || state.current.kind === "group" || state.current.kind === "bot_direct") {
      panel.hidden = true;
      return;
    }
    panel.hidden = false;
    const w = state.workflow;
    const kind = w ? w.kind : state.current.workflow && state.current.workflow.kind;
    $("#workflow-status").textContent = workflowText(w || { kind: kind || null });
    $("#workflow-status").dataset.kind = kind || "none";
    const loop = w && w.blueprint_loop;
    $("#workflow-status").dataset.loop = loop ? loop.status : "";
    $("#enable-plan").hidden = !!kind || !!loop;
    $("#enable-lightloop").hidden = !!kind || !!loop;
    $("#workflow-off").hidden = !kind;
    $("#enable-blueprint").hidden = !!loop || kind === "lattice";
    lattice.render(w);
    boss.render(w);
    $("#blueprint-cancel-loop").hidden = !loop;
    if (kind || loop) showLightloopForm(false);
    if (loop) showBlueprintForm(false);
  }

  async function showBlueprintForm(show) {
    $("#blueprint-form").hidden = !show;
    $("#enable-blueprint").setAttribute("aria-expanded", String(show));
    if (!show) return;
    const select = $("#blueprint-note");
    select.replaceChildren();
    $("#blueprint-submit").disabled = false;
    try {
      const notes = await api("GET", "/v1/notes?kind=blueprint&limit=200");
      for (const n of notes) {
        const o = document.createElement("option");
        o.value = String(n.id);
        o.dataset.version = String(n.version);
        o.textContent = n.title + " (v" + n.version + (n.active_loop_id ? ", running" : "") + ")";
        select.appendChild(o);
      }
      // Nothing to start without one: the button waits for a Blueprint.
      $("#blueprint-submit").disabled = !notes.length;
      if (!notes.length) showError($("#workflow-error"), "No Blueprint yet: turn Plan on and ask the Bot to write one.");
    } catch (e) {
      showError($("#workflow-error"), e);
    }
    select.focus();
  }

  async function submitBlueprint(ev) {
    ev.preventDefault();
    if (!state.current) return;
    const errEl = $("#workflow-error");
    showError(errEl, null);
    const opt = $("#blueprint-note").selectedOptions[0];
    if (!opt) {
      showError(errEl, "Choose a Blueprint first.");
      return;
    }
    const body = {
      session_id: state.current.id,
      note_id: Number(opt.value),
      note_version: Number(opt.dataset.version),
      run_mode: $("#blueprint-mode").value,
    };
    const instruction = $("#blueprint-instruction").value.trim();
    if (instruction) body.instruction = instruction;
    const max = $("#blueprint-max").value.trim();
    if (max) {
      const n = Number(max);
      if (!Number.isInteger(n) || n < 1) {
        showError(errEl, "Max iterations is a whole number (1 or more), or empty.");
        return;
      }
      body.max_iterations = n;
    }
    const calls = readBudget($("#blueprint-calls"));
    if (calls === false) return;
    if (calls !== null) body.max_model_calls = calls;
    const btn = $("#blueprint-submit");
    const gen = state.gen;
    btn.disabled = true;
    try {
      const l = await api("POST", "/v1/blueprint-loops", body);
      if (gen !== state.gen) return;
      $("#blueprint-form").reset();
      showBlueprintForm(false);
      if (l.session_id && l.session_id !== state.current.id) {
        await loadSessions();
        selectSession(l.session_id);
        return;
      }
    } catch (e) {
      if (gen === state.gen) showError(errEl, e);
    } finally {
      btn.disabled = false;
      if (gen === state.gen) refreshWorkflow();
    }
  }

  async function cancelBlueprintLoop(btn) {
    const loop = state.workflow && state.workflow.blueprint_loop;
    if (!loop) return;
    const gen = state.gen;
    btn.disabled = true;
    try {
      await api("POST", "/v1/blueprint-loops/" + encodeURIComponent(loop.id) + "/cancel", {});
    } catch (e) {
      if (gen === state.gen) showError($("#workflow-error"), e);
    } finally {
      btn.disabled = false;
      if (gen === state.gen) refreshWorkflow();
    }
  }

  function showLightloopForm(show) {
    $("#lightloop-form").hidden = !show;
    $("#enable-lightloop").setAttribute("aria-expanded", String(show));
    if (show) $("#lightloop-instructions").focus();
  }

  // Re-reads the workflow (and the pause latch and running flag it carries). Calls that
  // arrive while one is in flight fold into a single follow-up.
  async function refreshWorkflow() {
    if (!state.current) return;
    if (state.wfLoading) {
      state.wfAgain = true;
      return;
    }
    state.wfLoading = true;
    try {
      do {
        state.wfAgain = false;
        const gen = state.gen;
        const sid = state.current.id;
        let w;
        try {
          w = await api("GET", "/v1/sessions/" + encodeURIComponent(sid) + "/workflow");
        } catch (e) {
          return;
        }
        if (gen !== state.gen || !state.current) return;
        applyWorkflowView(w);
      } while (state.wfAgain);
    } finally {
      state.wfLoading = false;
    }
  }

  function applyWorkflowView(w) {
    if (!w || !state.current || w.session_id !== state.current.id) return;
    state.workflow = w;
    state.current.paused = w.paused || null;
    state.current.blocked_by = w.blocked_by || null;
    state.current.workflow = w.slot || null;
    renderWorkflow();
    renderPaused();
  }

  async function workflowAction(btn, body) {
    if (!state.current) return;
    const errEl = $("#workflow-error");
    showError(errEl, null);
    const gen = state.gen;
    btn.disabled = true;
    try {
      const w = await api(
        "POST",
        "/v1/sessions/" + encodeURIComponent(state.current.id) + "/workflow",
        body
      );
      if (gen !== state.gen) return;
      applyWorkflowView(w);
      if (body.kind === "lightloop") {
        $("#lightloop-form").reset();
        showLightloopForm(false);
      }
    } catch (e) {
      if (gen === state.gen) showError(errEl, e);
    } finally {
      btn.disabled = false;
      if (gen === state.gen) refreshWorkflow();
    }
  }

  // A model-call budget field: null when empty, false (error shown) when not a whole number.
  function readBudget(input) {
    const raw = input.value.trim();
    if (!raw) return null;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 0) {
      showError($("#workflow-error"), "Max model calls is a whole number (0 for no limit), or empty.");
      return false;
    }
    return n;
  }

  function submitLightloop(ev) {
    ev.preventDefault();
    const instructions = $("#lightloop-instructions").value.trim();
    if (!instructions) {
      showError($("#workflow-error"), "Write the Light Loop's task first.");
      return;
    }
    const body = { kind: "lightloop", instructions };
    const max = $("#lightloop-max").value.trim();
    if (max) {
      const n = Number(max);
      if (!Number.isInteger(n) || n < 0) {
        showError($("#workflow-error"), "Max iterations is a whole number (0 or more), or empty.");
        return;
      }
      body.max_iterations = n;
    }
    const calls = readBudget($("#lightloop-calls"));
    if (calls === false) return;
    if (calls !== null) body.max_model_calls = calls;
    workflowAction($("#lightloop-submit"), body);
  }

  // Continue / Abandon: both answer with a report; the page re-reads the state after.
  async function latchAction(btn, what) {
    if (!state.current) return;
    const errEl = $("#workflow-error");
    showError(errEl, null);
    const gen = state.gen;
    btn.disabled = true;
    try {
      await api("POST", "/v1/sessions/" + encodeURIComponent(state.current.id) + "/" + what, {});
      if (gen === state.gen) {
        state.current.paused = null;
        renderPaused();
      }
    } catch (e) {
      if (gen === state.gen) showError(errEl, e);
    } finally {
      btn.disabled = false;
      if (gen === state.gen) {
        refreshWorkflow();
        fetchNewMessages(gen).catch(() => {});
      }
    }
  }

  function bind() {
    lattice.bind();
    boss.bind();
    $("#enable-plan").addEventListener("click", (e) => workflowAction(e.currentTarget, { kind: "plan" }));
    $("#enable-lightloop").addEventListener("click", () => {
      showError($("#workflow-error"), null);
      showLightloopForm($("#lightloop-form").hidden);
    });
    $("#lightloop-form").addEventListener("submit", submitLightloop);
    $("#lightloop-cancel").addEventListener("click", () => showLightloopForm(false));
    $("#workflow-off").addEventListener("click", (e) => workflowAction(e.currentTarget, { kind: "none" }));
    $("#enable-blueprint").addEventListener("click", () => {
      showError($("#workflow-error"), null);
      showBlueprintForm($("#blueprint-form").hidden);
    });
    $("#blueprint-form").addEventListener("submit", submitBlueprint);
    $("#blueprint-form-cancel").addEventListener("click", () => showBlueprintForm(false));
    $("#blueprint-cancel-loop").addEventListener("click", (e) => cancelBlueprintLoop(e.currentTarget));
    // One workflow form open at a time: a second would push the transcript out of sight.
    const forms = [
      ["enable-lightloop", "lightloop-form"],
      ["enable-blueprint", "blueprint-form"],
      ["enable-lattice", "lattice-form"],
      ["enable-boss", "boss-form"],
    ];
    for (const [button] of forms) {
      $("#" + button).addEventListener("click", () => {
        for (const [other, form] of forms) {
          if (other === button) continue;
          $("#" + form).hidden = true;
          $("#" + other).setAttribute("aria-expanded", "false");
        }
      });
    }
    $("#continue").addEventListener("click", (e) => latchAction(e.currentTarget, "continue"));
    $("#abandon").addEventListener("click", (e) => latchAction(e.currentTarget, "abandon"));
  }

  return { renderWorkflow, refreshWorkflow, applyWorkflowView, showLightloopForm, showBlueprintForm, bind };
};
