// Troupe web page: the capability-ceiling card (B §7.3) — an app line whose control is
// `{kind: "ceiling", offer: […]}` asks the user how a part that keeps failing goes on. Its
// buttons are the offer, in the order given (Relax only when the card offers it: never when
// the user sent it back 3 times), answered by POST /v1/messages/:id/control {action}. Once
// answered the card says what was chosen (the control's `answer`); a card the ticket closed
// another way (its `closed`, or a press answered 409 `card_closed`) has no buttons and says
// why. The replacement card of checks from the user's words (C §16 CW-18,
// `{kind: "replacement"}`) is drawn the same way with its own buttons; its "Change" puts the
// answer's `prefill` in the composer; so is a reflection's proposal (`{kind: "reflection"}`,
// B §10.2) with Adopt and No. app.js calls decorate on every line it draws.
"use strict";

window.troupeCeiling = function (ctx) {
  const { el, api, upsertMessage, composer } = ctx;
  const enc = encodeURIComponent;
  const LABELS = {
    ceiling: {
      another_way: "Another way",
      change_plan: "Change the plan",
      relax: "Relax this requirement",
      take_as_is: "Take it as it is",
      carry_on: "Ignore, carry on",
    },
    replacement: {
      use_new: "Use the new one",
      change: "Change",
      keep_old: "Keep the old one",
    },
    // A reflection's proposal (B §10.2): answered `adopted` or `declined`.
    reflection: { adopt: "Adopt", no: "No", adopted: "Adopt", declined: "No" },
  };
  const SECONDARY = new Set(["carry_on", "keep_old", "no"]);
  const SHUT = { withdrawn: "Withdrawn: the new number no longer stands.", reposted: "Asked again below." };
  // Why a card took no press, by line id, kept through redraws.
  const closed = new Map();
  // A card's control is set after its line is written, so the line's own event (and a
  // replay of it) carries none: the newest control read for a line is kept here, and app
  // lines seen without one are read again when a job reaches its ceiling.
  const controls = new Map();
  const bare = [];

  function decorate(node, m) {
    const old = node.querySelector(":scope > .ceiling-card");
    if (old) old.remove();
    if (m.control) controls.set(m.id, m.control);
    else if (m.kind === "system" && !bare.includes(m.id)) {
      bare.push(m.id);
      if (bare.length > 20) bare.shift();
    }
    const c = m.control || controls.get(m.id);
    if (!c || !LABELS[c.kind]) return;
    const ACTION = LABELS[c.kind];
    node.classList.add("ceiling");
    node.dataset.card = c.kind;
    const card = el("div", "ceiling-card");
    card.dataset.testid = "ceiling-card";
    // Settled, the card's control keeps `answer` (or why it `closed`) and offers nothing.
    const answer = c.answer || (m.control_acted && m.control_acted.action);
    const shut = SHUT[c.closed] || c.closed || closed.get(m.id);
    if (answer) {
      card.dataset.state = "answered";
      card.appendChild(el("p", "ceiling-chosen", "You chose: " + (ACTION[answer] || answer)));
    } else if (shut) {
      card.dataset.state = "closed";
      card.appendChild(el("p", "ceiling-closed hint", shut));
    } else {
      card.dataset.state = "open";
      const bar = el("div", "ceiling-actions");
      for (const a of c.offer || []) {
        const b = el("button", SECONDARY.has(a) ? "secondary ceiling-action" : "ceiling-action", ACTION[a] || a);
        b.type = "button";
        b.dataset.action = a;
        b.addEventListener("click", () => press(node, m, a, card));
        bar.appendChild(b);
      }
      card.appendChild(bar);
    }
    const err = el("p", "error ceiling-error");
    err.setAttribute("role", "alert");
    err.hidden = true;
    card.appendChild(err);
    node.appendChild(card);
  }

  async function press(node, m, action, card) {
    const buttons = card.querySelectorAll("button");
    buttons.forEach((b) => (b.disabled = true));
    const err = card.querySelector(".ceiling-error");
    err.hidden = true;
    try {
      const out = await api("POST", "/v1/messages/" + enc(m.id) + "/control", { action });
      const prefill = out && out.replacement && out.replacement.prefill;
      if (prefill && composer) {
        const box = composer();
        if (box && !box.disabled) {
          box.value = prefill;
          box.focus();
        }
      }
    } catch (e) {
      if (e.code === "card_closed") {
        closed.set(m.id, e.message || "This card is closed.");
      } else {
        buttons.forEach((b) => (b.disabled = false));
        err.textContent = e.message;
        err.hidden = false;
        return;
      }
    }
    // The line as it stands now: answered (or closed), its buttons gone.
    try {
      upsertMessage(await api("GET", "/v1/messages/" + enc(m.id)));
    } catch (e) {
      decorate(node, m);
    }
  }

  function listen(es, live) {
    es.addEventListener("reflection_proposed", (e) => {
      if (!live()) return;
      try {
        const id = JSON.parse(e.data).payload.message_id;
        api("GET", "/v1/messages/" + enc(id))
          .then((m) => m.control && upsertMessage(m))
          .catch(() => {});
      } catch (err) {
        /* not an event of this shape */
      }
    });
    es.addEventListener("ceiling_reached", () => {
      if (!live()) return;
      for (const id of bare.splice(0)) {
        api("GET", "/v1/messages/" + enc(id))
          .then((m) => m.control && upsertMessage(m))
          .catch(() => {});
      }
    });
  }

  return { decorate, listen };
};
