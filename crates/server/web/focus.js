// Troupe web page: Focus mode (digest A §9.4) — the conversation without the work's machinery:
// no command cards, no reply times (shown while the pointer is on the reply), no Bots' model
// line under the title, no entries for Bot↔Bot directs in the list (the one open stays), and a
// working Bot reads only "Thinking", no step, call count or note. Bodies, files, cards, asks,
// buttons and dividers stay. The toggle is the target at the top of the sidebar; the choice is
// kept in this browser and applies to every conversation and every tab of it at once.
"use strict";

window.troupeFocus = function (ctx) {
  const { $ } = ctx;
  const KEY = "troupe.focusMode";

  function stored() {
    try {
      return window.localStorage.getItem(KEY) === "on";
    } catch (e) {
      return false; // storage refused (a private window): the mode lasts this page only
    }
  }

  function apply(on) {
    document.body.classList.toggle("focus-mode", on);
    const b = $("#focus-toggle");
    b.setAttribute("aria-pressed", String(on));
    b.title = on
      ? "Focus mode is on: command cards, reply times and working details are hidden. Press to show them."
      : "Focus mode: hide command cards, reply times and working details";
  }

  function bind() {
    apply(stored());
    $("#focus-toggle").addEventListener("click", () => {
      const on = !document.body.classList.contains("focus-mode");
      try {
        window.localStorage.setItem(KEY, on ? "on" : "off");
      } catch (e) {
        // kept for this page only
      }
      apply(on);
    });
    // Another tab of this browser changed it.
    window.addEventListener("storage", (e) => {
      if (e.key === KEY) apply(e.newValue === "on");
    });
  }

  return { bind };
};
