// Troupe web page: the Jobs panel's two kinds (PLAN-U1). A job that was one question — closed,
// no tickets, at most one turn (the daemon's `one_question`) — is kept apart from the work, so
// the jobs that matter are not buried under quick answers. The job shown in the job view is
// never put there. With both kinds: on a wide screen a kinds column ("Work", "One question")
// beside the list, opening on Work; pointing at a kind shows it; Up/Down switch kinds, Right
// goes into the list, Up/Down walk it, Left goes back to the kinds. On a phone the work is
// listed and the rest fold into one row, "N one-question jobs", that opens in place. With one
// kind, just the list. A daemon that sends no `one_question` folds nothing.
"use strict";

window.troupeJobKinds = function (ctx) {
  const { el, isPhone, shownJob } = ctx;
  const KINDS = [
    ["work", "Work"],
    ["one_question", "One question"],
  ];
  let kind = "work"; // the kind shown; back to Work each time the panel opens

  function reset() {
    kind = "work";
  }

  const same = (a, b) => a !== null && a !== undefined && String(a) === String(b);

  // What was drawn last, for the kinds' handlers: the tabs are kept, not made again, so a
  // pointer resting on one does not count as pointing at it anew after each redraw.
  let last = null;

  function switchTo(k, focus) {
    if (!last) return;
    kind = k;
    draw(last.tabs, last.host, last.jobs, last.row);
    if (focus) last.tabs.querySelector('[data-kind="' + k + '"]').focus({ preventScroll: true });
  }

  function makeTabs(tabs) {
    tabs.replaceChildren();
    for (const [k] of KINDS) {
      const t = el("button", "job-kind");
      t.type = "button";
      t.dataset.kind = k;
      t.setAttribute("role", "tab");
      t.addEventListener("mouseenter", () => kind !== k && switchTo(k, false));
      t.addEventListener("click", () => switchTo(k, true));
      t.addEventListener("keydown", (e) => {
        if (e.key === "ArrowUp" || e.key === "ArrowDown") {
          e.preventDefault();
          switchTo(kind === "work" ? "one_question" : "work", true);
        } else if (e.key === "ArrowRight") {
          e.preventDefault();
          const first = last && last.host.querySelector(".job-open");
          if (first) first.focus();
        }
      });
      tabs.appendChild(t);
    }
  }

  // `host` is the panel's list (#jobs-list); `tabs` the kinds column (#job-kinds).
  function draw(tabs, host, jobs, row) {
    last = { tabs, host, jobs, row };
    const shown = shownJob ? shownJob() : null;
    const asked = jobs.filter((j) => j.one_question === true && !same(j.id, shown));
    const work = jobs.filter((j) => !asked.includes(j));
    host.replaceChildren();
    host.onkeydown = null;
    const both = asked.length > 0 && work.length > 0;
    tabs.hidden = !both || isPhone();
    host.closest(".jobs-by-kind").classList.toggle("with-kinds", !tabs.hidden);
    if (!both) {
      for (const j of jobs) host.appendChild(row(j));
      return;
    }
    if (isPhone()) {
      for (const j of work) host.appendChild(row(j));
      const li = el("li", "one-question-fold");
      const d = el("details");
      d.appendChild(el("summary", null, asked.length + (asked.length === 1 ? " one-question job" : " one-question jobs")));
      const ul = el("ul", "one-question-list");
      for (const j of asked) ul.appendChild(row(j));
      d.appendChild(ul);
      li.appendChild(d);
      host.appendChild(li);
      return;
    }
    const lists = { work, one_question: asked };
    if (tabs.children.length !== KINDS.length) makeTabs(tabs);
    for (const [k, label] of KINDS) {
      const t = tabs.querySelector('[data-kind="' + k + '"]');
      t.textContent = label + " (" + lists[k].length + ")";
      t.setAttribute("aria-selected", String(k === kind));
      t.tabIndex = k === kind ? 0 : -1;
    }
    for (const j of lists[kind]) host.appendChild(row(j));
    host.onkeydown = (e) => {
      const opens = [...host.querySelectorAll(".job-open")];
      const at = opens.indexOf(document.activeElement);
      if (at < 0) return;
      if (e.key === "ArrowDown" || e.key === "ArrowUp") {
        e.preventDefault();
        const next = opens[at + (e.key === "ArrowDown" ? 1 : -1)];
        if (next) next.focus();
      } else if (e.key === "ArrowLeft") {
        e.preventDefault();
        tabs.querySelector('[data-kind="' + kind + '"]').focus();
      }
    };
  }

  return { draw, reset };
};
