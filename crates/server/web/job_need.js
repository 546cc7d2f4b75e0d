// Troupe web page: "N need you" in the job view's title row (ADR 0086) — the job's checks whose
// latest run failed, its blocked progress and the requirements waiting for the person's word,
// added up by the daemon (`need_you` on GET /v1/tasks/:id/tickets, which deliverables.js
// loads). One press turns the view back to the whole job: the picked ticket is let go and the
// view scrolls to its checks and "What you asked for". Hidden when nothing needs the person.
"use strict";

window.troupeJobNeed = function (ctx) {
  const { el, unpick } = ctx;
  let btn = null;

  function mount() {
    btn = el("button", "secondary job-need");
    btn.type = "button";
    btn.id = "job-need";
    btn.hidden = true;
    btn.addEventListener("click", () => {
      unpick();
      const to = ["job-checks", "asked"].map((id) => document.getElementById(id)).find((e) => e && !e.hidden);
      if (to) to.scrollIntoView({ block: "start" });
    });
    // In the title row, before the view's own buttons.
    const row = document.querySelector("#job-view .job-view-buttons");
    if (row) row.prepend(btn);
  }

  function show(n) {
    if (!btn) return;
    btn.hidden = !(n && n.count > 0);
    btn.textContent = n && n.text ? n.text : "";
    if (n && n.count > 0) {
      const parts = [];
      if (n.failed_checks) parts.push(n.failed_checks + " failed " + (n.failed_checks === 1 ? "check" : "checks"));
      if (n.blocked) parts.push(n.blocked + " blocked");
      if (n.requirements) parts.push(n.requirements + (n.requirements === 1 ? " requirement waits" : " requirements wait") + " for your word");
      btn.title = parts.join(", ") + ". Show the whole job";
    }
  }

  return {
    mount,
    open: () => show(null),
    close: () => show(null),
    listen: () => {},
    tickets: (listed) => show(listed && listed.need_you),
  };
};
