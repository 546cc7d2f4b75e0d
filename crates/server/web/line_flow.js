// Troupe web page: a line's own flow (AT-8). A person's or Bot's line gets a "Flow" button in
// its hover bar; pressed, it opens under the line what the app made of it
// (GET /v1/messages/:id/flow): how it was read, where it was filed ("Filed under: Promo › Cut")
// with "This job's flow" opening the job's view, whom it woke and why, and what each turn that
// read it did with it ("Alpha declined it: …"). A reader's raw
// answer folds under its step. Nothing here changes the line: filing is corrected in words.
// app.js calls decorate on every line it draws. All text is set with textContent.
"use strict";

window.troupeLineFlow = function (ctx) {
  const { el, api, openJob } = ctx;
  const enc = encodeURIComponent;
  const CONTROL = {
    stop: "a stop",
    go_on: "a go-on",
    both: "a stop and a go-on",
    neither: "neither a stop nor a go-on",
  };
  const HOW = {
    mention: "you named it",
    everyone: "everyone was named",
    lead: "it leads the group",
    job_lead: "it leads the job",
    judgement: "it judged the line was for it",
    ask_answer: "the line answers its question",
    pair_direct: "the other side of a direct",
    only_member: "the group's only Bot",
    direct: "your direct with it",
  };

  function flowable(m) {
    return (m.author === "user" || m.author === "bot") && (m.kind || "line") === "line";
  }

  function decorate(node, m) {
    if (!flowable(m)) return;
    const meta = node.querySelector(".meta");
    const b = el("button", "link line-flow-toggle", "Flow");
    b.type = "button";
    b.title = "How the app read this line, where it filed it, whom it woke";
    b.setAttribute("aria-expanded", String(!!node.querySelector(".line-flow")));
    b.addEventListener("click", () => toggle(node, m.id, b));
    meta.appendChild(b);
  }

  async function toggle(node, id, btn) {
    const open = node.querySelector(".line-flow");
    if (open) {
      open.remove();
      btn.setAttribute("aria-expanded", "false");
      return;
    }
    const box = el("div", "line-flow");
    box.appendChild(el("p", "hint", "Reading the line\u2019s flow\u2026"));
    node.appendChild(box);
    btn.setAttribute("aria-expanded", "true");
    try {
      const f = await api("GET", "/v1/messages/" + enc(id) + "/flow");
      box.replaceChildren(...steps(f));
    } catch (e) {
      box.replaceChildren(el("p", "error", e.message));
    }
  }

  function steps(f) {
    const ol = el("ol", "flow-steps");
    for (const r of f.readings || []) if (r.kind !== "filing") ol.appendChild(readStep(r));
    ol.appendChild(filingStep(f));
    ol.appendChild(wokeStep(f));
    for (const d of f.dispositions || []) ol.appendChild(dispositionStep(d));
    return [ol];
  }

  function step(kind, words) {
    const li = el("li", "flow-step");
    li.dataset.step = kind;
    li.appendChild(el("span", "flow-words", words));
    return li;
  }

  // The raw answer behind a step, folded.
  function raw(li, r) {
    if (!r || (!r.raw && !r.failure)) return;
    const d = el("details", "flow-raw");
    d.appendChild(el("summary", null, r.failure ? "Why the word lists read it" : "The reader\u2019s answer"));
    d.appendChild(el("pre", null, r.failure || r.raw));
    li.appendChild(d);
  }

  function readStep(r) {
    const x = r.reading || {};
    let words;
    if (r.kind === "user") {
      const parts = [CONTROL[x.control] || "read"];
      if (x.status_question) parts.push("a question about where the work stands");
      if ((x.objections || []).length) parts.push("objects to: " + x.objections.join("; "));
      words = "Read as " + parts.join(", ");
    } else {
      const said = [];
      if (x.still_going) said.push("says it is still going: \u201c" + x.still_going + "\u201d");
      if (x.claims_run) said.push("claims it ran something");
      if (x.nothing_to_do) said.push("says there is nothing to do");
      if (x.bare_status) said.push("a bare status");
      words = "Read as " + (said.length ? said.join(", ") : "a reply with nothing to flag");
    }
    if (r.failure) words += " (by the word lists)";
    const li = step("read", words);
    raw(li, r);
    return li;
  }

  function filingStep(f) {
    const filed = f.filings || [];
    const li = step("filed", f.filed_under || "Not filed under any job");
    if (f.filing_step) raw(li, (f.readings || []).find((r) => r.kind === "filing"));
    else if (filed.length) li.appendChild(el("span", "hint flow-locked", " (by the work it belongs to, a quote or a path)"));
    const jobs = new Set();
    for (const x of filed) {
      if (jobs.has(String(x.task_id))) continue;
      jobs.add(String(x.task_id));
      const b = el("button", "secondary flow-open-job", "This job\u2019s flow" + (filed.length > 1 && x.task_name ? ": " + x.task_name : ""));
      b.type = "button";
      b.dataset.planId = x.task_id;
      b.addEventListener("click", () => openJob(x.task_id));
      li.appendChild(b);
    }
    return li;
  }

  function wokeStep(f) {
    const woke = f.woke || [];
    if (!woke.length) return step("woke", "Woke nobody");
    return step("woke", "Woke " + woke.map((w) => w.bot_name + " (" + (HOW[w.how] || w.how.replace(/_/g, " ")) + ")").join(", "));
  }

  // What became of it in a turn that read it (END-3, END-6).
  const BECAME = {
    adopted: "acted on it",
    answered: "answered it",
    declined: "declined it",
    deferred: "left it for later",
  };

  function dispositionStep(d) {
    const how = d.by_prose ? "answered it in its reply" : BECAME[d.disposition] || d.disposition;
    const li = step("disposition", d.bot_name + " " + how + (d.why ? ": " + d.why : ""));
    li.dataset.disposition = d.disposition;
    return li;
  }

  return { decorate };
};
