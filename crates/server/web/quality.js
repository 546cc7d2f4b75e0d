// Troupe web page: the Quality page (QE5, QE6: "Quality, last 7 days" per Bot × model × job
// kind, and the quality events behind it, `orchestration` ones only when asked for) and the
// Lessons page (B §10.1: each timeout lesson with its state, switched between warn, block and
// off). Each opens over the conversation from the sidebar (or /#quality, /#lessons); picking a
// conversation closes it. While one is open it follows the global event stream for new events
// and lessons. All text is set with textContent.
"use strict";

window.troupeQuality = function (ctx) {
  const { $, el, state, api } = ctx;
  const enc = encodeURIComponent;
  const TYPE = {
    execution: "Execution",
    unclear: "Unclear",
    model: "Model",
    pipeline: "Pipeline",
    review_miss: "Review miss",
    orchestration: "Orchestration",
  };
  const LESSON = { warn: "Warn first", block: "Block", off: "Off" };

  let page = null;
  let showing = null; // "quality" | "lessons" | null
  let es = null;
  let gen = 0;
  let maintainer = false;

  function build() {
    const side = el("section", "pages-panel");
    side.id = "pages-panel";
    side.setAttribute("aria-labelledby", "pages-heading");
    const h = el("h2", null, "Quality");
    h.id = "pages-heading";
    side.appendChild(h);
    const row = el("div", "row");
    for (const [which, text] of [["quality", "Quality, last 7 days"], ["lessons", "Lessons"]]) {
      const b = el("button", "secondary page-open", text);
      b.type = "button";
      b.dataset.page = which;
      b.addEventListener("click", () => show(which));
      row.appendChild(b);
    }
    side.appendChild(row);
    $("#sidebar-body").appendChild(side);

    page = el("section", "page");
    page.id = "quality-page";
    page.dataset.testid = "quality-page";
    page.hidden = true;
    $("#main").prepend(page);
  }

  function show(which) {
    showing = which;
    gen++;
    $("#main").classList.add("page-open");
    page.hidden = false;
    page.dataset.page = which;
    if (location.hash !== "#" + which) history.replaceState(null, "", "#" + which);
    document.title = (which === "quality" ? "Quality" : "Lessons") + " \u00b7 Troupe";
    follow();
    load();
  }

  // Back to the conversation (app.js calls it when one is picked).
  function enter() {
    if (!showing) return;
    showing = null;
    gen++;
    $("#main").classList.remove("page-open");
    page.hidden = true;
    page.replaceChildren();
  }

  // The shared global stream (http.js); while no page is shown its events change nothing.
  function follow() {
    if (es) return;
    es = window.troupeHttp.globalEvents();
    for (const kind of ["quality_event", "lesson_learned", "lesson_changed", "reflection_answered"]) {
      es.addEventListener(kind, () => showing && load());
    }
  }

  function head(title, hint) {
    const top = el("div", "settings-head");
    top.appendChild(el("h2", null, title));
    const close = el("button", "secondary page-close", "Close");
    close.type = "button";
    close.addEventListener("click", () => {
      enter();
      history.replaceState(null, "", state.current ? "#session=" + state.current.id : "#");
    });
    top.appendChild(close);
    const frag = document.createDocumentFragment();
    frag.appendChild(top);
    if (hint) frag.appendChild(el("p", "hint", hint));
    return frag;
  }

  const load = window.troupeHttp.reloader(async () => {
    const g = gen;
    let out;
    try {
      out = showing === "quality" ? await quality() : showing === "lessons" ? await lessons() : null;
    } catch (e) {
      out = el("p", "error", e.message);
    }
    if (g !== gen || !out) return;
    page.replaceChildren(out);
  });

  function botName(id, fallback) {
    if (id === null || id === undefined) return fallback || "\u2014";
    const b = state.bots.get(id);
    return b ? b.name : fallback || "Bot " + id;
  }

  function table(cls, heads) {
    const t = el("table", cls);
    const tr = el("tr");
    for (const h of heads) tr.appendChild(el("th", null, h));
    const thead = el("thead");
    thead.appendChild(tr);
    t.appendChild(thead);
    const tbody = el("tbody");
    t.appendChild(tbody);
    return [t, tbody];
  }

  function cells(tr, values) {
    for (const v of values) tr.appendChild(el("td", null, v === null || v === undefined ? "\u2014" : String(v)));
  }

  function usd(v) {
    return v === null || v === undefined ? "not priced" : "$" + Number(v).toFixed(2);
  }

  async function quality() {
    const [report, events] = await Promise.all([
      api("GET", "/v1/quality/report?days=7"),
      api("GET", "/v1/quality/events?days=7&limit=200" + (maintainer ? "&maintainer=true" : "")),
    ]);
    const box = el("div", "page-body");
    box.appendChild(head("Quality, last 7 days", "What went wrong and what it cost, per Bot, model and kind of job. Nobody asks a model whose fault it was."));
    const [t, body] = table("quality-report", ["Bot", "Model", "Job kind", "Hand-overs", "Approvals", "Turn-backs", "Complaints", "Failed replies", "Review misses", "Spend per approval"]);
    for (const r of report.rows || []) {
      const tr = el("tr", "quality-row");
      cells(tr, [
        botName(r.bot_id, r.bot_name),
        r.model || "unknown",
        r.plan_kind || "\u2014",
        r.hand_overs,
        r.approvals,
        (r.rejects || 0) + (r.send_backs || 0),
        r.complaints,
        r.failed_replies,
        r.review_misses,
        r.spend_per_approval_usd !== null && r.spend_per_approval_usd !== undefined ? usd(r.spend_per_approval_usd) : r.spend_usd !== null && r.spend_usd !== undefined ? "no approvals" : "not priced",
      ]);
      body.appendChild(tr);
    }
    box.appendChild(t);
    if (!(report.rows || []).length) box.appendChild(el("p", "hint", "Nothing in the last 7 days."));

    const h = el("h3", null, "Events");
    box.appendChild(h);
    const lab = el("label", "quality-maintainer");
    const cb = el("input");
    cb.type = "checkbox";
    cb.checked = maintainer;
    cb.addEventListener("change", () => {
      maintainer = cb.checked;
      load();
    });
    lab.appendChild(cb);
    lab.appendChild(document.createTextNode(" Also the app's own failures (stalls, crashes, broken stops)"));
    box.appendChild(lab);
    const ul = el("ul", "quality-events");
    for (const e of events || []) {
      const li = el("li", "quality-event");
      li.dataset.id = e.id;
      li.dataset.type = e.type;
      li.appendChild(el("span", "badge quality-type", TYPE[e.type] || e.type));
      li.appendChild(el("span", "quality-cause", String(e.cause).replace(/_/g, " ")));
      const where = [botName(e.bot_id, e.bot_id === null || e.bot_id === undefined ? "the app" : null), e.model || null, e.task_id !== null && e.task_id !== undefined ? "job " + e.task_id : null, e.ticket_id !== null && e.ticket_id !== undefined ? "ticket " + e.ticket_id : null].filter(Boolean);
      li.appendChild(el("span", "quality-where hint", where.join(" \u00b7 ")));
      li.appendChild(el("time", "quality-at hint", new Date(e.at).toLocaleString()));
      ul.appendChild(li);
    }
    box.appendChild(ul);
    if (!(events || []).length) box.appendChild(el("p", "hint", "No events in the last 7 days."));
    return box;
  }

  async function lessons() {
    const list = await api("GET", "/v1/lessons");
    const box = el("div", "page-body");
    box.appendChild(head("Lessons", "Searches the timeout killed. Warn first: the first such search in a turn is not run and the Bot is told how to narrow it. Block: that kind of search no longer runs. Off: it runs as before."));
    const [t, body] = table("lessons", ["Search", "Folder", "Timeouts", "Last one", "State"]);
    for (const l of list || []) {
      const tr = el("tr", "lesson-row");
      tr.dataset.id = l.id;
      tr.dataset.state = l.state;
      cells(tr, [l.program, l.place, l.timeouts, new Date(l.last_timeout_at).toLocaleString()]);
      tr.lastChild.title = l.command;
      const td = el("td");
      const sel = el("select", "lesson-state");
      sel.setAttribute("aria-label", "State of the lesson on " + l.program + " in " + l.place);
      for (const s of ["warn", "block", "off"]) {
        const o = el("option", null, LESSON[s]);
        o.value = s;
        sel.appendChild(o);
      }
      sel.value = l.state;
      const err = el("p", "error lesson-error");
      err.setAttribute("role", "alert");
      err.hidden = true;
      sel.addEventListener("change", async () => {
        sel.disabled = true;
        err.hidden = true;
        try {
          const saved = await api("PATCH", "/v1/lessons/" + enc(l.id), { state: sel.value });
          tr.dataset.state = saved.state;
          sel.value = saved.state;
        } catch (e) {
          sel.value = l.state; // refused: it stays as it was
          err.textContent = e.message;
          err.hidden = false;
        } finally {
          sel.disabled = false;
        }
      });
      td.appendChild(sel);
      td.appendChild(err);
      tr.appendChild(td);
      body.appendChild(tr);
    }
    box.appendChild(t);
    if (!(list || []).length) box.appendChild(el("p", "hint", "No lessons: no search has timed out."));
    await checklist(box);
    return box;
  }

  // Checklist items adopted from a reflection's proposal (B §10.2): read in their Bot's
  // situation while on; Turn off retires one, Turn on restores it.
  async function checklist(box) {
    const items = await api("GET", "/v1/checklist-items");
    box.appendChild(head("Checklist items", "Lessons a Bot proposed after an overturned approval or a part that kept failing, and you adopted. Each is read in that Bot's situation while it is on."));
    const [t, body] = table("checklist", ["Bot", "Read", "Item", ""]);
    for (const i of items || []) {
      const tr = el("tr", "checklist-row");
      tr.dataset.id = i.id;
      tr.dataset.enabled = String(i.enabled);
      const bot = state.bots && state.bots.get(i.bot_id);
      cells(tr, [bot ? bot.name : "Bot " + i.bot_id, i.when.replace(/_/g, " "), i.text]);
      const td = el("td");
      const b = el("button", "secondary checklist-toggle", i.enabled ? "Turn off" : "Turn on");
      b.type = "button";
      const err = el("p", "error checklist-error");
      err.setAttribute("role", "alert");
      err.hidden = true;
      b.addEventListener("click", async () => {
        b.disabled = true;
        err.hidden = true;
        try {
          const saved = await api("PATCH", "/v1/checklist-items/" + enc(i.id), { enabled: !i.enabled });
          i.enabled = saved.enabled;
          tr.dataset.enabled = String(saved.enabled);
          b.textContent = saved.enabled ? "Turn off" : "Turn on";
        } catch (e) {
          err.textContent = e.message;
          err.hidden = false;
        } finally {
          b.disabled = false;
        }
      });
      td.append(b, err);
      tr.appendChild(td);
      body.appendChild(tr);
    }
    box.appendChild(t);
    if (!(items || []).length) box.appendChild(el("p", "hint", "No checklist items adopted yet."));
  }

  function bind() {
    build();
    const which = location.hash.slice(1);
    if (which === "quality" || which === "lessons") show(which);
  }

  return { bind, enter, show };
};
