// kvod's console (docs/HTTP.md, "The console"): plain JavaScript over kvod's own
// HTTP API, no build step. Requests carry the token in Authorization; an
// EventSource cannot send headers, so watches carry it as `access_token`, which
// kvod takes on /v1/watch only. Values reach the page through textContent only.
"use strict";

const tokenKey = "kvod.token";
const $ = (id) => document.getElementById(id);
let token = sessionStorage.getItem(tokenKey);

/** One request of the API with the token: {status, etag, body}, body parsed when it is JSON. */
async function api(method, path, { body, headers = {} } = {}) {
  const response = await fetch(path, { method, body, headers: { ...headers, Authorization: `Bearer ${token}` } });
  const text = await response.text();
  let parsed = text;
  try { parsed = text === "" ? null : JSON.parse(text); } catch { /* not JSON: the text itself */ }
  if (response.status === 401) askForToken(parsed?.message ?? "kvod refused the token");
  return { status: response.status, etag: response.headers.get("ETag"), body: parsed };
}

/** `/v1/objects/{name}/{key}/{path}`: each key of a dotted key path one segment. */
function objectPath(name, keyPath) {
  const segments = [name, ...(keyPath ? keyPath.split(".") : [])];
  return "/v1/objects/" + segments.map(encodeURIComponent).join("/");
}

/** A modSeq from an ETag (`"12"`). */
const modSeqOf = (etag) => (etag ? etag.replaceAll('"', "") : null);

const describe = (response) => response.body?.message ?? `HTTP ${response.status}`;

// The token: asked for once, kept in sessionStorage (this tab, until it closes).

function askForToken(message) {
  $("token-error").textContent = message ?? "";
  if (!$("token-dialog").open) $("token-dialog").showModal();
}

$("token-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  token = $("token-input").value.trim();
  const info = await api("GET", "/v1/info");
  if (info.status !== 200) {
    $("token-error").textContent = describe(info);
    return;
  }
  sessionStorage.setItem(tokenKey, token);
  $("token-input").value = "";
  $("token-dialog").close();
  if (!started) return start();
  // A token refused mid-session (a reloaded --http-tokens): the watches start again with the new one.
  watchLog();
  if (documentName !== null) openDocument(documentName);
});

$("forget-token").addEventListener("click", () => {
  sessionStorage.removeItem(tokenKey);
  location.reload();
});

/**
 * `/v1/watch?query` as an EventSource. The browser reconnects by itself after a
 * dropped stream and sends Last-Event-ID, so kvod goes on where it stopped. When
 * kvod refuses a reconnection (kvod restarting, 503), the watch opens again with
 * the last id as `lastEventId`; when it answers 410 (`compacted`: the history
 * was gone), it starts afresh and `onRestart` lets the view be read anew.
 */
class Watch {
  constructor(query, { onChange, onState, onRestart = () => {} }) {
    Object.assign(this, { query, onChange, onState, onRestart, lastId: null, closed: false });
    this.open();
  }

  url() {
    const resume = this.lastId ? `&lastEventId=${encodeURIComponent(this.lastId)}` : "";
    return `/v1/watch?${this.query}${resume}&access_token=${encodeURIComponent(token)}`;
  }

  open() {
    const source = new EventSource(this.url());
    this.source = source;
    source.addEventListener("open", () => this.onState("live"));
    source.addEventListener("change", (event) => {
      this.lastId = event.lastEventId;
      this.onChange(JSON.parse(event.data));
    });
    source.addEventListener("error", (event) => {
      if (this.closed || source !== this.source) return;
      if (event.data) this.onState(`kvod: ${JSON.parse(event.data).message ?? event.data}`);
      if (source.readyState === EventSource.CLOSED) this.refused();
      else this.onState("reconnecting");
    });
  }

  /** kvod answered a reconnection with an error status: ask which, then open again. */
  async refused() {
    this.onState("reconnecting");
    const probe = new AbortController();
    let status = 0;
    try {
      status = (await fetch(this.url(), { signal: probe.signal })).status;
      probe.abort();
    } catch { /* kvod is not answering yet: try again below */ }
    if (this.closed) return;
    if (status === 401) return askForToken("kvod refused the token");
    if (status === 410 || status === 400) {
      this.lastId = null;
      this.onRestart();
    }
    setTimeout(() => { if (!this.closed) this.open(); }, 1000);
  }

  close() {
    this.closed = true;
    this.source?.close();
  }
}

// kvod's figures, from /v1/info every two seconds.

let lastInfo = null;
async function refreshInfo() {
  const info = await api("GET", "/v1/info").catch(() => null);
  if (info?.status !== 200) return;
  const now = performance.now();
  const body = info.body;
  $("server").textContent = `kvod ${body.version} · epoch ${body.epoch}`;
  for (const name of ["connections", "observations", "objects", "seq"]) $(`stat-${name}`).textContent = body[name];
  if (lastInfo) {
    const rate = (body.eventsSent - lastInfo.eventsSent) / ((now - lastInfo.at) / 1000);
    $("stat-events").textContent = Math.max(0, Math.round(rate)).toLocaleString("en");
  }
  lastInfo = { at: now, eventsSent: body.eventsSent };
}

// Objects: a page of names under a prefix, and More for the next.

let listAfter = null;
async function listObjects(fromStart) {
  if (fromStart) {
    listAfter = null;
    $("object-list").replaceChildren();
  }
  const query = new URLSearchParams({ prefix: $("list-prefix").value, limit: "50" });
  if (listAfter !== null) query.set("after", listAfter);
  const page = await api("GET", `/v1/objects?${query}`);
  $("list-error").textContent = page.status === 200 ? "" : describe(page);
  if (page.status !== 200) return;
  for (const name of page.body.objects) {
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = name;
    button.addEventListener("click", () => openDocument(name));
    const item = document.createElement("li");
    item.append(button);
    $("object-list").append(item);
    listAfter = name;
  }
  $("list-more").hidden = !page.body.more;
}
$("list-form").addEventListener("submit", (event) => { event.preventDefault(); listObjects(true); });
$("list-more").addEventListener("click", () => listObjects(false));

// The open document, live: a whole-document watch whose first event is its value.

let documentName = null;
let documentWatch = null;
function openDocument(name) {
  documentWatch?.close();
  documentName = name;
  $("open-name").value = name;
  $("document-name").textContent = name;
  $("document-json").textContent = "";
  $("document-seq").textContent = "–";
  $("document-changed").textContent = "";
  $("edit-result").textContent = "";
  const query = new URLSearchParams({ object: name, options: "new,initial" });
  documentWatch = new Watch(query.toString(), {
    onState: (state) => showState("document-state", state),
    onChange: (change) => {
      $("document-json").textContent = change.new === null ? "(no such object)" : JSON.stringify(change.new, null, 2);
      $("document-seq").textContent = change.seq;
      $("document-changed").textContent = change.initial ? "" : ` · ${change.changedKeyPath ?? "whole document"} ${change.kind}`;
      flash($("document-json"));
    },
  });
}
$("open-form").addEventListener("submit", (event) => { event.preventDefault(); openDocument($("open-name").value); });

// Editing with compare-and-set: Save sends If-Match with the modSeq Load read
// (If-None-Match: * when it did not exist), so a change made since is a 412, not lost.

let loadedTag = null;
async function loadValue() {
  if (documentName === null) return editResult("Open a document first.", "error");
  const keyPath = $("edit-keypath").value;
  const response = await api("GET", objectPath(documentName, keyPath));
  if (response.status === 200) {
    loadedTag = response.etag;
    $("edit-value").value = JSON.stringify(response.body, null, 2);
    $("edit-modseq").textContent = modSeqOf(loadedTag);
    editResult("", "");
  } else if (response.status === 404) {
    loadedTag = "*";
    $("edit-value").value = "";
    $("edit-modseq").textContent = "none: Save creates it";
    editResult("", "");
  } else {
    editResult(describe(response), "error");
  }
}

async function saveValue() {
  if (documentName === null) return editResult("Open a document first.", "error");
  if (loadedTag === null) return editResult("Load the value first: Save compares it with what you loaded.", "error");
  const text = $("edit-value").value;
  try { JSON.parse(text); } catch (error) { return editResult(`Not JSON: ${error.message}`, "error"); }
  const keyPath = $("edit-keypath").value;
  const condition = loadedTag === "*" ? { "If-None-Match": "*" } : { "If-Match": loadedTag };
  const response = await api("PUT", objectPath(documentName, keyPath), { body: text, headers: condition });
  if (response.status === 200) {
    loadedTag = response.etag;
    $("edit-modseq").textContent = modSeqOf(loadedTag);
    return editResult(`Saved at seq ${response.body.seq}.`, "saved");
  }
  if (response.status !== 412) return editResult(describe(response), "error");
  const what = keyPath ? `${documentName} ${keyPath}` : documentName;
  const loaded = loadedTag === "*" ? "it did not exist" : `you loaded modSeq ${modSeqOf(loadedTag)}`;
  const now = response.body.modSeq === 0 ? "it does not exist now" : `it is at modSeq ${response.body.modSeq} now`;
  const current = await api("GET", objectPath(documentName, keyPath));
  const value = current.status === 200 ? ` Its value now: ${JSON.stringify(current.body)}.` : "";
  editResult(`Conflict: ${what} changed since you loaded it (${loaded}; ${now}). Nothing was saved.${value} ` +
             "Load it again to edit the current value.", "conflict");
}

function editResult(text, kind) {
  $("edit-result").textContent = text;
  $("edit-result").className = kind;
}
$("edit-load").addEventListener("click", loadValue);
$("edit-form").addEventListener("submit", (event) => { event.preventDefault(); saveValue(); });

// The log: every change under a prefix, newest first, the last 500 kept. It asks
// for no values (options empty): a row tells what changed, the document pane how.

let logWatch = null;
function watchLog() {
  logWatch?.close();
  const query = new URLSearchParams({ prefix: $("log-prefix").value, options: "" });
  logWatch = new Watch(query.toString(), {
    onState: (state) => showState("log-state", state),
    onChange: (change) => {
      const row = document.createElement("tr");
      const cells = [change.seq, change.object, change.changedKeyPath ?? "(whole document)", change.kind,
                     change.cause ?? "", new Date().toLocaleTimeString()];
      for (const value of cells) {
        const cell = document.createElement("td");
        cell.textContent = value;
        cell.title = value;
        row.append(cell);
      }
      $("log-rows").prepend(row);
      while ($("log-rows").rows.length > 500) $("log-rows").lastElementChild.remove();
    },
  });
}
$("log-form").addEventListener("submit", (event) => { event.preventDefault(); watchLog(); });
$("log-clear").addEventListener("click", () => $("log-rows").replaceChildren());

function showState(id, state) {
  $(id).textContent = state;
  $(id).className = `state ${state}`;
}

function flash(element) {
  element.classList.remove("flash");
  void element.offsetWidth; // restarts the animation
  element.classList.add("flash");
}

let started = false;
function start() {
  if (started) return;
  started = true;
  refreshInfo();
  setInterval(refreshInfo, 2000);
  listObjects(true);
  watchLog();
}

(async () => {
  if (!token) return askForToken("");
  const info = await api("GET", "/v1/info");
  if (info.status === 200) start();
})();
