// Troupe web page: "Who does what in this job" in the job view (ADR 0086), shown while no ticket
// is picked: per Bot, the tickets it owns and reviews and the turns it ran in the job (how many
// on someone else's ticket, how many under none), an owner that ran nothing marked; under it,
// the engine the job's calls run under, why it is that one, the steps it leaves off and how
// many conversations run it. "Engine: X" sits in the title row too; either opens the Engines
// fold on that engine. The shares come with the job's ticket list that deliverables.js loads
// (`who_does_what`), which it reads again when a turn ends in the job's conversation (turn
// events carry no job); the engine is read at open (GET /v1/tasks/:id/engine) and again when
// the page changes an engine. Text is set with textContent.
"use strict";

window.troupeJobWho = function (ctx) {
  const { el, api, openEngine } = ctx;
  const enc = encodeURIComponent;
  const view = { planId: null, gen: 0, shares: null, engine: null, picked: false };
  let box = null;
  let list = null;
  let none = null;
  let engineLine = null;
  let titleBtn = null;

  function mount(host) {
    box = el("section", "job-shares");
    box.id = "job-shares";
    box.setAttribute("aria-labelledby", "job-shares-heading");
    const h = el("h4", null, "Who does what in this job");
    h.id = "job-shares-heading";
    box.appendChild(h);
    list = el("ul", "job-shares-list");
    box.appendChild(list);
    none = el("p", "hint", "No Bot owns, reviews or has worked on anything here yet.");
    box.appendChild(none);
    engineLine = el("p", "job-engine");
    box.appendChild(engineLine);
    box.hidden = true;
    host.appendChild(box);
    titleBtn = el("button", "secondary job-engine-open");
    titleBtn.type = "button";
    titleBtn.id = "job-engine";
    titleBtn.hidden = true;
    titleBtn.addEventListener("click", () => view.engine && openEngine(view.engine.engine));
    const row = document.querySelector("#job-view .job-view-buttons");
    if (row) row.prepend(titleBtn);
    document.addEventListener("troupe-engines-changed", () => {
      if (view.planId !== null) loadEngine();
    });
  }

  function open(planId) {
    view.planId = planId;
    view.gen++;
    view.shares = null;
    view.engine = null;
    view.picked = false;
    draw();
    loadEngine();
  }

  function close() {
    view.planId = null;
    view.gen++;
    view.shares = null;
    view.engine = null;
    draw();
  }

  async function loadEngine() {
    const gen = view.gen;
    let e;
    try {
      e = await api("GET", "/v1/tasks/" + enc(view.planId) + "/engine");
    } catch (err) {
      return; // unreachable: the job view says so
    }
    if (gen !== view.gen) return;
    view.engine = e;
    draw();
  }

  function tickets(listed) {
    view.shares = (listed && listed.who_does_what) || [];
    draw();
  }

  // A picked ticket's inspector takes the place of the whole job's.
  function picked(on) {
    view.picked = on;
    draw();
  }

  function listen(es, mine, schedule) {
    es.addEventListener("run_ended", () => {
      if (view.planId !== null) schedule();
    });
  }

  const plural = (n, one, many) => n + " " + (n === 1 ? one : many);

  function row(s) {
    const li = el("li", "job-share");
    li.dataset.botId = s.bot_id;
    li.appendChild(el("span", "job-share-name", s.name));
    const parts = [];
    if (s.owns) parts.push("owns " + plural(s.owns, "ticket", "tickets"));
    if (s.reviews) parts.push("reviews " + plural(s.reviews, "ticket", "tickets"));
    let ran = "ran " + plural(s.turns, "turn", "turns");
    const where = [];
    if (s.on_others) where.push(s.on_others + " on others' tickets");
    if (s.unticketed) where.push(s.unticketed + " under no ticket");
    if (where.length) ran += " (" + where.join(", ") + ")";
    parts.push(ran);
    li.appendChild(el("span", "job-share-counts hint", parts.join(" · ")));
    if (s.ran_nothing) {
      li.classList.add("ran-nothing");
      li.appendChild(el("span", "badge job-share-idle", "Owns tickets, ran nothing"));
    }
    return li;
  }

  function drawEngine() {
    const e = view.engine;
    engineLine.replaceChildren();
    titleBtn.hidden = !e || view.planId === null;
    if (!e) return;
    titleBtn.textContent = "Engine: " + e.engine;
    const b = el("button", "link job-engine-name", "Engine: " + e.engine);
    b.type = "button";
    b.addEventListener("click", () => openEngine(e.engine));
    engineLine.appendChild(b);
    const off = e.steps_off.length ? "leaves off " + e.steps_off.join(", ") : "runs every step";
    const n = plural(e.conversations, "conversation runs it", "conversations run it");
    engineLine.appendChild(el("span", "hint", " \u2014 " + e.why_text + " · " + off + " · " + n));
  }

  function draw() {
    if (!box) return;
    const shares = (view.shares || []).filter((s) => s.owns || s.reviews || s.turns);
    box.hidden = view.planId === null || view.picked || view.shares === null;
    list.replaceChildren(...shares.map(row));
    none.hidden = shares.length > 0;
    drawEngine();
  }

  return { mount, open, close, listen, tickets, picked };
};
