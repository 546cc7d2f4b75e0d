// Troupe web page: the person's notifications (GET /v1/notifications): a button in the sidebar's
// head with the open count, and the list it opens — each notification's title and words, Open
// (its conversation) and Dismiss. They open and close by themselves as the work they are about
// stops and goes on; the global event stream's `notification_changed` keeps the count live.
// All text is set with textContent.
"use strict";

window.troupeNotifications = function (ctx) {
  const { $, el, api, selectSession } = ctx;

  // A drawn bell keeps the sidebar's head short (no emoji font needed); the name is the
  // button's label for readers.
  const button = el("button", "secondary notifications-open");
  button.type = "button";
  button.appendChild(bell());
  button.setAttribute("aria-label", "Notifications");
  button.id = "notifications-open";
  button.dataset.testid = "notifications-open";
  button.setAttribute("aria-expanded", "false");
  button.setAttribute("aria-controls", "notifications-panel");
  const count = el("span", "badge notifications-count", "0");
  count.dataset.testid = "notifications-count";
  count.hidden = true;
  button.appendChild(count);
  $(".sidebar-head .head-buttons").prepend(button);

  function bell() {
    const ns = "http://www.w3.org/2000/svg";
    const svg = document.createElementNS(ns, "svg");
    svg.setAttribute("viewBox", "0 0 16 16");
    svg.setAttribute("width", "14");
    svg.setAttribute("height", "14");
    svg.setAttribute("aria-hidden", "true");
    const path = document.createElementNS(ns, "path");
    path.setAttribute("d", "M8 1.5a4 4 0 0 0-4 4v3L2.5 11v1h11v-1L12 8.5v-3a4 4 0 0 0-4-4zM6.5 13a1.5 1.5 0 0 0 3 0z");
    path.setAttribute("fill", "currentColor");
    svg.appendChild(path);
    return svg;
  }

  const panel = el("section", "notifications-panel");
  panel.id = "notifications-panel";
  panel.dataset.testid = "notifications-panel";
  panel.setAttribute("aria-label", "Notifications");
  panel.hidden = true;
  $(".sidebar-head").after(panel);

  button.addEventListener("click", () => {
    panel.hidden = !panel.hidden;
    button.setAttribute("aria-expanded", String(!panel.hidden));
    if (!panel.hidden) load();
  });

  function when(ms) {
    return new Date(ms).toLocaleString();
  }

  function item(n) {
    const li = el("li", "notification");
    li.dataset.id = String(n.id);
    li.dataset.kind = n.kind;
    li.appendChild(el("strong", "notification-title", n.title));
    li.appendChild(el("p", "notification-body", n.body));
    const row = el("div", "row");
    row.appendChild(el("span", "hint", when(n.created_at)));
    if (n.session_id != null) {
      const open = el("button", "secondary", "Open");
      open.type = "button";
      open.addEventListener("click", () => {
        panel.hidden = true;
        button.setAttribute("aria-expanded", "false");
        selectSession(n.session_id);
      });
      row.appendChild(open);
    }
    const dismiss = el("button", "secondary notification-dismiss", "Dismiss");
    dismiss.type = "button";
    dismiss.addEventListener("click", async () => {
      dismiss.disabled = true;
      try {
        await api("POST", "/v1/notifications/" + n.id + "/dismiss", {});
      } catch (e) {
        // It closed by itself meanwhile (409 not_open): the reload shows that.
      }
      load();
    });
    row.appendChild(dismiss);
    li.appendChild(row);
    return li;
  }

  function render(list) {
    const open = list.open_count || 0;
    count.textContent = String(open);
    count.hidden = open === 0;
    button.title = open === 0 ? "Notifications: none" : "Notifications: " + open + " open";
    if (panel.hidden) return;
    const ul = el("ul", "notifications");
    for (const n of list.notifications) ul.appendChild(item(n));
    panel.replaceChildren(
      el("h2", null, "Notifications"),
      list.notifications.length ? ul : el("p", "hint", "Nothing needs you now.")
    );
  }

  // One load at a time; a change during one loads once more after it.
  const load = window.troupeHttp.reloader(async () => {
    try {
      render(await api("GET", "/v1/notifications?limit=50"));
    } catch (e) {
      if (!panel.hidden) panel.replaceChildren(el("p", "error", e.message));
    }
  });

  window.troupeHttp.globalEvents().addEventListener("notification_changed", () => load());
  load();
  return { load };
};
