// Troupe web page: the job view's board (digest B §1.6) — "Board" beside the counter turns the
// ticket list into five columns by status (To do, In progress, In review, Done, Parked), and a
// card dragged to another column moves the ticket there (`PATCH /v1/tickets/:id {status}`, the
// person's move). Dragging uses pointer events, so a finger works as well as a mouse; a press
// without a drag opens the ticket in the list. A refused move says so under the board and the
// card stays where the ticket is. The columns follow the job's ticket list as deliverables.js
// reads it again on the job's events. Text is set with textContent.
"use strict";

window.troupeTicketBoard = function (ctx) {
  const { el, api, pick } = ctx;
  const enc = encodeURIComponent;
  const COLUMNS = window.troupeTicketStatuses;
  const view = { planId: null, tickets: [], on: false, error: "" };
  let toggle = null;
  let board = null;
  let error = null;

  function mount(host) {
    toggle = el("button", "secondary board-toggle", "Board");
    toggle.type = "button";
    toggle.setAttribute("aria-pressed", "false");
    toggle.addEventListener("click", () => show(!view.on));
    board = el("div", "ticket-board");
    board.id = "ticket-board";
    board.hidden = true;
    error = el("p", "error board-error");
    error.setAttribute("role", "alert");
    error.hidden = true;
    // Beside the counter, and in the list's place.
    const counter = document.getElementById("job-counter");
    const list = document.getElementById("ticket-list");
    if (counter) counter.after(toggle);
    if (list) list.after(board, error);
    else host.append(board, error);
  }

  function show(on) {
    view.on = on;
    toggle.setAttribute("aria-pressed", String(on));
    toggle.textContent = on ? "List" : "Board";
    document.getElementById("ticket-list").hidden = on;
    draw();
  }

  function open(planId) {
    view.planId = planId;
    view.tickets = [];
    view.error = "";
    show(false);
  }

  function close() {
    view.planId = null;
    show(false);
  }

  function tickets(listed) {
    view.tickets = (listed && listed.tickets) || [];
    draw();
  }

  function listen() {}

  function card(t) {
    const c = el("div", "board-card");
    c.dataset.ticketId = t.id;
    c.dataset.status = t.status;
    c.tabIndex = 0;
    c.setAttribute("role", "button");
    c.appendChild(el("span", "ticket-number", "#" + String(t.number).padStart(2, "0")));
    c.appendChild(el("span", "board-card-title", " " + t.title));
    if (t.label && t.stage !== "dropped") c.appendChild(el("span", "badge board-card-label", t.label));
    c.addEventListener("keydown", (e) => {
      if (e.key === "Enter" || e.key === " ") {
        e.preventDefault();
        openTicket(t);
      }
    });
    c.addEventListener("pointerdown", (e) => drag(e, c, t));
    return c;
  }

  function openTicket(t) {
    show(false);
    pick(t.id);
  }

  // Follow the pointer from a card; let go over another column to move the ticket there.
  function drag(e, c, t) {
    if (e.button !== 0) return;
    e.preventDefault();
    const start = { x: e.clientX, y: e.clientY };
    let moved = false;
    let over = null;
    const target = (x, y) => {
      const hit = document.elementFromPoint(x, y);
      return hit ? hit.closest(".board-column") : null;
    };
    const onMove = (m) => {
      if (!moved && Math.hypot(m.clientX - start.x, m.clientY - start.y) < 6) return;
      moved = true;
      c.classList.add("dragging");
      c.style.transform = "translate(" + (m.clientX - start.x) + "px," + (m.clientY - start.y) + "px)";
      const col = target(m.clientX, m.clientY);
      if (over && over !== col) over.classList.remove("drop-here");
      over = col;
      if (over) over.classList.add("drop-here");
    };
    const onUp = (u) => {
      document.removeEventListener("pointermove", onMove);
      document.removeEventListener("pointerup", onUp);
      c.classList.remove("dragging");
      c.style.transform = "";
      if (over) over.classList.remove("drop-here");
      if (!moved) {
        openTicket(t);
        return;
      }
      const col = target(u.clientX, u.clientY);
      if (col && col.dataset.status !== t.status) move(t, col.dataset.status);
    };
    document.addEventListener("pointermove", onMove);
    document.addEventListener("pointerup", onUp);
  }

  async function move(t, status) {
    view.error = "";
    try {
      await api("PATCH", "/v1/tickets/" + enc(t.id), { status });
      // Drawn where it went at once, its stage's word left off until the job's events read
      // the list again with it.
      t.status = status;
      t.label = "";
    } catch (e) {
      view.error = "#" + String(t.number).padStart(2, "0") + " stays where it is: " + (e.message || "refused");
    }
    draw();
  }

  function draw() {
    if (!board) return;
    board.hidden = !view.on || view.planId === null;
    toggle.hidden = view.planId === null;
    error.hidden = !view.on || !view.error;
    error.textContent = view.error;
    if (board.hidden) return;
    board.replaceChildren();
    for (const [status, name] of COLUMNS) {
      const col = el("section", "board-column");
      col.dataset.status = status;
      const mine = view.tickets.filter((t) => t.status === status);
      col.appendChild(el("h5", "board-column-head", name + " (" + mine.length + ")"));
      for (const t of mine) col.appendChild(card(t));
      board.appendChild(col);
    }
  }

  return { mount, open, close, listen, tickets };
};
