// harness view: live updates over server-sent events. Small and hand-written; every HTML it inserts was rendered
// (and escaped) by the server. No inline script anywhere: the page's CSP allows only this file.
"use strict";

function openFolds(root) {
  const open = new Set();
  root.querySelectorAll("details[open][data-fold]").forEach((d) => open.add(d.dataset.fold));
  if (root.matches && root.matches("details[open][data-fold]")) open.add(root.dataset.fold);
  return open;
}

function reopen(root, open) {
  const all = [root, ...root.querySelectorAll("details[data-fold]")];
  all.forEach((d) => { if (d.dataset && d.dataset.fold && open.has(d.dataset.fold)) d.open = true; });
}

function fromHTML(html) {
  const t = document.createElement("template");
  t.innerHTML = html;
  return t.content.firstElementChild;
}

function nearBottom() {
  return window.innerHeight + window.scrollY >= document.body.scrollHeight - 80;
}

const STREAMS = 4;
// At most this many pages of one browser follow the viewer over a stream at once (Web Locks count them across
// tabs): Chromium opens 6 connections per host, so 2 always stay free for pages, Cancel and Approve.
const POLL_EVERY = 5000;
// A page that gets no stream (too many live tabs) looks again this often (ms), and takes a stream when one frees.
const OPEN_WITHIN = 4000;
// Without Web Locks (a browser on another host over plain HTTP): a stream not open by then gives way to polling.

function say(state, text, kind) {
  // What the page tells about its updates (data-live on <body>: stream, poll, paused, ended, stopped).
  document.body.dataset.live = state;
  let line = document.getElementById("live-state");
  if (!text) {
    if (line) line.remove();
    return;
  }
  if (!line) {
    line = document.createElement("p");
    line.id = "live-state";
    document.querySelector("main").prepend(line);
  }
  line.className = kind || "dim";
  line.setAttribute("role", kind === "problem" ? "alert" : "status");
  line.textContent = text;
}

async function slot() {
  // One of the browser's STREAMS stream slots: the function that gives it back, or null when all are taken.
  if (!navigator.locks) return () => {};
  for (let i = 0; i < STREAMS; i += 1) {
    const release = await new Promise((resolve) => {
      navigator.locks.request(`harness-view-stream-${i}`, { ifAvailable: true }, (lock) => {
        if (!lock) {
          resolve(null);
          return undefined;
        }
        return new Promise((done) => resolve(done));  // held until `done()` (or the tab closes)
      });
    });
    if (release) return release;
  }
  return null;
}

class Live {
  // A page's live updates: a stream while the tab is visible and a slot is free, else a slow poll; none while
  // hidden (a refresh when it shows again); the page says when the viewer stopped and its buttons are disabled.
  constructor(open, refresh) {
    this.open = open;  // (live) => EventSource with the page's handlers
    this.refresh = refresh;  // async () => whether the page is still live (throws when the viewer is not there)
    this.source = null;
    this.release = null;
    this.timer = null;
    this.over = false;
    document.addEventListener("visibilitychange", () => this.shown());
  }

  start() {
    if (document.visibilityState === "hidden") say("paused", "");
    else this.connect();
  }

  async connect() {
    if (this.over || this.source || document.visibilityState === "hidden") return;
    const release = await slot();
    if (!release) {
      this.poll();
      return;
    }
    if (this.over || this.source || document.visibilityState === "hidden") {
      release();
      return;
    }
    clearTimeout(this.timer);
    this.release = release;
    const source = this.open(this);
    this.source = source;
    say("stream", "");
    source.addEventListener("error", () => this.lost(source));
    if (!navigator.locks) {
      setTimeout(() => { if (this.source === source && source.readyState !== 1) { this.close(); this.poll(); } },
        OPEN_WITHIN);
    }
  }

  close() {
    if (this.source) this.source.close();
    this.source = null;
    if (this.release) this.release();
    this.release = null;
    clearTimeout(this.timer);
  }

  end() {
    // the run is over: nothing more to follow
    this.over = true;
    this.close();
    say("ended", "");
  }

  async sync() {
    // Show what changed; whether to go on following.
    let live;
    try {
      live = await this.refresh();
    } catch (error) {
      this.stopped();
      return false;
    }
    if (!live) this.end();
    return live && !this.over;
  }

  poll() {
    say("poll", `More pages of this viewer are live in this browser than it keeps streams for: this one looks for `
      + `changes every ${POLL_EVERY / 1000} s, and follows live again once another live page closes.`);
    clearTimeout(this.timer);
    this.timer = setTimeout(async () => {
      if (document.visibilityState !== "hidden" && await this.sync()) this.connect();
    }, POLL_EVERY);
  }

  async shown() {
    if (this.over) return;
    if (document.visibilityState === "hidden") {
      this.close();
      say("paused", "");
      return;
    }
    if (!this.source && await this.sync()) this.connect();
  }

  async lost(source) {
    // The stream broke: the viewer stopped, or the connection dropped. Look (and show what was missed); go on.
    // A stream refused while the viewer is there (its 503: too many live pages) is said, never a page that
    // silently stops following.
    if (this.source !== source) return;
    const refused = source.readyState === EventSource.CLOSED;
    this.close();
    if (!(await this.sync())) return;
    if (refused) {
      this.over = true;
      noLongerLive();
      return;
    }
    setTimeout(() => this.connect(), 1000);
  }

  stopped() {
    this.over = true;
    this.close();
    say("stopped", "The viewer stopped: this page shows what it had then, and can change nothing. Start `harness "
      + "view` again and open the URL it prints.", "problem");
    document.querySelectorAll("form[method=post] button").forEach((b) => { b.disabled = true; });
    document.querySelectorAll(".live-note").forEach((n) => { n.textContent = "No longer followed: the viewer stopped."; });
  }
}

function noLongerLive() {
  if (document.getElementById("live-lost")) return;
  say("refused", "");
  const said = document.createElement("p");
  said.className = "problem";
  said.id = "live-lost";
  said.setAttribute("role", "alert");
  said.textContent = "This page no longer updates live (too many of this viewer's pages are open, or the viewer "
    + "stopped or restarted): close some of its tabs, then reload this one.";
  document.querySelector("main").prepend(said);
}

async function fetched(url) {
  // A page or fragment of the viewer (throws when the viewer is not there, or no longer knows this browser).
  const answer = await fetch(url, { credentials: "same-origin", cache: "no-store" });
  if (!answer.ok) throw new Error(`the viewer answered ${answer.status}`);
  return answer.text();
}

async function refreshRun() {
  // The run's page fetched again: its sections replaced (open folds kept); whether it is still live.
  const page = new DOMParser().parseFromString(await fetched(location.href), "text/html");
  for (const id of ["head", "result", "changes", "files"]) {
    const old = document.getElementById(id);
    const fresh = page.getElementById(id);
    if (!old || !fresh) continue;
    const open = openFolds(old);
    const node = document.importNode(fresh, true);
    old.replaceWith(node);
    reopen(node, open);
  }
  const timeline = document.getElementById("timeline");
  const fresh = page.getElementById("timeline");
  if (!timeline || !fresh) return false;
  const open = openFolds(timeline);
  timeline.replaceChildren(...[...fresh.children].map((node) => document.importNode(node, true)));
  reopen(timeline, open);
  if (fresh.dataset.live) timeline.dataset.live = fresh.dataset.live;
  else timeline.removeAttribute("data-live");
  return Boolean(fresh.dataset.live);
}

function followRun(timeline) {
  const live = new Live((self) => runStream(timeline, self), refreshRun);
  live.start();
}

function runStream(timeline, live) {
  const source = new EventSource(timeline.dataset.live);
  source.addEventListener("block", (e) => {
    const { key, html } = JSON.parse(e.data);
    const fresh = fromHTML(html);
    if (!fresh) return;
    const stick = nearBottom();
    const old = document.getElementById(key);
    if (old) {
      const open = openFolds(old);
      old.replaceWith(fresh);
      reopen(fresh, open);
    } else {
      timeline.appendChild(fresh);
    }
    if (stick) window.scrollTo(0, document.body.scrollHeight);
  });
  source.addEventListener("append", (e) => {
    // more of a text or reasoning block: added as a text node (never parsed as HTML)
    const { key, text, length } = JSON.parse(e.data);
    const block = document.getElementById(key);
    const pre = block && block.querySelector("pre");
    if (!pre) return;
    const stick = nearBottom();
    pre.appendChild(document.createTextNode(text));
    const count = block.querySelector("summary .dim");
    if (count) count.textContent = `(${length} characters)`;
    if (stick) window.scrollTo(0, document.body.scrollHeight);
  });
  source.addEventListener("end", () => {
    live.end();
    timeline.removeAttribute("data-live");
    document.body.dataset.ended = "1";
  });
  return source;
}

function followRuns(box) {
  // One fetch of the list at a time; a change said while one is on its way (its answer may predate it) is
  // fetched once more after it, and so is whatever changed while the stream was away.
  let pending = false;
  let again = false;
  async function refresh() {
    if (pending) {
      again = true;
      return;
    }
    pending = true;
    try {
      do {
        again = false;
        const answer = await fetch(box.dataset.fragment, { credentials: "same-origin" });
        if (answer.ok) box.innerHTML = await answer.text();
      } while (again);
    } finally {
      pending = false;
    }
  }
  const sync = async () => {
    box.innerHTML = await fetched(box.dataset.fragment);  // throws when the viewer is not there
    return true;
  };
  const live = new Live(() => runsStream(box, refresh), sync);
  live.start();
}

function runsStream(box, refresh) {
  const source = new EventSource(box.dataset.live);
  let opened = false;
  source.addEventListener("runs", refresh);
  source.addEventListener("open", () => {
    if (opened) refresh();  // the browser reconnected it: what changed meanwhile
    opened = true;
  });
  return source;
}

function disableOnSubmit() {
  // One answer per click: the buttons are disabled once the form's data (with the clicked button) is taken.
  document.addEventListener("submit", (e) => {
    if (e.target.method === "post") {
      setTimeout(() => e.target.querySelectorAll("button").forEach((b) => { b.disabled = true; }), 0);
    }
  });
}

document.addEventListener("DOMContentLoaded", () => {
  const timeline = document.querySelector("#timeline[data-live]");
  if (timeline) followRun(timeline);
  const runs = document.querySelector("#runs-table[data-live]");
  if (runs) followRuns(runs);
  disableOnSubmit();
});
