// Troupe web page: the one way the page calls the API. A JSON body goes as JSON; an answer that
// is not 2xx becomes an Error carrying the API's `code` (else `http_<status>`), its message and
// the status, so each view shows what the server said. The session cookie the login link set
// goes along by itself (same origin). `globalEvents()` is the page's one connection to the global
// event stream, shared by every view that listens to it: a browser keeps at most six
// connections to one server, and each EventSource holds one for good, so a stream per view
// would leave none for the API calls themselves.
"use strict";

window.troupeHttp = (function () {
  async function api(method, path, body) {
    const opts = { method, headers: {} };
    if (body !== undefined) {
      opts.headers["Content-Type"] = "application/json";
      opts.body = JSON.stringify(body);
    }
    let res;
    try {
      res = await fetch(path, opts);
    } catch (e) {
      throw apiError("network", "Cannot reach the Troupe server.", 0);
    }
    let data = null;
    const text = await res.text();
    if (text) {
      try {
        data = JSON.parse(text);
      } catch (e) {
        data = null;
      }
    }
    if (!res.ok) {
      const err = data && data.error;
      throw apiError(
        (err && err.code) || "http_" + res.status,
        (err && err.message) || "Request failed (HTTP " + res.status + ").",
        res.status
      );
    }
    return data;
  }

  function apiError(code, message, status) {
    const e = new Error(message);
    e.code = code;
    e.status = status;
    return e;
  }

  let global = null;
  function globalEvents() {
    if (!global) global = new EventSource("/v1/events");
    return global;
  }

  // An SSE event's data, or null when it is not JSON (a stream's comment, a foreign event).
  function parseEvent(e) {
    try {
      return JSON.parse(e.data);
    } catch (err) {
      return null;
    }
  }

  // One load at a time: a call while one runs asks for one more after it, so a change is never
  // lost and two reads never race. `run` draws what it read; returning early ends that pass.
  function reloader(run) {
    let loading = false;
    let again = false;
    return async function load() {
      if (loading) {
        again = true;
        return;
      }
      loading = true;
      try {
        do {
          again = false;
          await run();
        } while (again);
      } finally {
        loading = false;
      }
    };
  }

  return { api, globalEvents, parseEvent, reloader };
})();
