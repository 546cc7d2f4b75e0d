// Troupe web page: engines (ADR 0085). The sidebar's "Engines" fold sets Settings' default
// engine and switches each engine's steps (the scribe, the retrospective, the reflection),
// saying how many conversations run each; the conversation's header picks the engine it runs,
// or Settings' default. A job's view opens the fold on its engine (`openOn`). A change here
// tells the rest of the page with a `troupe-engines-changed` event on the document. A refused
// change says so where it was made and puts the control back. Text is set with textContent.
"use strict";

window.troupeEngines = function (ctx) {
  const { $, el, state, api, showError } = ctx;
  const enc = encodeURIComponent;
  const ENGINES = ["video", "general", "coding"];
  const STEP = {
    scribe: ["Scribe", "reads your lines into \u201cWhat you asked for\u201d"],
    retrospective: ["Retrospective", "its Bots look back once a job is delivered"],
    reflection: ["Reflection", "after a send-back, proposes one checklist item or check"],
  };
  const view = { data: null, focus: null, session: null };

  function changed() {
    document.dispatchEvent(new CustomEvent("troupe-engines-changed"));
  }

  async function load() {
    try {
      view.data = await api("GET", "/v1/settings/engines");
      showError($("#engines-error"), null);
    } catch (e) {
      showError($("#engines-error"), e);
      return;
    }
    draw();
  }

  function option(value, text) {
    const o = el("option", null, text);
    o.value = value;
    return o;
  }

  function draw() {
    const d = view.data;
    if (!d) return;
    const def = $("#default-engine");
    def.replaceChildren(...ENGINES.map((e) => option(e, e)));
    def.value = d.default_engine;
    const ul = $("#engine-list");
    ul.replaceChildren(...d.engines.map(row));
    // The conversation's menu names the default it would follow.
    drawSessionMenu();
  }

  function row(e) {
    const li = el("li", "engine-row" + (view.focus === e.engine ? " focused" : ""));
    li.dataset.engine = e.engine;
    const head = el("div", "engine-head");
    head.appendChild(el("span", "engine-name", e.engine));
    const n = e.conversations;
    head.appendChild(el("span", "hint engine-count", n + (n === 1 ? " conversation runs it" : " conversations run it")));
    li.appendChild(head);
    for (const [step, on] of Object.entries(e.steps)) {
      const [name, what] = STEP[step] || [step, ""];
      const label = el("label", "engine-step");
      const box = el("input");
      box.type = "checkbox";
      box.checked = on;
      box.dataset.step = step;
      box.addEventListener("change", () => switchStep(e.engine, step, box));
      label.appendChild(box);
      label.appendChild(el("span", null, " " + name));
      if (what) label.appendChild(el("span", "hint", " \u2014 " + what));
      li.appendChild(label);
    }
    return li;
  }

  async function switchStep(engine, step, box) {
    box.disabled = true;
    try {
      await api("PUT", "/v1/settings/engine-steps", { [engine]: { [step]: box.checked } });
      changed();
    } catch (e) {
      box.checked = !box.checked;
      showError($("#engines-error"), e);
    } finally {
      box.disabled = false;
    }
    load();
  }

  async function setDefault() {
    const sel = $("#default-engine");
    sel.disabled = true;
    try {
      view.data = await api("PUT", "/v1/settings/default-engine", { engine: sel.value });
      showError($("#engines-error"), null);
      changed();
    } catch (e) {
      showError($("#engines-error"), e);
    } finally {
      sel.disabled = false;
    }
    draw();
    enter();
  }

  // ---------- the conversation's engine ----------

  function drawSessionMenu() {
    const sel = $("#conv-engine");
    const def = view.data ? view.data.default_engine : null;
    sel.replaceChildren(option("", def ? "Settings\u2019 default (" + def + ")" : "Settings\u2019 default"), ...ENGINES.map((e) => option(e, e)));
    const s = view.session;
    sel.value = s && s.chosen ? s.engine : "";
  }

  // Called when a conversation is selected: only the person's directs and groups pick one.
  async function enter() {
    const s = state.current;
    const line = $("#conv-engine-row");
    view.session = null;
    const id = s && s.id;
    line.hidden = !id || !(s.kind === "direct" || s.kind === "group");
    if (line.hidden) return;
    if (!view.data) await load();
    try {
      const e = await api("GET", "/v1/sessions/" + enc(id) + "/engine");
      if (!state.current || state.current.id !== id) return;
      view.session = e;
      showError($("#conv-engine-error"), null);
    } catch (err) {
      showError($("#conv-engine-error"), err);
    }
    drawSessionMenu();
  }

  async function chooseForSession() {
    const s = state.current;
    if (!s) return;
    const sel = $("#conv-engine");
    sel.disabled = true;
    try {
      view.session = await api("PUT", "/v1/sessions/" + enc(s.id) + "/engine", { engine: sel.value === "" ? null : sel.value });
      showError($("#conv-engine-error"), null);
      changed();
      load();
    } catch (e) {
      showError($("#conv-engine-error"), e);
    } finally {
      sel.disabled = false;
    }
    drawSessionMenu();
  }

  // A job's "Engine: X": the fold opens on that engine.
  function openOn(engine) {
    view.focus = engine;
    const fold = $("#engines-details");
    fold.open = true;
    load().then(() => {
      const li = document.querySelector('#engine-list .engine-row[data-engine="' + engine + '"]');
      if (li) li.scrollIntoView({ block: "center" });
    });
  }

  function bind() {
    $("#engines-details").addEventListener("toggle", () => {
      if ($("#engines-details").open) load();
      else view.focus = null;
    });
    $("#default-engine").addEventListener("change", setDefault);
    $("#conv-engine").addEventListener("change", chooseForSession);
  }

  return { bind, enter, openOn };
};
