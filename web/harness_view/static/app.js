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

function noLongerLive(source) {
  // A stream refused (the viewer's 503: too many live pages; its 401: it restarted with a new token) is closed
  // for good by the browser: say so, never a page that silently stops following.
  source.addEventListener("error", () => {
    if (source.readyState !== EventSource.CLOSED || document.getElementById("live-lost")) return;
    const said = document.createElement("p");
    said.className = "problem";
    said.id = "live-lost";
    said.setAttribute("role", "alert");
    said.textContent = "This page no longer updates live (too many of this viewer's pages are open, or the viewer "
      + "stopped or restarted): close some of its tabs, then reload this one.";
    document.querySelector("main").prepend(said);
  });
}

function followRun(timeline) {
  const source = new EventSource(timeline.dataset.live);
  noLongerLive(source);
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
    source.close();
    timeline.removeAttribute("data-live");
    document.body.dataset.ended = "1";
  });
}

function followRuns(box) {
  // One fetch of the list at a time; a change said while one is on its way (its answer may predate it) is
  // fetched once more after it, and so is whatever changed while the stream was away (it reconnects on its own).
  const source = new EventSource(box.dataset.live);
  noLongerLive(source);
  let pending = false;
  let again = false;
  let opened = false;
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
  source.addEventListener("runs", refresh);
  source.addEventListener("open", () => {
    if (opened) refresh();
    opened = true;
  });
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
