// Troupe web page: the job view on a narrow screen (digest B §1.6, under 900 px) — a Tickets /
// Plan / Trace switch instead of one long page: Tickets holds the counter, the list (or the
// board) and the checks; Plan the plan, who does what, what the person asked for and the checks
// from their words; Trace the work log, the turns and the look back. The title row, the job's
// last change and its stop buttons stay above all three. On a wide screen the switch is hidden
// and everything shows, as before. Which part shows is `data-tab` on #job-view; style.css's
// narrow rules hide the rest. Opening a job starts on Tickets; Plan and Trace let a picked
// ticket go (its settings belong to Tickets).
"use strict";

window.troupeJobTabs = function (ctx) {
  const { el, unpick } = ctx;
  const TABS = [
    ["tickets", "Tickets"],
    ["plan", "Plan"],
    ["trace", "Trace"],
  ];
  let row = null;

  function choose(tab) {
    const box = document.getElementById("job-view");
    if (!box || !row) return;
    box.dataset.tab = tab;
    for (const b of row.children) {
      const on = b.dataset.tab === tab;
      b.setAttribute("aria-selected", String(on));
      b.tabIndex = on ? 0 : -1;
    }
    if (tab !== "tickets") unpick();
  }

  function mount() {
    row = el("div", "job-tabs");
    row.setAttribute("role", "tablist");
    row.setAttribute("aria-label", "Parts of the job");
    for (const [tab, name] of TABS) {
      const b = el("button", "secondary job-tab", name);
      b.type = "button";
      b.dataset.tab = tab;
      b.setAttribute("role", "tab");
      b.addEventListener("click", () => choose(tab));
      b.addEventListener("keydown", (e) => {
        if (e.key !== "ArrowLeft" && e.key !== "ArrowRight") return;
        e.preventDefault();
        const at = TABS.findIndex(([t]) => t === tab);
        const next = TABS[(at + (e.key === "ArrowRight" ? 1 : TABS.length - 1)) % TABS.length][0];
        choose(next);
        row.querySelector('[data-tab="' + next + '"]').focus();
      });
      row.appendChild(b);
    }
    const head = document.querySelector("#job-view > .settings-head");
    if (head) head.after(row);
  }

  return {
    mount,
    open: () => choose("tickets"),
    close: () => {},
    listen: () => {},
  };
};
