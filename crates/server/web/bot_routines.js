// Troupe web page: a Bot's routines in the Bots panel — its work on a schedule, each run a
// ticket of the routine's standing job. Each Bot's entry has "Routines": each routine with
// where it speaks, its schedule in words, its next run (or "paused", or a run a stop kept
// back), its runs and their tickets; Pause / Resume, Run now, Edit and Delete (confirmed);
// and a form to add one. Read when opened, and again while open when the global stream says
// one of the Bot's routines changed or ran; a refused change says why where it was pressed
// and keeps what was typed. Text is set with textContent.
"use strict";

window.troupeBotRoutines = function (ctx) {
  const { el, api } = ctx;
  const enc = encodeURIComponent;

  const fold = window.troupePanelFold(ctx);
  const { button, why, alertLine } = fold;

  const UNITS = { minutes: 60, hours: 3600, days: 86400 };

  // The folds drawn, each { box, botId, refresh }. A Bot can set up its own routines and
  // each run adds to the list, so an open fold follows the global stream. A fold the Bots
  // list has redrawn away is dropped at the next event.
  const folds = new Set();
  let listening = false;
  function listen() {
    if (listening) return;
    listening = true;
    const es = window.troupeHttp.globalEvents();
    const changed = (e) => {
      const ev = window.troupeHttp.parseEvent(e);
      const botId = ev && ev.payload ? ev.payload.bot_id : undefined;
      for (const f of folds) {
        if (!f.box.isConnected) folds.delete(f);
        else if (f.botId === botId) f.refresh();
      }
    };
    es.addEventListener("routine_changed", changed);
    es.addEventListener("routine_ran", changed);
    // After a reconnect, read what changed meanwhile.
    es.addEventListener("open", () => {
      for (const f of folds) if (f.box.isConnected) f.refresh();
    });
  }

  // "every 2 h", "every 30 min", "at 0 9 * * MON-FRI (Europe/Paris)".
  function scheduleWords(s) {
    if (s.kind === "every") {
      const n = s.seconds;
      if (n % 86400 === 0) return "every " + n / 86400 + " d";
      if (n % 3600 === 0) return "every " + n / 3600 + " h";
      if (n % 60 === 0) return "every " + n / 60 + " min";
      return "every " + n + " s";
    }
    if (s.kind === "cron") return "at " + s.expr + " (" + s.tz + ")";
    return JSON.stringify(s);
  }

  function when(ms) {
    return new Date(ms).toLocaleString();
  }

  // The schedule chooser: "Every N minutes|hours|days" or "Cron expr in zone". `value()` is
  // the schedule as the API takes it.
  function scheduleInput(current) {
    const box = el("span", "routine-schedule");
    const kind = el("select", "routine-schedule-kind");
    kind.setAttribute("aria-label", "Schedule kind");
    for (const [v, t] of [["every", "Every"], ["cron", "Cron"]]) {
      const o = el("option", null, t);
      o.value = v;
      kind.appendChild(o);
    }
    const n = el("input", "routine-every-n");
    n.type = "number";
    n.min = "1";
    n.value = "1";
    n.setAttribute("aria-label", "Every how many");
    const unit = el("select", "routine-every-unit");
    unit.setAttribute("aria-label", "Unit");
    for (const u of Object.keys(UNITS)) {
      const o = el("option", null, u);
      o.value = u;
      unit.appendChild(o);
    }
    unit.value = "hours";
    const expr = el("input", "routine-cron-expr");
    expr.placeholder = "0 9 * * MON-FRI";
    expr.setAttribute("aria-label", "Cron expression");
    const tz = el("input", "routine-cron-tz");
    tz.value = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
    tz.setAttribute("aria-label", "Time zone");
    const every = el("span", "routine-every");
    every.append(n, unit);
    const cron = el("span", "routine-cron");
    cron.append(expr, el("span", "hint", " in "), tz);
    if (current && current.kind === "cron") {
      kind.value = "cron";
      expr.value = current.expr;
      tz.value = current.tz;
    } else if (current && current.kind === "every") {
      const s = current.seconds;
      const u = s % 86400 === 0 ? "days" : s % 3600 === 0 ? "hours" : "minutes";
      unit.value = u;
      n.value = String(Math.max(1, Math.round(s / UNITS[u])));
    }
    const show = () => {
      every.hidden = kind.value !== "every";
      cron.hidden = kind.value !== "cron";
    };
    kind.addEventListener("change", show);
    show();
    box.append(kind, every, cron);
    return {
      node: box,
      value() {
        if (kind.value === "cron") return { kind: "cron", expr: expr.value, tz: tz.value };
        return { kind: "every", seconds: Number(n.value) * UNITS[unit.value] };
      },
    };
  }

  // The "Routines" fold of one Bot's entry in the list.
  function section(bot) {
    const box = el("details", "bot-routines");
    box.dataset.botId = bot.id;
    const summary = el("summary", null, "Routines");
    box.appendChild(summary);
    const list = el("ul", "bot-routine-list");
    const { node: err, say } = alertLine("bot-routine-error");
    const form = el("form", "bot-routine-add");
    box.append(list, err, form);

    const load = window.troupeHttp.reloader(async () => {
      let routines, sessions;
      try {
        [routines, sessions] = await Promise.all([
          api("GET", "/v1/routines?bot_id=" + enc(bot.id)),
          api("GET", "/v1/sessions?limit=200"),
        ]);
      } catch (e) {
        say(why(e));
        return;
      }
      summary.textContent = "Routines (" + routines.length + ")";
      list.replaceChildren();
      if (routines.length === 0) list.appendChild(el("li", "hint", "No routines yet."));
      for (const r of routines) list.appendChild(item(r));
      drawForm(sessions);
    });

    function item(r) {
      const li = el("li", "bot-routine" + (r.status === "paused" ? " paused" : ""));
      li.dataset.routineId = r.id;
      li.appendChild(el("span", "bot-routine-name", r.name));
      li.appendChild(el("span", "hint", " in " + r.session_title + " · " + scheduleWords(r.schedule)));
      const next =
        r.status === "paused" ? "paused" : r.next_due_label ? "next run " + r.next_due_label : "no run left on its schedule";
      li.appendChild(el("p", "bot-routine-next", next));
      if (r.owed_due_at !== null) {
        li.appendChild(el("p", "hint bot-routine-owed", "A run a stop kept back runs once the stop is lifted."));
      }
      if (r.created_by === "bot") li.appendChild(el("span", "badge", "set by " + r.bot_name));
      li.appendChild(el("p", "bot-routine-instruction", r.instruction));
      const runs = el("p", "hint bot-routine-runs", r.runs + (r.runs === 1 ? " run" : " runs") + " in “" + r.plan_name + "”");
      li.appendChild(runs);
      if (r.recent_runs.length > 0) {
        const ul = el("ul", "bot-routine-recent");
        for (const run of r.recent_runs) {
          const ticket = run.ticket_number === null ? "ticket gone" : "#" + String(run.ticket_number).padStart(2, "0") + " " + run.stage;
          ul.appendChild(el("li", "hint", when(run.due_at) + " — " + ticket));
        }
        li.appendChild(ul);
      }
      const row = el("span", "bot-routine-actions");
      const path = "/v1/routines/" + enc(r.id);
      const pause = r.status === "paused" ? "Resume" : "Pause";
      row.appendChild(
        button(pause, "bot-routine-pause", (b) =>
          change(b, "PATCH", path, { status: r.status === "paused" ? "active" : "paused" })
        )
      );
      row.appendChild(button("Run now", "bot-routine-run", (b) => change(b, "POST", path + "/run", {})));
      row.appendChild(button("Edit", "bot-routine-edit", () => edit(li, r)));
      row.appendChild(button("Delete", "bot-routine-delete", () => confirmDelete(li, r)));
      li.appendChild(row);
      return li;
    }

    function confirmDelete(li, r) {
      li.classList.add("changing");
      const ask = el("p", "bot-routine-confirm", "Delete “" + r.name + "”? No more runs; its job keeps its tickets.");
      const yes = button("Delete routine", "bot-routine-delete-confirm", (b) => change(b, "DELETE", "/v1/routines/" + enc(r.id)));
      const no = button("Cancel", "bot-routine-delete-cancel", () => load());
      li.append(ask, yes, no);
    }

    function edit(li, r) {
      li.classList.add("changing");
      const name = el("input", "bot-routine-input-name");
      name.maxLength = 80;
      name.value = r.name;
      name.setAttribute("aria-label", "Routine's name");
      const text = el("textarea", "bot-routine-input-instruction");
      text.maxLength = 4000;
      text.rows = 4;
      text.value = r.instruction;
      text.setAttribute("aria-label", "What each run does");
      const schedule = scheduleInput(r.schedule);
      const save = button("Save", "bot-routine-save", (b) =>
        change(b, "PATCH", "/v1/routines/" + enc(r.id), {
          name: name.value,
          instruction: text.value,
          schedule: schedule.value(),
        })
      );
      const cancel = button("Cancel", "bot-routine-cancel", () => load());
      li.replaceChildren(name, text, schedule.node, save, cancel);
      name.focus();
    }

    function change(btn, method, path, body) {
      return fold.change(say, load, btn, method, path, body);
    }

    // The add form, redrawn only when the places it offers change, so a reload (a refused
    // add, a live event) keeps what was typed.
    function drawForm(sessions) {
      const places = sessions.filter(
        (s) => !s.archived && (s.kind === "direct" || s.kind === "group") && s.bot_ids.includes(bot.id)
      );
      const key = JSON.stringify(places.map((s) => [s.id, s.title]));
      if (form.dataset.places === key) return;
      form.dataset.places = key;
      form.replaceChildren();
      if (places.length === 0) {
        form.appendChild(el("p", "hint", "A routine speaks in a direct with you or a group " + bot.name + " is in; open one first."));
        return;
      }
      const place = el("select", "routine-place");
      place.setAttribute("aria-label", "Where it speaks");
      for (const s of places) {
        const o = el("option", null, (s.kind === "direct" ? "Direct: " : "Group: ") + (s.title || s.id));
        o.value = String(s.id);
        place.appendChild(o);
      }
      const name = el("input", "routine-new-name");
      name.maxLength = 80;
      name.placeholder = "Name (e.g. Morning brief)";
      name.setAttribute("aria-label", "New routine's name");
      const text = el("textarea", "routine-new-instruction");
      text.maxLength = 4000;
      text.rows = 3;
      text.placeholder = "What each run does";
      text.setAttribute("aria-label", "What each run of the new routine does");
      const schedule = scheduleInput(null);
      const add = el("button", "secondary bot-routine-add-button", "Add routine");
      add.type = "submit";
      form.append(el("p", "hint", "Add a routine, speaking in:"), place, name, text, schedule.node, add);
      form.onsubmit = async (ev) => {
        ev.preventDefault();
        say(null);
        add.disabled = true;
        try {
          await api("POST", "/v1/routines", {
            bot_id: bot.id,
            session_id: Number(place.value),
            name: name.value,
            instruction: text.value,
            schedule: schedule.value(),
          });
          name.value = "";
          text.value = "";
          load();
        } catch (e) {
          say(why(e));
        } finally {
          add.disabled = false;
        }
      };
    }

    box.addEventListener("toggle", () => {
      if (box.open) load();
    });
    // A live reload waits while an edit or a delete's question is open: it would wipe them,
    // and Save / Cancel read the list again anyway.
    folds.add({
      box,
      botId: bot.id,
      refresh() {
        if (box.open && !list.querySelector(".bot-routine.changing")) load();
      },
    });
    listen();
    return box;
  }

  return { section };
};
