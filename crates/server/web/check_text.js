// Troupe web page: the words a job's check is shown with (the deliverables view's check list
// and each hand-over's checks): what a file check looks for, a command, and what a check from
// the person's words asks for, which parts a seams check joins ("Running time: 100\u2013110 s"). `ticketNumber` names the
// sample's ticket for a check held to the sample.
"use strict";

window.troupeCheckText = (function () {
  const DIMENSION = { running_time: "Running time", resolution: "Resolution", aspect: "Aspect", frame_rate: "Frame rate" };

  function asked(c) {
    const v = c.value || {};
    const num = (x) => String(Math.round(x * 100) / 100);
    const unit = v.kind === "seconds" ? " s" : v.kind === "frames_per_second" ? " fps" : "";
    switch (v.kind) {
      case "orientation":
        return v.orientation;
      case "ratio":
        return num(v.width) + ":" + num(v.height);
      case "short_side":
        return (c.bound === "at_least" ? "at least " : c.bound === "at_most" ? "at most " : "") + v.pixels;
      default:
        if (c.min !== null && c.min !== undefined && c.max !== null && c.max !== undefined) return num(c.min) + "\u2013" + num(c.max) + unit;
        if (c.min !== null && c.min !== undefined) return "at least " + num(c.min) + unit;
        if (c.max !== null && c.max !== undefined) return "at most " + num(c.max) + unit;
        return "";
    }
  }

  function checkText(c, ticketNumber) {
    const q = (x) => "\u201c" + x + "\u201d";
    switch (c.kind) {
      case "file_exists":
        return (c.negate ? "No file " : "File ") + (c.path || "");
      case "file_contains":
        return (c.path || "") + (c.negate ? " does not contain " : " contains ") + q(c.pattern || "");
      case "file_matches_regex":
        return (c.path || "") + (c.negate ? " does not match " : " matches ") + "/" + (c.pattern || "") + "/";
      case "command":
        return "Command: " + (c.command || "");
      case "words":
        return (DIMENSION[c.dimension] || "From your words") + ": " + asked(c);
      case "seams":
        return "Seams: " + (c.command ? "the parts " + c.command + " lists" : c.path || "");
      case "standard":
        return "Holds to the standard of sample " + (c.sample_ticket_id !== null && c.sample_ticket_id !== undefined ? ticketNumber(c.sample_ticket_id) : "");
      default:
        return String(c.kind);
    }
  }

  return checkText;
})();
