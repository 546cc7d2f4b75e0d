// Troupe web page: the Bots panel — the list of Bots with their endpoints, the new-Bot form
// (its first choice the daemon's `default` role once that is set), and the Bot picker of the
// new-conversation form. app.js creates it with the shared state and helpers it needs.
"use strict";

window.troupeBots = function (ctx) {
  const { $, el, state, api, showError, renderSessions, renderHeader } = ctx;

  // Bots with `scripted: true` are the daemon's built-in demo; a Bot whose endpoint kind is
  // "scripted" replays a script file. Neither calls a real model, and the page says so.
  function isScriptedEndpoint(bot) {
    return !!(bot && bot.endpoint && bot.endpoint.kind === "scripted");
  }

  function endpointLabel(bot) {
    if (bot.scripted) return "scripted demo";
    const ep = bot.endpoint;
    if (!ep) {
      const def = state.defaultRole;
      return def ? "default role · " + (def.model || def.kind) : "default role (not set)";
    }
    if (ep.kind === "scripted") return "scripted (canned replies)";
    return ep.kind + (ep.model ? " · " + ep.model : "");
  }

  function scriptedSuffix(bot) {
    // A name that says it already ("Demo (scripted)") is not told twice.
    if (!bot || /scripted/i.test(bot.name)) return "";
    if (bot.scripted) return "scripted demo";
    if (isScriptedEndpoint(bot)) return "scripted";
    return "";
  }


  async function loadBots() {
    const [bots, roles] = await Promise.all([api("GET", "/v1/bots"), api("GET", "/v1/roles")]);
    state.bots = new Map((bots || []).map((b) => [b.id, b]));
    const def = (roles || []).find((r) => r.role === "default");
    state.defaultRole = def ? def.endpoint : null;
    renderBotKind();
    renderBots();
    renderSessions();
    if (state.current) renderHeader();
  }

  // Each Bot's entry as last drawn, with what it was drawn from: an entry whose Bot has not
  // changed is kept as it is, so a fold the person opened in it (Memories, Skills, Routines)
  // and what they typed there survive a redraw of the list.
  const drawn = new Map();

  function renderBots() {
    const list = $("#bot-list");
    const items = [];
    for (const bot of state.bots.values()) {
      const key = JSON.stringify([bot, endpointLabel(bot)]);
      const kept = drawn.get(bot.id);
      if (kept && kept.key === key) {
        items.push(kept.li);
        continue;
      }
      const li = el("li", "bot-item");
      li.dataset.id = bot.id;
      li.appendChild(el("span", "bot-name", bot.name));
      const scripted = bot.scripted || isScriptedEndpoint(bot);
      li.appendChild(el("span", scripted ? "badge scripted" : "badge", endpointLabel(bot)));
      if (bot.key_present === false && bot.endpoint && bot.endpoint.api_key_env) {
        const warn = el("span", "badge failed", "$" + bot.endpoint.api_key_env + " is not set");
        warn.title = "The daemon's environment has no variable " + bot.endpoint.api_key_env;
        li.appendChild(warn);
      }
      if (bot.archived) li.appendChild(el("span", "badge", "archived"));
      if (bot.persona) {
        const p = el("p", "bot-persona hint", bot.persona);
        li.appendChild(p);
      }
      if (ctx.memories && !bot.scripted) li.appendChild(ctx.memories.section(bot));
      if (ctx.skills && !bot.scripted) li.appendChild(ctx.skills.section(bot));
      if (ctx.routines && !bot.scripted) li.appendChild(ctx.routines.section(bot));
      drawn.set(bot.id, { key, li });
      items.push(li);
    }
    for (const id of [...drawn.keys()]) if (!state.bots.has(id)) drawn.delete(id);
    list.replaceChildren(...items);
    if (state.bots.size === 0) {
      list.appendChild(el("li", "hint", "No Bots yet. Add one below."));
      $("#bots-details").open = true;
    }
    // Bot picker of the "new conversation" form.
    const sel = $("#session-bot");
    const prev = sel.value;
    sel.replaceChildren();
    for (const bot of state.bots.values()) {
      if (bot.archived) continue;
      const suffix = scriptedSuffix(bot);
      const opt = el("option", null, bot.name + (suffix ? " (" + suffix + ")" : ""));
      opt.value = String(bot.id);
      sel.appendChild(opt);
    }
    if (prev && [...sel.options].some((o) => o.value === prev)) sel.value = prev;
  }

  // The new-Bot form offers the daemon's `default` role first, and picks it while the person
  // has not chosen a kind: set it (README) and a Bot needs no endpoint of its own.
  function renderBotKind() {
    const ep = state.defaultRole;
    $("#bot-default-hint").textContent = ep
      ? "Uses the default role, now " + ep.kind + (ep.model ? " · " + ep.model : "") +
        ", and follows it when it changes."
      : "No default role is set yet: this Bot's turns fail until one is (PUT /v1/roles/default, or default in the config file).";
    if (!state.botKindChosen) $("#bot-kind").value = ep ? "default" : "openai";
    updateBotFormFields();
  }

  function updateBotFormFields() {
    const kind = $("#bot-kind").value;
    for (const f of document.querySelectorAll("#new-bot-form .field[data-for]")) {
      f.hidden = !f.dataset.for.split(" ").includes(kind);
    }
  }

  async function submitBot(ev) {
    ev.preventDefault();
    const errEl = $("#bot-error");
    showError(errEl, null);
    const kind = $("#bot-kind").value;
    const body = { name: $("#bot-name").value.trim() };
    const persona = $("#bot-persona").value.trim();
    if (persona) body.persona = persona;
    const model = $("#bot-model").value.trim();
    const endpoint = { kind, model: model || (kind === "scripted" ? "scripted" : "") };
    if (kind === "scripted") {
      endpoint.script = $("#bot-script").value.trim();
    } else {
      const base = $("#bot-base-url").value.trim();
      const keyEnv = $("#bot-api-key-env").value.trim();
      if (base) endpoint.base_url = base;
      if (keyEnv) endpoint.api_key_env = keyEnv;
    }
    // No endpoint of its own: the Bot uses the `default` role.
    if (kind !== "default") body.endpoint = endpoint;
    const btn = $("#bot-submit");
    btn.disabled = true;
    try {
      await api("POST", "/v1/bots", body);
      $("#new-bot-form").reset();
      state.botKindChosen = false;
      await loadBots();
    } catch (e) {
      showError(errEl, e);
    } finally {
      btn.disabled = false;
    }
  }

  // ---------- Sessions ----------

  function bind() {
    $("#bot-kind").addEventListener("change", () => {
      state.botKindChosen = true;
      updateBotFormFields();
    });
    updateBotFormFields();
    $("#new-bot-form").addEventListener("submit", submitBot);
    // The default role may have been set (curl, config) since the page loaded.
    $("#bots-details").addEventListener("toggle", () => {
      if ($("#bots-details").open) loadBots().catch(() => {});
    });
  }

  return { bind, loadBots, endpointLabel, scriptedSuffix };
};
