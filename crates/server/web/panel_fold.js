// Troupe web page: what the Bots panel's folds (a Bot's Memories, its Skills) share — a
// secondary button, the line where a refused change says why, and a change that reloads the
// fold once made. Text is set with textContent.
"use strict";

window.troupePanelFold = function ({ el, api }) {
  function button(text, cls, onClick) {
    const b = el("button", "secondary " + cls, text);
    b.type = "button";
    b.addEventListener("click", () => onClick(b));
    return b;
  }

  function why(e) {
    return (e && e.message) || "That did not work; try again";
  }

  // An alert line: say(text) shows it, say(null) hides it.
  function alertLine(cls) {
    const node = el("p", "error " + cls);
    node.setAttribute("role", "alert");
    node.hidden = true;
    return {
      node,
      say(text) {
        node.hidden = !text;
        node.textContent = text || "";
      },
    };
  }

  // A change pressed on `btn`: refused, the line says why and the button works again; made,
  // `after` runs (the fold reloads).
  async function change(say, after, btn, method, path, body) {
    say(null);
    btn.disabled = true;
    try {
      await api(method, path, body);
    } catch (e) {
      say(why(e));
      btn.disabled = false;
      return;
    }
    after();
  }

  return { button, why, alertLine, change };
};
