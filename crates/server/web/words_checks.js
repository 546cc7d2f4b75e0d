// Troupe web page: "Checks from what you said" in the job view (CW-21) — the checks the app read
// from the person's words (running time, resolution, aspect, frame rate), each labelled by what
// was read ("Running time: 108–132 s"). An offer can be confirmed (it becomes a gate), removed,
// or run again once it has a file to measure; one in force can be removed or run again. Neither
// is ever edited (the API refuses `derived_check`). Notes under the heading say what changed
// since the view last read them: a new offer, a confirmed check that found its file for the
// first time, a confirmed check whose words were erased and is an offer again.
// deliverables.js mounts it and hands it the job's stream; text is set with textContent.
"use strict";

window.troupeWordsChecks = function (ctx) {
  const { el, api } = ctx;
  const enc = encodeURIComponent;
  const checkText = window.troupeCheckText;
  const OUTCOME = { passed: "Passed", failed: "Failed", error: "Error", blocked: "Blocked" };

  const view = { planId: null, gen: 0, checks: null, notes: [], busy: new Set(), error: null };
  let box = null;
  let list = null;
  let notes = null;
  let errorLine = null;

  function mount(host) {
    box = el("section", "said-checks");
    box.id = "said-checks";
    box.setAttribute("aria-labelledby", "said-checks-heading");
    const h = el("h4", null, "Checks from what you said");
    h.id = "said-checks-heading";
    box.appendChild(h);
    notes = el("ul", "said-notes");
    notes.setAttribute("aria-live", "polite");
    box.appendChild(notes);
    list = el("ul", "said-check-list");
    box.appendChild(list);
    errorLine = el("p", "said-error error");
    errorLine.hidden = true;
    box.appendChild(errorLine);
    box.hidden = true;
    host.appendChild(box);
  }

  function open(planId) {
    view.planId = planId;
    view.gen++;
    view.checks = null;
    view.notes = [];
    view.error = null;
    draw();
    load();
  }

  function close() {
    view.planId = null;
    view.gen++;
    view.checks = null;
    if (box) box.hidden = true;
  }

  const load = window.troupeHttp.reloader(async () => {
    const gen = view.gen;
    if (view.planId === null) return;
    let all;
    try {
      all = await api("GET", "/v1/tasks/" + enc(view.planId) + "/checks");
    } catch (e) {
      return; // unreachable: the job view says so; the next event reads again
    }
    if (gen !== view.gen) return;
    const list = Array.isArray(all) ? all : (all && all.checks) || [];
    const words = list.filter((c) => c.kind === "words" && !c.removed_at);
    if (view.checks !== null) view.notes = view.notes.concat(changes(view.checks, words));
    view.checks = words;
    draw();
  });

  // What the board notes, comparing the checks as last read with the checks now.
  function changes(before, now) {
    const out = [];
    const was = new Map(before.map((c) => [String(c.id), c]));
    for (const c of now) {
      const old = was.get(String(c.id));
      const label = checkText(c);
      if (!old) {
        if (c.status === "offer") out.push({ kind: "offer", text: "New offer from your words: " + label + ". Confirm it to make it a gate." });
      } else if (old.status === "in_force" && c.status === "offer") {
        out.push({ kind: "reverted", text: "The words " + label + " stood on were erased: it is an offer again." });
      } else if (c.status === "in_force" && !(old.runs || []).length && (c.runs || []).length) {
        const file = c.path ? " (" + c.path + ")" : "";
        out.push({ kind: "found", text: label + " found its file" + file + " and was measured for the first time." });
      }
    }
    return out;
  }

  function listen(es, mine) {
    for (const kind of ["check_changed", "check_confirmed", "check_run"]) {
      es.addEventListener(kind, (e) => {
        if (mine(e)) load();
      });
    }
    es.addEventListener("open", () => {
      if (view.planId !== null) load();
    });
  }

  async function act(c, what, call) {
    const key = what + ":" + c.id;
    if (view.busy.has(key)) return;
    view.busy.add(key);
    view.error = null;
    draw();
    try {
      await call();
    } catch (e) {
      view.error = (e && e.message) || String(e);
    } finally {
      view.busy.delete(key);
    }
    load();
  }

  function button(c, what, label, call) {
    const b = el("button", "said-" + what, label);
    b.type = "button";
    b.disabled = view.busy.has(what + ":" + c.id);
    b.addEventListener("click", () => act(c, what, call));
    return b;
  }

  function row(c) {
    const li = el("li", "said-check");
    li.dataset.checkId = c.id;
    li.dataset.status = c.status;
    const head = el("div", "check-head");
    head.appendChild(el("span", "check-text", checkText(c)));
    const offer = c.status === "offer";
    head.appendChild(el("span", "badge said-status", offer ? "Offer" : "In force"));
    const run = (c.runs || [])[0];
    if (run) {
      const r = el("span", "badge check-result", OUTCOME[run.outcome] || String(run.outcome));
      r.dataset.outcome = run.outcome;
      head.appendChild(r);
    }
    li.appendChild(head);
    if (run && run.detail) li.appendChild(el("p", "check-detail hint", run.detail));
    const buttons = el("div", "said-buttons");
    const path = "/v1/checks/" + enc(c.id);
    if (offer) buttons.appendChild(button(c, "confirm", "Confirm", () => api("POST", path + "/confirm", {})));
    buttons.appendChild(button(c, "remove", "Remove", () => api("DELETE", path)));
    // Once bound to a file: before that there is nothing to measure.
    if (c.path) buttons.appendChild(button(c, "rerun", "Run again", () => api("POST", path + "/run", {})));
    li.appendChild(buttons);
    return li;
  }

  function draw() {
    if (!box) return;
    const checks = view.checks || [];
    box.hidden = view.planId === null || (!checks.length && !view.notes.length);
    notes.replaceChildren();
    for (const n of view.notes.slice(-5)) {
      const li = el("li", "said-note", n.text);
      li.dataset.kind = n.kind;
      notes.appendChild(li);
    }
    list.replaceChildren();
    for (const c of checks) list.appendChild(row(c));
    errorLine.hidden = !view.error;
    errorLine.textContent = view.error || "";
  }

  return { mount, open, close, listen };
};
