// Troupe web page: Runtime Boss Mode (issue 18 items 14, 15, 19, 20). A "Runtime Boss" panel in
// the sidebar holds the settings (GET/PATCH /v1/settings/runtime): the switch, the persona (a
// preset or custom traits), the briefing interval; Save shows a refusal inline. "Open boss
// session" (POST /v1/boss/session/open) saves nothing: while the mode is off it shows the 409
// inline, else it opens the boss's conversation. In a conversation, a runtime boss's channel
// pushes that wait for the person (GET /v1/permissions?session_id=) show above the composer with
// Allow and Deny (POST /v1/permissions/:id). All text is set with textContent.
"use strict";

window.troupeRuntimeBoss = function (ctx) {
  const { $, el, api, state, selectSession } = ctx;
  const TRAITS = ["formality", "conciseness", "proactiveness", "warmth"];

  // ---------- the settings panel ----------

  const section = el("section", "runtime-boss-panel");
  section.id = "runtime-boss-panel";
  const details = el("details");
  details.id = "runtime-boss-details";
  const summary = el("summary");
  summary.appendChild(el("h2", null, "Runtime Boss"));
  details.appendChild(summary);
  details.appendChild(
    el("p", "hint", "One standing coordinator reached from your chat channels, and from here.")
  );
  const form = el("form");
  form.id = "runtime-boss-form";
  form.dataset.testid = "runtime-boss-form";
  form.autocomplete = "off";

  function field(label, input) {
    const l = el("label", null, label);
    l.htmlFor = input.id;
    form.appendChild(l);
    form.appendChild(input);
  }

  const mode = el("input");
  mode.type = "checkbox";
  mode.id = "rb-mode";
  const modeRow = el("label", "row");
  modeRow.appendChild(mode);
  modeRow.appendChild(document.createTextNode(" Boss Mode on (channel messages go to the boss)"));
  form.appendChild(modeRow);

  const persona = el("select");
  persona.id = "rb-persona";
  for (const [v, t] of [
    ["", "Default colleague"],
    ["project_manager", "Project manager"],
    ["ops_assistant", "Ops assistant"],
    ["custom", "Custom"],
  ]) {
    const o = el("option", null, t);
    o.value = v;
    persona.appendChild(o);
  }
  field("Persona", persona);
  const traits = el("div", "rb-traits");
  const sliders = {};
  for (const t of TRAITS) {
    const s = el("input");
    s.type = "range";
    s.min = "0";
    s.max = "1";
    s.step = "0.1";
    s.value = "0.5";
    s.id = "rb-" + t;
    const l = el("label", null, t[0].toUpperCase() + t.slice(1));
    l.htmlFor = s.id;
    traits.appendChild(l);
    traits.appendChild(s);
    sliders[t] = s;
  }
  form.appendChild(traits);
  persona.addEventListener("change", () => {
    traits.hidden = persona.value !== "custom";
  });

  const interval = el("input");
  interval.type = "number";
  interval.min = "1";
  interval.max = "365";
  interval.id = "rb-interval";
  interval.placeholder = "none";
  field("Re-brief every N days", interval);

  const buttons = el("div", "row");
  const save = el("button", null, "Save");
  save.type = "submit";
  save.id = "rb-save";
  const open = el("button", "secondary", "Open boss session");
  open.type = "button";
  open.id = "rb-open";
  buttons.appendChild(save);
  buttons.appendChild(open);
  form.appendChild(buttons);
  const note = el("p", "hint");
  note.id = "rb-note";
  note.setAttribute("role", "status");
  const error = el("p", "error");
  error.id = "rb-error";
  error.setAttribute("role", "alert");
  error.hidden = true;
  form.appendChild(note);
  form.appendChild(error);
  details.appendChild(form);
  section.appendChild(details);
  const bots = $("#bots-panel");
  bots.parentNode.insertBefore(section, bots);

  function say(text, isError) {
    error.hidden = !isError;
    error.textContent = isError ? text : "";
    note.textContent = isError ? "" : text || "";
  }

  function show(s) {
    mode.checked = !!s.boss_mode;
    interval.value = s.briefing_interval_days == null ? "" : String(s.briefing_interval_days);
    const p = s.persona;
    persona.value = p ? p.preset : "";
    if (p && p.preset === "custom") for (const t of TRAITS) sliders[t].value = String(p[t]);
    traits.hidden = persona.value !== "custom";
  }

  function patchOf() {
    const days = interval.value.trim();
    let p = null;
    if (persona.value === "custom") {
      p = { preset: "custom" };
      for (const t of TRAITS) p[t] = Number(sliders[t].value);
    } else if (persona.value) {
      p = { preset: persona.value };
    }
    return {
      boss_mode: mode.checked,
      briefing_interval_days: days === "" ? null : Number(days),
      persona: p,
    };
  }

  async function load() {
    try {
      show(await api("GET", "/v1/settings/runtime"));
    } catch (e) {
      say(e.message, true);
    }
  }

  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    save.disabled = true;
    try {
      const out = await api("PATCH", "/v1/settings/runtime", patchOf());
      show(out.settings);
      say("Saved.", false);
    } catch (e) {
      say(e.message, true);
    } finally {
      save.disabled = false;
    }
  });

  open.addEventListener("click", async () => {
    open.disabled = true;
    try {
      const out = await api("POST", "/v1/boss/session/open", {});
      say(out.created ? "The boss's conversation is new." : "", false);
      await ctx.loadSessions();
      await selectSession(out.session_id);
    } catch (e) {
      say(e.code === "boss_disabled" ? "Runtime Boss Mode is off: turn it on and save first." : e.message, true);
    } finally {
      open.disabled = false;
    }
  });

  details.addEventListener("toggle", () => {
    if (details.open) load();
  });

  // ---------- permissions in the conversation ----------

  const box = el("section", "permissions-box");
  box.id = "permissions-box";
  box.dataset.testid = "permissions-box";
  box.setAttribute("aria-label", "Waiting for your permission");
  box.hidden = true;
  const composer = $("#composer-form");
  composer.parentNode.insertBefore(box, composer);

  function describe(p) {
    const r = p.request || {};
    const where = [r.account_id, r.chat_id].filter(Boolean).join(" \u00b7 ");
    return "Send to " + (where || "the chat") + ": \u201c" + (r.text || "") + "\u201d";
  }

  async function decide(p, decision, buttonsRow) {
    for (const b of buttonsRow.querySelectorAll("button")) b.disabled = true;
    try {
      await api("POST", "/v1/permissions/" + p.id, { decision });
    } catch (e) {
      buttonsRow.appendChild(el("span", "error", e.message));
    }
    refresh();
  }

  async function refresh() {
    const current = state.current;
    if (!current) {
      box.hidden = true;
      return;
    }
    let list;
    try {
      list = await api("GET", "/v1/permissions?session_id=" + encodeURIComponent(current.id));
    } catch (e) {
      return; // the next event reads again
    }
    if (state.current !== current) return;
    const pending = (list.permissions || []).filter((p) => p.status === "pending");
    box.hidden = pending.length === 0;
    box.replaceChildren();
    if (!pending.length) return;
    box.appendChild(el("h3", null, "Waiting for your permission"));
    for (const p of pending) {
      const row = el("div", "permission");
      row.dataset.id = String(p.id);
      row.appendChild(el("p", null, describe(p)));
      const actions = el("div", "row");
      const allow = el("button", null, "Allow");
      allow.type = "button";
      allow.addEventListener("click", () => decide(p, "allow", actions));
      const deny = el("button", "secondary", "Deny");
      deny.type = "button";
      deny.addEventListener("click", () => decide(p, "deny", actions));
      actions.appendChild(allow);
      actions.appendChild(deny);
      row.appendChild(actions);
      box.appendChild(row);
    }
  }

  function listen(es, live) {
    box.hidden = true;
    for (const kind of ["permission_requested", "permission_decided"]) {
      es.addEventListener(kind, () => live() && refresh());
    }
    refresh();
  }

  return { listen, load };
};
