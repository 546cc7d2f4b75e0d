// Troupe web page: the job view's stops (HOLD-M7, HOLD-M9). Under the job's title: "Stop this
// job" and "Stop every Bot", and every stop in force over the job — its own, a Bot's work on
// it, a ticket or turn of it, its conversation's, everything's — each with what it stops, who
// made it, and Lift. Read again on every hold_upsert the job's stream carries; a refused press
// says "That did not work; try again" where it was pressed. holds.js names the stops; text is
// set with textContent. deliverables.js mounts it and hands it the job's stream.
"use strict";

window.troupeJobHolds = function (ctx) {
  const { el, api, describe, holdsChanged } = ctx;
  const enc = encodeURIComponent;
  const REFUSED = "That did not work; try again";

  const view = { planId: null, plan: null, tickets: [], holds: null, gen: 0 };
  let box = null;
  let list = null;
  let err = null;
  let stopJob = null;
  let stopAll = null;

  function button(text, cls, onClick) {
    const b = el("button", "secondary " + cls, text);
    b.type = "button";
    b.addEventListener("click", () => onClick(b));
    return b;
  }

  function mount(host) {
    box = el("section", "job-holds");
    box.id = "job-holds";
    box.setAttribute("aria-label", "Stops over this job");
    const row = el("div", "job-hold-buttons");
    stopJob = button("Stop this job", "job-stop", (b) => stop(b, { kind: "plan", task_id: view.planId }));
    stopAll = button("Stop every Bot", "job-stop-all", (b) => stop(b, { kind: "everything" }));
    row.append(stopJob, stopAll);
    box.appendChild(row);
    list = el("ul", "job-hold-list");
    list.setAttribute("aria-live", "polite");
    box.appendChild(list);
    err = el("p", "error job-hold-error");
    err.setAttribute("role", "alert");
    err.hidden = true;
    box.appendChild(err);
    box.hidden = true;
    // Under the job's title, above its tickets (HOLD-M9), whatever host the view offers.
    const head = document.querySelector("#job-view .settings-head");
    if (head) head.after(box);
    else host.appendChild(box);
  }

  function open(planId) {
    view.planId = planId;
    view.gen++;
    view.plan = null;
    view.holds = null;
    say(null);
    draw();
    load();
  }

  function close() {
    view.planId = null;
    view.gen++;
    if (box) box.hidden = true;
  }

  function tickets(listed) {
    view.tickets = ((listed && listed.tickets) || []).map((t) => String(t.id));
    draw();
  }

  const load = window.troupeHttp.reloader(async () => {
    const gen = view.gen;
    if (view.planId === null) return;
    let plan, holds;
    try {
      [plan, holds] = await Promise.all([api("GET", "/v1/tasks/" + enc(view.planId)), api("GET", "/v1/holds")]);
    } catch (e) {
      return; // unreachable: the job view says so; the next event reads again
    }
    if (gen !== view.gen) return;
    view.plan = plan;
    view.holds = Array.isArray(holds) ? holds : [];
    draw();
  });

  function listen(es, mine, schedule) {
    es.addEventListener("hold_upsert", () => {
      load();
      schedule();
    });
  }

  // Whether a stop in force covers this job, or some Bot's work on it.
  function over(h) {
    const sc = h.scope || {};
    const id = String(view.planId);
    const home = view.plan ? view.plan.home_session_id : null;
    switch (sc.kind) {
      case "everything":
        return true;
      case "plan":
      case "bot_plan":
        return String(sc.plan_id) === id;
      case "session":
        return home !== null && home !== undefined && String(sc.session_id) === String(home);
      case "ticket":
        return view.tickets.includes(String(sc.ticket_id));
      case "turn":
        return sc.plan_id !== null && sc.plan_id !== undefined && String(sc.plan_id) === id;
      default:
        return false;
    }
  }

  function draw() {
    if (!box) return;
    box.hidden = view.planId === null;
    if (view.planId === null) return;
    list.replaceChildren();
    const holds = (view.holds || []).filter((h) => h.status === "in_force" && over(h));
    const ownStop = holds.some((h) => h.scope && h.scope.kind === "plan" && !h.cancel);
    stopJob.disabled = ownStop;
    for (const h of holds) {
      const li = el("li", "job-hold");
      li.dataset.holdId = h.id;
      li.dataset.kind = h.scope ? h.scope.kind : "";
      const said = describe(h);
      li.appendChild(el("span", "job-hold-scope", "Stopped: " + said.scope));
      li.appendChild(el("span", "hint job-hold-source", said.source));
      const lift = button("Lift", "job-hold-lift", (b) => liftHold(h, b));
      lift.setAttribute("aria-label", "Lift: " + said.scope);
      li.appendChild(lift);
      list.appendChild(li);
    }
  }

  function say(text) {
    if (!err) return;
    err.hidden = !text;
    err.textContent = text || "";
  }

  async function stop(btn, scope) {
    if (view.planId === null) return;
    say(null);
    btn.disabled = true;
    const home = view.plan ? view.plan.home_session_id : null;
    const body = { scope };
    if (home !== null && home !== undefined) body.session_id = home;
    try {
      await api("POST", "/v1/holds", body);
      holdsChanged();
    } catch (e) {
      say(REFUSED);
    } finally {
      btn.disabled = false;
      load();
    }
  }

  async function liftHold(h, btn) {
    say(null);
    btn.disabled = true;
    try {
      await api("POST", "/v1/holds/" + enc(h.id) + "/lift", {});
      holdsChanged();
    } catch (e) {
      say(REFUSED);
      btn.disabled = false;
    } finally {
      load();
    }
  }

  return { mount, open, close, tickets, listen };
};
