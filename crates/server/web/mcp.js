// Troupe web page: the MCP servers section of the Bots panel. Each server with its state
// (starting, ready, failed, disabled), tool count, restarts, the last error and stderr tail when
// it failed, its tools when expanded (read-only or effect), and Enable/Disable, Restart and
// Remove (confirmed in the row). The "Add server" form takes a command line (split on spaces)
// or a URL; the API's refusal is shown beside the form and what was typed stays.
// The list is re-read on `mcp_server_status` and `mcp_server_removed`, which arrive on the
// global event stream (GET /v1/events without session_id).
// app.js creates it with the helpers it needs.
"use strict";

window.troupeMcp = function (ctx) {
  const { $, el, api, showError } = ctx;

  const enc = encodeURIComponent;
  const STATE_TEXT = {
    starting: "starting",
    ready: "ready",
    failed: "failed",
    disabled: "disabled",
  };
  // The form's inputs by the definition field a 422 message names first ("name: …").
  const FIELD_INPUT = {
    name: "#mcp-name",
    command: "#mcp-command",
    url: "#mcp-url",
    bearer_token_env_var: "#mcp-bearer",
    tool_timeout_sec: "#mcp-timeout",
  };

  const view = {
    servers: new Map(), // name -> ServerView {definition, status}
    loaded: false,
    rows: new Map(), // name -> {key, li}: rows are rebuilt only when what they show changed
    toolsOpen: new Set(), // servers whose tool list is expanded
    stderrOpen: new Set(), // servers whose stderr tail is expanded
    confirming: new Set(), // servers whose Remove awaits its confirmation
    busy: new Set(), // servers with a request in flight
    errors: new Map(), // name -> what the last refused button press said
  };

  // ---------- reading ----------

  let timer = null;
  function schedule() {
    if (timer !== null) return;
    timer = setTimeout(() => {
      timer = null;
      reload();
    }, 50);
  }

  const reload = window.troupeHttp.reloader(async () => {
    let list;
    try {
      list = (await api("GET", "/v1/mcp-servers")) || [];
    } catch (e) {
      showError($("#mcp-load-error"), e);
      return;
    }
    showError($("#mcp-load-error"), null);
    view.servers = new Map(list.map((v) => [v.definition.name, v]));
    view.loaded = true;
    for (const set of [view.toolsOpen, view.stderrOpen, view.confirming]) {
      for (const name of [...set]) if (!view.servers.has(name)) set.delete(name);
    }
    render();
  });

  function put(v) {
    if (v && v.definition) view.servers.set(v.definition.name, v);
  }

  // ---------- the list ----------

  function firstLine(text) {
    return String(text || "").split("\n")[0].trim();
  }

  function plural(n, one, many) {
    return n + " " + (n === 1 ? one : many);
  }

  function fmtTime(ms) {
    if (typeof ms !== "number") return "";
    const d = new Date(ms);
    return isNaN(d.getTime()) ? "" : d.toLocaleString();
  }

  function transportText(def) {
    if (def.command) return [def.command, ...(def.args || [])].join(" ");
    let text = def.url || "";
    if (def.bearer_token_env_var) text += " (bearer token from $" + def.bearer_token_env_var + ")";
    return text;
  }

  function render() {
    const ul = $("#mcp-list");
    const names = [...view.servers.keys()].sort();
    for (const [name, row] of view.rows) {
      if (!view.servers.has(name)) {
        row.li.remove();
        view.rows.delete(name);
      }
    }
    let prev = null;
    for (const name of names) {
      const key = JSON.stringify([
        view.servers.get(name),
        view.confirming.has(name),
        view.busy.has(name),
        view.errors.get(name) || null,
      ]);
      let row = view.rows.get(name);
      if (!row || row.key !== key) {
        const li = buildRow(view.servers.get(name));
        if (row) row.li.replaceWith(li);
        row = { key, li };
        view.rows.set(name, row);
      }
      // Keep the rows in name order without moving the ones already in place.
      const want = prev ? prev.nextSibling : ul.firstChild;
      if (want !== row.li) ul.insertBefore(row.li, want);
      prev = row.li;
    }
    $("#mcp-empty").hidden = !view.loaded || names.length > 0;
  }

  function buildRow(v) {
    const def = v.definition;
    const st = v.status || {};
    const name = def.name;
    const li = el("li", "mcp-server");
    li.dataset.name = name;
    li.dataset.state = st.state || "";

    const head = el("div", "mcp-head");
    head.appendChild(el("span", "mcp-name", name));
    const badge = el("span", "badge mcp-state " + (st.state || ""), STATE_TEXT[st.state] || String(st.state));
    if (st.updated_at) badge.title = "since " + fmtTime(st.updated_at);
    head.appendChild(badge);
    if (st.state === "ready") head.appendChild(el("span", "mcp-count hint", plural(st.tool_count || 0, "tool", "tools")));
    if (st.restarts) {
      head.appendChild(el("span", "mcp-restarts hint", "restarted " + plural(st.restarts, "time", "times")));
    }
    li.appendChild(head);

    const how = el("p", "mcp-transport hint", transportText(def));
    how.title = def.command ? "stdio: the command and its arguments" : "streamable HTTP";
    li.appendChild(how);
    const extra = ["call timeout " + def.tool_timeout_sec + " s"];
    if (def.bots && def.bots.length) extra.push("only for " + def.bots.join(", "));
    li.appendChild(el("p", "mcp-meta hint", extra.join(" · ")));

    if (st.last_error && (st.state === "failed" || st.state === "starting")) {
      const err = el("p", "error mcp-last-error", (st.state === "failed" ? "" : "Last error: ") + st.last_error);
      li.appendChild(err);
    }
    if (st.state === "failed" && st.stderr_tail) {
      const d = el("details", "mcp-stderr");
      d.open = view.stderrOpen.has(name);
      d.appendChild(el("summary", null, "stderr (last lines)"));
      d.appendChild(el("pre", "mcp-stderr-text", st.stderr_tail));
      d.addEventListener("toggle", () => {
        if (d.open) view.stderrOpen.add(name);
        else view.stderrOpen.delete(name);
      });
      li.appendChild(d);
    }

    const tools = st.tools || [];
    const leftOut = st.left_out || [];
    if (tools.length || leftOut.length) {
      const d = el("details", "mcp-tools");
      d.open = view.toolsOpen.has(name);
      d.appendChild(el("summary", null, "Tools (" + tools.length + ")"));
      const list = el("ul", "mcp-tool-list");
      for (const t of tools) {
        const item = el("li", "mcp-tool");
        item.dataset.tool = t.name;
        const nm = el("span", "mcp-tool-name", t.name);
        nm.title = "the server calls it " + t.tool;
        item.appendChild(nm);
        item.appendChild(
          t.read_only
            ? el("span", "badge mcp-kind read-only", "read-only")
            : el("span", "badge mcp-kind effect", "effect")
        );
        const desc = firstLine(t.description);
        if (desc) {
          const p = el("span", "mcp-tool-desc hint", desc);
          p.title = t.description;
          item.appendChild(p);
        }
        list.appendChild(item);
      }
      d.appendChild(list);
      if (leftOut.length) {
        d.appendChild(el("p", "hint", "Not offered to the Bots:"));
        const lo = el("ul", "mcp-left-out");
        for (const why of leftOut) lo.appendChild(el("li", "hint", why));
        d.appendChild(lo);
      }
      d.addEventListener("toggle", () => {
        if (d.open) view.toolsOpen.add(name);
        else view.toolsOpen.delete(name);
      });
      li.appendChild(d);
    }
    if (st.offers_resources || st.offers_prompts) {
      const what = [st.offers_resources && "resources", st.offers_prompts && "prompts"].filter(Boolean);
      li.appendChild(el("p", "mcp-offers hint", "Also offers " + what.join(" and ") + " (Troupe uses its tools only)."));
    }

    const err = el("p", "error mcp-row-error");
    err.setAttribute("role", "alert");
    showError(err, view.errors.get(name) || null);
    const busy = view.busy.has(name);
    const row = el("div", "mcp-buttons");
    if (view.confirming.has(name)) {
      row.appendChild(el("span", "mcp-confirm-text", "Remove " + name + "? Its process ends and its tools leave the next turn."));
      row.appendChild(button("Remove " + name, "danger mcp-remove-yes", busy, () => remove(name)));
      row.appendChild(
        button("Keep", "secondary mcp-remove-no", busy, () => {
          view.confirming.delete(name);
          render();
        })
      );
    } else {
      const enabled = def.enabled !== false;
      row.appendChild(
        button(enabled ? "Disable" : "Enable", "secondary mcp-toggle", busy, () => setEnabled(name, !enabled))
      );
      const restart = button("Restart", "secondary mcp-restart", busy || !enabled, () => restartServer(name));
      if (!enabled) restart.title = "Enable it first";
      row.appendChild(restart);
      row.appendChild(
        button("Remove", "secondary mcp-remove", busy, () => {
          view.errors.delete(name);
          view.confirming.add(name);
          render();
        })
      );
    }
    li.appendChild(row);
    li.appendChild(err);
    return li;
  }

  function button(text, cls, disabled, onClick) {
    const b = el("button", cls, text);
    b.type = "button";
    b.disabled = !!disabled;
    b.addEventListener("click", onClick);
    return b;
  }

  // ---------- the row's buttons ----------

  async function act(name, call) {
    view.busy.add(name);
    view.errors.delete(name);
    render();
    try {
      await call();
    } catch (e) {
      view.errors.set(name, e.message);
    } finally {
      view.busy.delete(name);
      render();
      schedule();
    }
  }

  function setEnabled(name, enabled) {
    return act(name, async () => {
      put(await api("PATCH", "/v1/mcp-servers/" + enc(name), { enabled }));
    });
  }

  function restartServer(name) {
    return act(name, async () => {
      put(await api("POST", "/v1/mcp-servers/" + enc(name) + "/restart", {}));
    });
  }

  function remove(name) {
    return act(name, async () => {
      try {
        await api("DELETE", "/v1/mcp-servers/" + enc(name));
      } catch (e) {
        if (e.status !== 404) throw e; // already gone: that is what was asked
      }
      view.servers.delete(name);
      view.confirming.delete(name);
      view.toolsOpen.delete(name);
      view.stderrOpen.delete(name);
    });
  }

  // ---------- the Add server form ----------

  function updateFormFields() {
    const kind = $("#mcp-kind").value;
    for (const f of document.querySelectorAll("#mcp-form .field[data-for]")) {
      f.hidden = f.dataset.for !== kind;
    }
  }

  function markField(field) {
    for (const [f, sel] of Object.entries(FIELD_INPUT)) {
      const input = $(sel);
      if (f === field) input.setAttribute("aria-invalid", "true");
      else input.removeAttribute("aria-invalid");
    }
  }

  // The field a refusal names: "name: …" from a 422, or the name for an existing server.
  function fieldOf(e) {
    if (e.code === "exists") return "name";
    const m = /^([a-z_]+):/.exec(e.message || "");
    return m && FIELD_INPUT[m[1]] ? m[1] : null;
  }

  async function submit(ev) {
    ev.preventDefault();
    const errEl = $("#mcp-error");
    showError(errEl, null);
    markField(null);
    const body = { name: $("#mcp-name").value.trim() };
    if ($("#mcp-kind").value === "url") {
      body.url = $("#mcp-url").value.trim();
      const bearer = $("#mcp-bearer").value.trim();
      if (bearer) body.bearer_token_env_var = bearer;
    } else {
      // A command line, split on spaces: the program, then its arguments.
      const parts = $("#mcp-command").value.trim().split(/\s+/).filter(Boolean);
      body.command = parts.length ? parts[0] : "";
      if (parts.length > 1) body.args = parts.slice(1);
    }
    const timeout = $("#mcp-timeout").value.trim();
    if (timeout) {
      if (!/^\d+$/.test(timeout)) {
        showError(errEl, "tool_timeout_sec: '" + timeout + "' is not a whole number of seconds");
        markField("tool_timeout_sec");
        return;
      }
      body.tool_timeout_sec = Number(timeout);
    }
    const btn = $("#mcp-submit");
    btn.disabled = true;
    try {
      const v = await api("POST", "/v1/mcp-servers", body);
      put(v);
      view.loaded = true;
      // Added: the form empties for the next one (only now; a refusal keeps what was typed).
      for (const sel of Object.values(FIELD_INPUT)) $(sel).value = "";
      render();
      schedule();
    } catch (e) {
      showError(errEl, e);
      markField(fieldOf(e));
    } finally {
      btn.disabled = false;
    }
  }

  // ---------- events ----------

  // The global stream (shared, http.js): the servers' status is no conversation's.
  let global = null;
  function openGlobal() {
    if (global) return;
    global = window.troupeHttp.globalEvents();
    global.addEventListener("mcp_server_status", schedule);
    global.addEventListener("mcp_server_removed", schedule);
    // After a reconnect, read what changed meanwhile.
    global.addEventListener("open", schedule);
  }

  function bind() {
    $("#mcp-kind").addEventListener("change", updateFormFields);
    updateFormFields();
    $("#mcp-form").addEventListener("submit", submit);
  }

  function start() {
    openGlobal();
    reload();
  }

  return { bind, start, reload: schedule };
};
