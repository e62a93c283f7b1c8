// citebook reader: library (with upload for admins), ask box with a streamed
// answer, and a reader that opens a citation at its page with the quoted
// passage marked.
"use strict";

const $ = (id) => document.getElementById(id);
const state = {
  book: null, page: 0, pages: 0, title: "",
  view: "image", // how PDF pages are shown when the server can draw them: "image", "image!" (chosen) or "text"
  cite: null,    // the citation being read, kept while paging so boxes on the next page show too
  imageURL: "",  // object URL of the page image on screen
  me: null,      // the principal from /v1/me
  books: [],     // the last /v1/books answer
  jobs: new Map(), // book ID → index job this page follows: {id, title, status, error, started}
};

function token() { return localStorage.getItem("citebook.token") || ""; }

function headers(extra) {
  const h = Object.assign({}, extra || {});
  if (token()) h["Authorization"] = "Bearer " + token();
  return h;
}

// status shows one line under the header: API errors in red, progress and
// outcomes ("info") in the normal colour.
function status(msg, kind) {
  const s = $("status");
  s.textContent = msg || "";
  s.className = msg ? (kind || "error") : "";
}

// ApiError keeps the HTTP status and the error code of the API's
// {"error":{"code","message"}} body so callers can explain known cases.
class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

async function apiError(res) {
  let code = "", msg = res.status + " " + res.statusText;
  try {
    const e = (await res.json()).error;
    code = e.code;
    msg = e.message;
  } catch (e) { /* not JSON: keep the HTTP status */ }
  return new ApiError(res.status, code, msg);
}

async function api(path, opts) {
  const o = opts || {};
  const res = await fetch(path, Object.assign({}, o, { headers: headers(o.headers) }));
  if (!res.ok) throw await apiError(res);
  return res.status === 204 ? null : res.json();
}

const enc = encodeURIComponent;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function el(tag, attrs, ...children) {
  const n = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "onclick") n.addEventListener("click", v); else n.setAttribute(k, v);
  }
  for (const c of children) n.append(c);
  return n;
}

// start learns who the token (or the local zero-config principal) is, then
// loads the library; a 401 opens the token box.
async function start() {
  try {
    state.me = await api("/v1/me");
  } catch (e) {
    state.me = null;
    $("who").textContent = "";
    $("add-book").hidden = true;
    if (e.status === 401) $("token-box").open = true;
    status(e.message);
    return;
  }
  const me = state.me;
  $("who").textContent = me.user + "@" + me.tenant + (me.admin ? " · admin" : "");
  $("token-box").open = false;
  $("add-book").hidden = !me.admin;
  status("");
  await loadBooks();
  // Offer the upload form open only while there is nothing to read yet;
  // later the user's choice stands.
  $("add-book").open = state.books.length === 0;
}

async function loadBooks() {
  try {
    state.books = (await api("/v1/books")).books;
  } catch (e) {
    status(e.message);
    return;
  }
  renderBooks();
  if (state.me && state.me.admin) {
    for (const b of state.books) if (!b.active_version && !state.jobs.has(b.id)) resume(b);
  }
}

const formats = { pdf: "PDF", epub: "EPUB", markdown: "Markdown", text: "Text" };

function renderBooks() {
  const admin = !!(state.me && state.me.admin);
  const list = $("books");
  list.replaceChildren();
  const listed = new Set();
  for (const b of state.books) {
    listed.add(b.id);
    list.append(bookItem(b, state.jobs.get(b.id), admin));
  }
  // Uploads whose build has not created the book yet (or failed before it did).
  for (const [id, job] of state.jobs) {
    if (!listed.has(id)) list.append(bookItem({ id, title: job.title, pending: true }, job, admin));
  }
  const empty = $("empty");
  empty.hidden = list.children.length > 0;
  if (!empty.hidden) $("add-book").open = true;
  empty.textContent = admin
    ? "Your library is empty. Add a book below (PDF, EPUB, Markdown or plain text). Once it is indexed, ask a question and click a citation to read the passage in the book."
    : "No books are shared with you yet. Ask an admin of your library to add one.";
}

function bookItem(b, job, admin) {
  const ready = b.active_version > 0;
  let note = "", st = ready ? "ready" : "indexing";
  if (job && job.status === "failed") {
    st = "failed";
    note = "indexing failed: " + job.error;
  } else if (job) {
    const secs = Math.max(0, Math.round((Date.now() - job.started) / 1000));
    note = (job.status === "queued" ? "waiting to be indexed" : "indexing") + "… " + secs + " s";
  } else if (!ready) {
    note = "not indexed";
  }
  const li = el("li", { "data-book": b.id, "data-state": st });
  const open = el("button", { type: "button", class: "open", "data-book": b.id, onclick: () => openPage(b.id, 1) }, b.title || b.id);
  open.disabled = !ready;
  li.append(open);
  const facts = [formats[b.format] || "", b.pages ? b.pages + " pages" : ""].filter(Boolean).join(" · ");
  if (facts) li.append(el("span", { class: "meta" }, facts));
  if (admin && !b.pending) {
    li.append(el("button", { type: "button", class: "delete", "aria-label": "Delete " + b.title, onclick: () => deleteBook(b) }, "Delete"));
  } else if (b.pending && job.status === "failed") {
    li.append(el("button", { type: "button", class: "delete", onclick: () => { state.jobs.delete(b.id); renderBooks(); } }, "Dismiss"));
  }
  if (note) li.append(el("span", { class: "note " + st }, note));
  if (job && job.status !== "failed" && !ready) li.append(el("progress", { "aria-label": "Indexing " + (b.title || b.id) }));
  return li;
}

// resume follows a build started before this page was opened, or shows why
// the last one failed.
async function resume(b) {
  try {
    const { jobs } = await api("/v1/books/" + enc(b.id) + "/jobs");
    const last = jobs[0];
    if (!last) return;
    if (last.status === "failed") {
      state.jobs.set(b.id, { id: last.job_id, title: b.title, status: "failed", error: last.error || "no reason recorded" });
      renderBooks();
    } else if (last.status === "queued" || last.status === "running") {
      follow(last, b.title, "", Math.min(Date.now(), Date.parse(last.queued || last.started) || Date.now()));
    }
  } catch (e) { status(e.message); }
}

// follow polls an index job until it ends, keeping the book's entry and the
// status line up to date, then reloads the library. name is the uploaded
// file's name, used in place of the server's copy in failure reasons; since
// is when the job started by this browser's clock.
async function follow(job, title, name, since) {
  if (state.jobs.has(job.book_id) && state.jobs.get(job.book_id).status !== "failed") return;
  const t = { id: job.job_id, title, status: job.status, error: "", started: since || Date.now() };
  state.jobs.set(job.book_id, t);
  renderBooks();
  for (;;) {
    await sleep(700);
    let j;
    try {
      j = await jobStatus(t.id, job.book_id);
    } catch (e) {
      Object.assign(t, { status: "failed", error: "lost track of the job: " + e.message });
      status("Indexing “" + title + "”: " + t.error);
      break;
    }
    t.status = j.status;
    if (j.status === "completed") {
      state.jobs.delete(job.book_id);
      status("“" + title + "” is ready (" + j.chunks + " passages indexed). Ask a question about it.", "info");
      break;
    }
    if (j.status === "cancelled") {
      state.jobs.delete(job.book_id);
      status("Indexing “" + title + "” was cancelled.", "info");
      break;
    }
    if (j.status === "failed") {
      t.error = j.error || "no reason given";
      if (name) t.error = t.error.replace(new RegExp("\\S*" + job.book_id + "\\.\\w+", "g"), name);
      status("Indexing “" + title + "” failed: " + t.error);
      break;
    }
    renderBooks();
  }
  await loadBooks();
}

// jobStatus reads a job of this server's queue, or else the book's recorded
// build history (a build started by the CLI or another server process).
async function jobStatus(id, bookID) {
  try {
    return await api("/v1/jobs/" + enc(id));
  } catch (e) {
    if (e.status !== 404) throw e;
    const { jobs } = await api("/v1/books/" + enc(bookID) + "/jobs");
    const j = jobs.find((j) => j.job_id === id);
    if (!j) throw e;
    return j;
  }
}

async function upload(e) {
  e.preventDefault();
  const file = $("upload-file").files[0];
  if (!file) return;
  const body = new FormData();
  body.append("file", file);
  const title = $("upload-title").value.trim();
  if (title) body.append("title", title);
  $("upload-button").disabled = true;
  $("upload-progress").hidden = false;
  $("upload-state").textContent = "Uploading " + file.name + "…";
  try {
    const r = await api("/v1/books", { method: "POST", body });
    $("upload-form").reset();
    status("Uploaded “" + r.title + "”; indexing it now. It can be asked about once its entry is ready.", "info");
    follow(r.job, r.title, file.name);
  } catch (err) {
    status(uploadMessage(err, file.name));
  } finally {
    $("upload-button").disabled = false;
    $("upload-progress").hidden = true;
  }
}

// uploadMessage explains the refusals a user can act on.
function uploadMessage(err, name) {
  if (err.status === 409) {
    const m = /"([^"]+)"/.exec(err.message);
    const b = m && state.books.find((b) => b.id === m[1]);
    const as = b ? "“" + b.title + "”" : m ? m[1] : "another book";
    return "“" + name + "” is already in the library as " + as + " (the same file was uploaded before). Open it from the list, or delete it first to add it again.";
  }
  return "Could not add “" + name + "”: " + err.message;
}

async function deleteBook(b) {
  if (!confirm("Delete “" + b.title + "”?\n\nIts text and index are removed; answers will no longer cite it.")) return;
  try {
    await api("/v1/books/" + enc(b.id), { method: "DELETE" });
    state.jobs.delete(b.id);
    if (state.book === b.id) {
      state.book = null;
      $("reader").hidden = true;
    }
    status("Deleted “" + b.title + "”.", "info");
  } catch (e) {
    status("Could not delete “" + b.title + "”: " + e.message);
  }
  await loadBooks();
}

// Reading a server-sent event stream from fetch, since EventSource cannot POST
// or send the Authorization header.
async function ask(question) {
  const answer = $("answer");
  answer.className = "";
  answer.textContent = "";
  $("citations").replaceChildren();
  $("notes").replaceChildren();
  $("notes").hidden = true;
  $("trace-body").textContent = "";
  $("trace").hidden = true;
  $("ask-button").disabled = true;
  status("");
  try {
    const res = await fetch("/v1/ask?stream=1", {
      method: "POST",
      headers: headers({ "Content-Type": "application/json", "Accept": "text/event-stream" }),
      body: JSON.stringify({ question }),
    });
    if (!res.ok) throw await apiError(res);
    const reader = res.body.getReader();
    const dec = new TextDecoder();
    let buf = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += dec.decode(value, { stream: true });
      let i;
      while ((i = buf.indexOf("\n\n")) >= 0) {
        handleEvent(buf.slice(0, i));
        buf = buf.slice(i + 2);
      }
    }
  } catch (e) {
    status(e.message);
  } finally {
    $("ask-button").disabled = false;
  }
}

function handleEvent(raw) {
  let event = "message", data = "";
  for (const line of raw.split("\n")) {
    if (line.startsWith("event: ")) event = line.slice(7);
    else if (line.startsWith("data: ")) data += line.slice(6);
  }
  if (!data) return;
  const msg = JSON.parse(data);
  if (event === "delta") $("answer").textContent += msg.text;
  else if (event === "answer") showAnswer(msg);
  else if (event === "error") status(msg.error.message);
}

// showAnswer replaces the streamed draft with the verified answer, turning
// each [n] into a link to its citation.
function showAnswer(a) {
  const answer = $("answer");
  answer.replaceChildren();
  answer.className = a.refused ? "refused" : "";
  const byN = new Map(a.citations.map((c) => [c.n, c]));
  let last = 0;
  for (const m of a.answer.matchAll(/\[(\d+)\]/g)) {
    const c = byN.get(Number(m[1]));
    if (!c) continue;
    answer.append(a.answer.slice(last, m.index));
    answer.append(citeButton(c, "[" + c.n + "]"));
    last = m.index + m[0].length;
  }
  answer.append(a.answer.slice(last));
  const list = $("citations");
  for (const c of a.citations) {
    const where = [c.book_title, (c.heading_path || []).join(" › "), c.printed_pages ? "pp. " + c.printed_pages : c.printed_page ? "p. " + c.printed_page : (c.page ? "page " + c.page : "")].filter(Boolean).join(", ");
    list.append(el("li", { value: c.n },
      citeButton(c, where),
      " ", el("q", {}, c.quote)));
  }
  prefetchPages(a.citations);
  showNotes(a);
  $("trace-body").textContent = JSON.stringify(a.trace, null, 2);
  $("trace").hidden = false;
}

// showNotes says, under the answer, what the trace says a reader needs to
// read it: the question's words searched in the books' spelling or script
// ("analysed → analyzed", "編譯 → 编译"), and why a question was refused
// ("the book never mentions “merge”, …").
function showNotes(a) {
  const t = a.trace || {}, notes = $("notes");
  if (t.respelled && t.respelled.length) {
    notes.append(el("li", { class: "respelled" }, "Searched as the books write it: " + t.respelled.join(", ")));
  }
  if (a.refused && t.answerability && t.answerability.reason) {
    notes.append(el("li", { class: "why" }, "Why: " + t.answerability.reason));
  }
  notes.hidden = notes.childElementCount === 0;
}

// citeButton opens a citation; its data attributes say where it points.
function citeButton(c, label) {
  return el("button", {
    type: "button", class: "cite", "data-n": c.n, "data-book": c.book_id, "data-chunk": c.chunk_id,
    "data-page": c.page || "", "data-quote": c.quote, onclick: () => openCitation(c),
  }, label);
}

async function openCitation(c) {
  try {
    let page = c.page;
    if (!page) page = (await api("/v1/chunks/" + enc(c.chunk_id))).reader_page;
    await openPage(c.book_id, page, c);
  } catch (e) { status(e.message); }
}

async function openPage(bookID, n, cite) {
  try {
    const p = await api("/v1/books/" + enc(bookID) + "/pages/" + n);
    if (cite !== undefined || bookID !== state.book) state.cite = cite || null;
    Object.assign(state, { book: bookID, page: p.page, pages: p.pages, title: p.title, last: p });
    await showPage(p, state.cite);
  } catch (e) { status(e.message); }
}

// showPage draws a PDF page as its image with the citation's boxes when the
// server can render pages, and as text otherwise (or when the reader asked
// for text); EPUB, Markdown and text books always read as text.
async function showPage(p, cite) {
  const pdf = p.kind === "page";
  const note = $("reader-note");
  const toggle = $("view-toggle");
  toggle.hidden = !p.image;
  note.hidden = true;
  if (pdf && !p.image) {
    note.hidden = false;
    note.textContent = "Page images are off on this server (it needs poppler's pdftoppm); showing the page's text.";
  }
  // A citation with no place on its page (a book indexed before positions
  // were kept) reads better as marked text than as an unmarked image.
  const unplaced = cite && cite.book_id === p.book_id && cite.page === p.page && !(cite.boxes || []).some((b) => b.page === p.page);
  const image = state.view === "image!" || (state.view === "image" && !unplaced);
  if (p.image && !image && state.view === "image") {
    note.hidden = false;
    note.textContent = "This passage has no position on the page image; showing the page's text.";
  }
  if (p.image && image) {
    toggle.textContent = "Text";
    toggle.setAttribute("aria-pressed", "false");
    try {
      await renderImage(p, cite);
      return;
    } catch (e) {
      note.hidden = false;
      note.textContent = "The page image could not be drawn (" + e.message + "); showing the page's text.";
    }
  }
  toggle.textContent = "Page image";
  toggle.setAttribute("aria-pressed", "true");
  renderPage(p, cite);
}

// renderImage fetches the page image (with the token, so not a plain img
// src) at the width the reader is shown at, and lays the citation's boxes
// on this page over it in page fractions, so they scale with the image.
async function renderImage(p, cite) {
  const art = $("page");
  const res = await fetch(imageURL(p.book_id, p.page), { headers: headers() });
  if (!res.ok) throw await apiError(res);
  const url = URL.createObjectURL(await res.blob());
  const img = el("img", { alt: "Page " + p.page + " of " + p.title, src: url });
  await img.decode().catch(() => {});
  renderBar(p);
  if (state.imageURL) URL.revokeObjectURL(state.imageURL);
  state.imageURL = url;
  const fig = el("figure", { class: "page-figure", "data-page": p.page }, img);
  const boxes = cite && cite.book_id === p.book_id ? (cite.boxes || []).filter((b) => b.page === p.page) : [];
  for (const b of boxes) {
    // Set through the CSSOM: the page's CSP refuses inline style attributes.
    const pct = (v) => (v * 100).toFixed(3) + "%";
    const hl = el("div", { class: "hl", "data-n": cite.n });
    Object.assign(hl.style, { left: pct(b.x0), top: pct(b.y0), width: pct(b.x1 - b.x0), height: pct(b.y1 - b.y0) });
    fig.append(hl);
  }
  art.className = "image";
  art.replaceChildren(fig);
  scrollToMark(art, fig.querySelector(".hl"));
}

// imageURL asks for a page image as wide as the reader can show it (at
// most 1000 CSS pixels), in the server's 100-pixel steps; it depends only on
// the window, so images fetched ahead are the ones the reader asks for.
function imageURL(bookID, page) {
  const width = Math.min(2000, Math.max(200, Math.ceil(Math.min(window.innerWidth, 1000) * (window.devicePixelRatio || 1) / 100) * 100));
  return "/v1/books/" + enc(bookID) + "/pages/" + page + ".png?width=" + width;
}

// prefetchPages draws the cited pages while the answer is read, so opening a
// citation finds its page image in the browser's and the server's cache.
function prefetchPages(citations) {
  const seen = new Set();
  for (const c of citations) {
    for (const b of c.boxes || []) {
      const url = imageURL(c.book_id, b.page);
      if (seen.has(url) || seen.size >= 4) continue;
      seen.add(url);
      fetch(url, { headers: headers() }).catch(() => {});
    }
  }
}

function renderBar(p) {
  $("reader").hidden = false;
  $("reader-title").textContent = p.title;
  const label = p.kind === "page" ? "page " + p.page + (p.printed_page ? " (p. " + p.printed_page + ")" : "") : "chapter " + p.page;
  $("reader-pos").textContent = label + " / " + p.pages;
  $("prev").disabled = p.page <= 1;
  $("next").disabled = p.page >= p.pages;
  const art = $("page");
  art.dataset.book = p.book_id;
  art.dataset.page = p.page;
}

function renderPage(p, cite) {
  renderBar(p);
  const art = $("page");
  art.className = "";
  art.replaceChildren();
  const texts = p.blocks.map((b) => b.text);
  const hit = cite ? locate(texts, cite.quote) || chunkRange(p, cite.chunk_id) : null;
  let lastHeading = "";
  p.blocks.forEach((b, i) => {
    const heading = (b.heading_path || []).join(" › ");
    if (heading && heading !== lastHeading) art.append(el("h3", {}, heading));
    lastHeading = heading;
    const div = el("div", { class: "block", "data-parent": b.parent_id });
    if (hit && hit.block === i) {
      div.append(b.text.slice(0, hit.start), el("mark", {}, b.text.slice(hit.start, hit.end)), b.text.slice(hit.end));
    } else {
      div.append(b.text);
    }
    art.append(div);
  });
  scrollToMark(art, art.querySelector("mark"));
}

// scrollToMark brings the highlight into view: inside the reader's own
// scroll box in the wide layout, by scrolling the window on a phone.
function scrollToMark(art, mark) {
  if (!mark) {
    art.scrollTop = 0;
  } else if (art.scrollHeight > art.clientHeight + 1) {
    // Wide layout: the page scrolls in its own box beside the answer; centre
    // the mark there without moving the window.
    const m = mark.getBoundingClientRect(), a = art.getBoundingClientRect();
    art.scrollTop += m.top - a.top - (art.clientHeight - m.height) / 2;
  } else {
    mark.scrollIntoView({ block: "center" });
  }
}

// locate finds a quote in the page's blocks ignoring differences in
// whitespace and case; a quote running onto the next page is matched by its
// longest leading part on this page.
function locate(texts, quote) {
  const q = quote.replace(/\s+/g, " ").trim().toLowerCase();
  for (let len = q.length; len >= Math.min(q.length, 24); len = Math.floor(len * 0.75)) {
    const part = q.slice(0, len).trim();
    for (let i = 0; i < texts.length; i++) {
      const r = findNormalized(texts[i], part);
      if (r) return { block: i, start: r[0], end: r[1] };
    }
    if (len <= 24) break;
  }
  return null;
}

// findNormalized searches text with runs of whitespace collapsed and maps
// the match back to offsets in the original text.
function findNormalized(text, q) {
  let norm = "";
  const map = [];
  let space = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (/\s/.test(ch)) {
      if (!space && norm.length) { norm += " "; map.push(i); }
      space = true;
    } else {
      norm += ch.toLowerCase();
      map.push(i);
      space = false;
    }
  }
  const at = norm.indexOf(q);
  if (at < 0 || !q) return null;
  return [map[at], map[at + q.length - 1] + 1];
}

function chunkRange(p, id) {
  const c = (p.chunks || []).find((c) => c.id === id);
  return c ? { block: c.block, start: c.start, end: c.end } : null;
}

function init() {
  $("token").value = token();
  $("token-form").addEventListener("submit", (e) => {
    e.preventDefault();
    localStorage.setItem("citebook.token", $("token").value.trim());
    state.jobs.clear();
    start();
  });
  $("upload-form").addEventListener("submit", upload);
  $("ask-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const q = $("question").value.trim();
    if (!q) return;
    if (state.me && !state.books.some((b) => b.active_version > 0)) {
      status("No book is indexed yet: add one in the Library panel first, then ask.", "info");
      return;
    }
    ask(q);
  });
  $("view-toggle").addEventListener("click", () => {
    // "image!" is an explicit choice: images even for unplaced citations.
    state.view = $("page").className === "image" ? "text" : "image!";
    if (state.last) showPage(state.last, state.cite);
  });
  $("prev").addEventListener("click", () => { if (state.page > 1) openPage(state.book, state.page - 1); });
  $("next").addEventListener("click", () => { if (state.page < state.pages) openPage(state.book, state.page + 1); });
  start();
}

document.addEventListener("DOMContentLoaded", init);
