// Troupe web page: "Who does what in this job" in the job view (ADR 0086), shown while no ticket
// is picked: per Bot, the tickets it owns and reviews and the turns it ran in the job (how many
// on someone else's ticket, how many under none), an owner that ran nothing marked. It reads the
// job's ticket list that deliverables.js loads (`who_does_what`), and asks that view to read
// again when a turn ends in the job's conversation, since turn events carry no job.
// Text is set with textContent.
"use strict";

window.troupeJobWho = function (ctx) {
  const { el } = ctx;
  const view = { planId: null, shares: null, picked: false };
  let box = null;
  let list = null;

  function mount(host) {
    box = el("section", "job-shares");
    box.id = "job-shares";
    box.setAttribute("aria-labelledby", "job-shares-heading");
    const h = el("h4", null, "Who does what in this job");
    h.id = "job-shares-heading";
    box.appendChild(h);
    list = el("ul", "job-shares-list");
    box.appendChild(list);
    box.hidden = true;
    host.appendChild(box);
  }

  function open(planId) {
    view.planId = planId;
    view.shares = null;
    view.picked = false;
    draw();
  }

  function close() {
    view.planId = null;
    view.shares = null;
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

  function draw() {
    if (!box) return;
    const shares = (view.shares || []).filter((s) => s.owns || s.reviews || s.turns);
    box.hidden = view.planId === null || view.picked || shares.length === 0;
    list.replaceChildren(...shares.map(row));
  }

  return { mount, open, close, listen, tickets, picked };
};
