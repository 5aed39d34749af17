// graphtx search page: plain JS, no libraries; talks to POST /search and GET /documents/{id} of this origin.
// Text from documents is put into the page as text nodes (never as HTML); graph SVGs come from the server,
// which escapes every node text.
"use strict";

const PAGE_SIZE = 10;
let indexCount = null;  // documents in the index (/healthz): the denominator of "N of M documents pass"
let explainLimit = PAGE_SIZE;  // claim charts the service explains in one request (/healthz max_explain_hits)
const $ = (selector) => document.querySelector(selector);

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === "") continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

// --- the query and its filters ---------------------------------------------------------

// an id: one token, or a country code + number (+ kind) such as "US 8,418,590 B2"
const ID_LIKE = /^([A-Za-z0-9][\w\-\/.]*|[A-Za-z]{2}[\s\-]?[\d][\d,.\s\-]*[A-Za-z]?\d?)$/;

function words(value) {
  return value.split(/[\s,;]+/).map((w) => w.trim()).filter(Boolean);
}

function codes(value) {
  // classification prefixes keep their inner space ("H01M 10/44"): split on commas / semicolons only
  return value.split(/[,;]+/).map((w) => w.trim()).filter(Boolean);
}

function formState() {
  return {
    q: $("#query").value.trim(),
    before: $("#f-before").value.trim(),
    cpc: $("#f-cpc").value.trim(),
    ipc: $("#f-ipc").value.trim(),
    country: $("#f-country").value.trim(),
    kind: $("#f-kind").value.trim(),
    exclude_family: $("#f-exclude-family").checked ? "1" : "",
    ranker: $("#f-ranker").value,
  };
}

function setForm(state) {
  $("#query").value = state.q || "";
  $("#f-before").value = state.before || "";
  $("#f-cpc").value = state.cpc || "";
  $("#f-ipc").value = state.ipc || "";
  $("#f-country").value = state.country || "";
  $("#f-kind").value = state.kind || "";
  $("#f-exclude-family").checked = !!state.exclude_family;
  $("#f-ranker").value = state.ranker || "";
}

// the /search body: filters only when filled (an empty filter is no filter)
function searchBody(state, offset) {
  const body = { k: PAGE_SIZE, offset };  // the hit list alone; explanations come after it (explainPage)
  if (ID_LIKE.test(state.q) && state.q.length <= 40) body.id = state.q;
  else body.text = state.q;
  if (state.before) body.before = state.before;
  if (state.cpc) body.cpc = codes(state.cpc);
  if (state.ipc) body.ipc = codes(state.ipc);
  if (state.country) body.country = words(state.country).map((w) => w.toUpperCase());
  if (state.kind) body.kind = words(state.kind).map((w) => w.toUpperCase());
  if (state.exclude_family) body.exclude_family = true;
  if (state.ranker) body.ranker = state.ranker;
  return body;
}

// --- talking to the service ----------------------------------------------------------

async function call(method, path, body) {
  const options = { method, headers: { Accept: "application/json" } };
  if (body !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  const response = await fetch(path, options);
  let data = {};
  try {
    data = await response.json();
  } catch (err) {
    data = { error: `the service answered ${response.status} without JSON` };
  }
  if (!response.ok) {
    const error = new Error(data.error || `the service answered ${response.status}`);
    error.data = data;
    throw error;
  }
  return data;
}

function say(text, kind = "") {
  const box = $("#message");
  box.textContent = "";
  box.className = `message ${kind}`;
  if (text instanceof Node) box.append(text);
  else box.textContent = text;
}

// --- hits ------------------------------------------------------------------------------

function facts(record) {
  const parts = [];
  if (record.applicants && record.applicants.length) parts.push(["applicants", record.applicants.join("; ")]);
  if (record.date) parts.push(["published", record.date]);
  if (record.priority_date) parts.push(["priority", record.priority_date]);
  if (record.application_date) parts.push(["filed", record.application_date]);
  if (record.family_id) parts.push(["family", record.family_id]);
  if (record.kind) parts.push(["kind", record.kind]);
  if (record.country) parts.push(["country", record.country]);
  if (record.ipc && record.ipc.length) parts.push(["IPC", record.ipc.slice(0, 6).join(", ")]);
  if (record.cpc && record.cpc.length) parts.push(["CPC", record.cpc.slice(0, 6).join(", ")]);
  return el("dl", { class: "facts" }, parts.map(([k, v]) => [el("dt", {}, k), el("dd", {}, v)]));
}

function escapeRegExp(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

// text with the given phrases wrapped in <mark>, built from text nodes only
function highlighted(text, phrases) {
  const terms = [...new Set(phrases.filter((p) => p && p.length > 2))].sort((a, b) => b.length - a.length);
  if (!terms.length) return [text];
  // whole words only ("table" not inside "rotatable"), a plural s / es allowed
  const pattern = new RegExp(`\\b(${terms.map((t) => `${escapeRegExp(t)}(?:e?s)?`).join("|")})\\b`, "gi");
  return text.split(pattern).map((part, i) => (i % 2 ? el("mark", {}, part) : part));
}

function clipped(label, text, marks, limit = 400) {
  if (!text) return null;
  const box = el("p", { class: `text ${label}` }, el("span", { class: "label" }, label === "claim" ? "Claim 1 " : "Abstract "));
  if (text.length <= limit) {
    box.append(...highlighted(text, marks).map((n) => (n instanceof Node ? n : document.createTextNode(n))));
    return box;
  }
  const short = el("span", {}, highlighted(text.slice(0, limit) + "…", marks));
  const full = el("span", { hidden: true }, highlighted(text, marks));
  const more = el("button", { type: "button", class: "more" }, "more");
  more.addEventListener("click", () => {
    const open = full.hidden;
    full.hidden = !open;
    short.hidden = open;
    more.textContent = open ? "less" : "more";
  });
  box.append(short, full, " ", more);
  return box;
}

// the claim chart: every numbered query feature, the hit feature that discloses it, or "not found"
function claimChart(explanation) {
  if (!explanation) return null;
  const elements = explanation.elements || [];
  const rows = elements.map((e) =>
    el("tr", { class: e.found ? "found" : "missing" },
      el("td", { class: "num" }, e.number),
      el("td", {}, e.text),
      el("td", {}, e.found ? el("mark", {}, e.hit_text) : el("span", { class: "not-found" }, "not found")),
      el("td", { class: "sim" }, e.hit_node >= 0 ? e.similarity.toFixed(2) : ""),
      el("td", { class: "how", title: "confidence: the share of this feature's matches in unrelated documents of the index that score lower" },
        e.found === "words" ? "same words" : e.found === "model" ? `model, confidence ${confidence(e.confidence)}` : e.hit_node >= 0 && e.confidence !== null && e.confidence !== undefined ? `below the bar (${confidence(e.confidence)})` : "")));
  const missing = elements.filter((e) => !e.found);
  const summary = !elements.length ? null : missing.length
    ? el("p", { class: "not-found" }, "not found: ", missing.map((e, i) => [i ? ", " : "", `feature ${e.number}`]))
    : el("p", { class: "all-found" }, `all ${elements.length} query features found`);
  const pairs = el("details", { class: "pairs" }, el("summary", {}, "node pairs carrying the model's score"),
    el("ul", { class: "matches" }, (explanation.matches || []).map((m) =>
      el("li", {}, el("span", { class: "qf" }, m.query_text), " → ", m.hit_text, el("span", { class: "sim" }, ` sim ${m.similarity.toFixed(2)}, ${m.contribution >= 0 ? "+" : ""}${m.contribution.toFixed(4)}`)))));
  return el("div", { class: "explanation" }, el("h4", {}, "Claim chart"),
    rows.length ? el("table", { class: "chart" }, el("thead", {}, el("tr", {}, ["#", "query feature", "in this hit", "sim", ""].map((h) => el("th", {}, h)))), el("tbody", {}, rows)) : null,
    summary, pairs);
}

function confidence(value) {
  return value === null || value === undefined ? "n/a" : value >= 0.999 ? "> 0.999" : value.toFixed(3);
}

// phrases to mark in the hit's text: what disclosed each found feature
function foundPhrases(explanation) {
  if (!explanation) return [];
  const found = (explanation.elements || []).filter((e) => e.found);
  return found.flatMap((e) => (e.found === "words" ? [e.text, e.hit_text] : [e.hit_text]));
}

const SIGNAL_LABEL = { bm25: "BM25, terms", dense: "graph model", late: "late interaction", meta: "dates, classes" };

function signals(rankerExplanation) {
  if (!rankerExplanation) return null;
  const entries = Object.entries(rankerExplanation.signals).filter(([, v]) => Math.abs(v) > 1e-12).sort((a, b) => Math.abs(b[1]) - Math.abs(a[1]));
  const scale = Math.max(1e-9, ...entries.map(([, v]) => Math.abs(v)));
  const rows = entries.map(([name, value]) =>
    el("li", {}, el("span", { class: "signal" }, SIGNAL_LABEL[name] || name), el("meter", { min: 0, max: 1, value: Math.abs(value) / scale }), ` ${value >= 0 ? "+" : ""}${value.toFixed(4)}`));
  const base = rankerExplanation.base ? el("li", {}, el("span", { class: "signal" }, "base"), ` ${rankerExplanation.base.toFixed(4)}`) : null;
  return el("div", { class: "signals" }, el("h4", {}, `What the ${rankerExplanation.ranker} ranker's score ${rankerExplanation.score.toFixed(4)} is made of`), el("ul", {}, rows, base));
}

function svgBox(svg, label) {
  const box = el("figure", { class: "svg" }, el("figcaption", {}, label));
  const holder = el("div");
  holder.innerHTML = svg; // server-rendered SVG, node texts escaped there (graphtx/serve/svg.py)
  box.append(holder);
  return box;
}

function hitItem(hit, query) {
  const matches = foundPhrases(hit.explanation);
  const title = el("a", { class: "doc-link", href: `/view/${encodeURIComponent(hit.doc_id)}` }, hit.title || hit.doc_id);
  const external = hit.link ? el("a", { class: "external", href: hit.link, rel: "noopener noreferrer", target: "_blank" }, "register ↗") : null;
  const why = hit.explanation
    ? el("div", { class: "why" }, claimChart(hit.explanation), chartCsv(hit), signals(hit.ranker_explanation))
    : el("div", { class: "why pending" }, "claim chart coming…");  // the hit list comes first, its explanations after
  const item = el("li", { class: "hit", value: hit.rank, "data-doc": hit.doc_id },
    el("h3", {}, title),
    el("p", { class: "ids" }, el("code", {}, hit.doc_id), ` · score ${hit.score.toFixed(4)} `, external),
    facts(hit),
    clipped("abstract", hit.abstract, matches),
    clipped("claim", hit.first_claim, matches),
    why);
  if (hit.explanation && query) {  // both graphs drawn on demand: fetched when opened
    const graphs = el("details", { class: "graphs" }, el("summary", {}, "graphs: query and hit, matched features shaded"));
    const pair = el("div", { class: "pair" }, "drawing…");
    graphs.append(pair);
    graphs.addEventListener("toggle", async () => {
      if (!graphs.open || graphs.dataset.loaded) return;
      graphs.dataset.loaded = "1";
      try {
        const data = await call("POST", "/explain", { ...query, doc_ids: [hit.doc_id], svg: true });
        const svg = (data.explanations[0] || {}).svg || {};
        pair.textContent = "";
        pair.append(svgBox(svg.query, "query"), svgBox(svg.hit, hit.doc_id));
      } catch (err) {
        pair.textContent = `graphs not drawn: ${err.message}`;
        delete graphs.dataset.loaded;
      }
    });
    item.append(graphs);
  }
  return item;
}

// the query part of a /search body (text or id), for the /explain requests of its hits
function queryOf(body) {
  return body.id !== undefined ? { id: body.id } : { text: body.text };
}

// explanations of a results page, fetched after its hit list is shown: each hit redrawn with its claim chart
async function explainPage(body, search) {
  const { k, offset, ...rest } = body;
  try {
    const data = { explanations: [] };
    for (let at = 0; at < k; at += explainLimit) {  // in as many requests as the service's limit asks
      const part = await call("POST", "/explain", { ...rest, k: Math.min(explainLimit, k - at), offset: offset + at });
      data.explanations.push(...part.explanations);
      if (part.explanations.length < Math.min(explainLimit, k - at)) break;
    }
    if (current !== search) return;  // another search started meanwhile
    for (const hit of data.explanations) {
      const old = $("#results").querySelector(`li.hit[data-doc="${CSS.escape(hit.doc_id)}"]`);
      if (old) old.replaceWith(hitItem(hit, queryOf(body)));
    }
    $("#results").querySelectorAll(".why.pending").forEach((box) => { box.textContent = "no claim chart for this hit"; box.classList.remove("pending"); });
    const exports = $("#exports");
    exports.textContent = "";
    exports.append(hitsCsv(data.explanations), " · ", el("a", { href: "#", id: "print" }, "print this page"));
    $("#print").addEventListener("click", (event) => { event.preventDefault(); window.print(); });
    exports.hidden = false;
  } catch (err) {
    $("#results").querySelectorAll(".why.pending").forEach((box) => { box.textContent = `claim chart not available: ${err.message}`; box.classList.remove("pending"); });
  }
}

// --- views -----------------------------------------------------------------------------

let current = null; // {state, offset}

async function runSearch(state, offset, push = true) {
  if (!state.q) {
    say("Type claim text or a patent id.", "error");
    return;
  }
  const search = { state, offset };  // this search: answers that come back after another one started are dropped
  current = search;
  try { sessionStorage.setItem("graphtx.query", state.q); } catch (err) { /* storage off: the document page marks nothing */ }
  if (push) {
    const params = new URLSearchParams(Object.entries({ ...state, offset: offset ? String(offset) : "" }).filter(([, v]) => v));
    history.pushState({}, "", `/?${params}`);
  }
  showView("search");
  say("Searching…");
  $("#results").textContent = "";
  $("#print-query").textContent = `Query: ${state.q}` + (filtersOf(state) ? ` · filters: ${filtersOf(state)}` : "");  // shown in print only
  $("#exports").hidden = true;
  $("#pager").hidden = true;
  $("#search-button").disabled = true;
  try {
    const started = performance.now();
    const body = searchBody(state, offset);
    const data = await call("POST", "/search", body);
    if (current !== search) return;  // a newer search owns the page
    const list = $("#results");
    list.start = offset + 1;
    data.hits.forEach((hit) => list.append(hitItem(hit)));
    list.dataset.ms = String(Math.round(performance.now() - started));  // request to hit list shown (the browser test reads it)
    if (data.hits.length) explainPage(body, search);
    const what = data.query.source === "id" ? `documents like ${data.query.doc_id}` : "the claim text";
    say(data.hits.length ? `Hits ${offset + 1}–${offset + data.hits.length} for ${what} (${data.ranker} ranker, ${Math.round(data.timings_ms.total)} ms)` : `No hits for ${what}${offset ? " on this page" : ""}.`);
    (data.warnings || []).forEach((w) => $("#message").append(el("span", { class: "warning" }, ` · warning: ${w}`)));
    const active = filtersText(data.filters);
    if (active) $("#message").append(el("span", { class: "filters" }, ` · filters: ${active}`));
    if (data.note) $("#message").append(el("span", { class: "note" }, ` · note: ${data.note}`));
    $("#pager").hidden = !(offset > 0 || data.hits.length === PAGE_SIZE);
    $("#prev").disabled = offset === 0;
    $("#next").disabled = data.hits.length < PAGE_SIZE;
    $("#page-label").textContent = `page ${Math.floor(offset / PAGE_SIZE) + 1}`;
  } catch (err) {
    const suggestions = (err.data && err.data.suggestions) || [];
    // the API's message ends with its own "; did you mean ...?" for other clients: the page offers links instead
    const box = el("span", {}, suggestions.length ? err.message.replace(/; did you mean [^?]*\?$/, ".") : err.message);
    if (suggestions.length) {
      box.append(" Did you mean ", ...suggestions.map((s, i) => {
        const link = el("a", { href: "#" }, s);
        link.addEventListener("click", (event) => {
          event.preventDefault();
          setForm({ ...state, q: s });
          runSearch({ ...state, q: s }, 0);
        });
        return [i ? ", " : "", link];
      }).flat(), "?");
    }
    say(box, "error");
  } finally {
    if (current === search) $("#search-button").disabled = false;
  }
}

// the filters of the form, in words, for the printed page
function filtersOf(state) {
  return [["before", "published before"], ["cpc", "CPC"], ["ipc", "IPC"], ["country", "country"], ["kind", "kind"]]
    .filter(([name]) => state[name]).map(([name, label]) => `${label} ${state[name]}`)
    .concat(state.exclude_family ? ["family of the query left out"] : []).join(", ");
}

// The filters in force and how many documents pass them, as the CLI's "filters:" line says it (graphtx/index/report.py).
function filtersText(filters) {
  if (!filters) return "";
  const parts = filters.before ? [`published before ${filters.before}`] : [];
  for (const [name, label] of [["cpc", "CPC"], ["ipc", "IPC"], ["country", "country"], ["kind", "kind"]]) {
    if (filters[name] && filters[name].length) parts.push(`${label} ${filters[name].join(" ")}`);
  }
  if (filters.exclude_family) parts.push("family of the query left out");
  if (filters.group_by_family) parts.push("one hit per family");
  let text = parts.join(", ");
  if (filters.passing !== undefined && filters.passing !== null) {
    text += `: ${filters.passing.toLocaleString()} of ${indexCount === null ? "?" : indexCount.toLocaleString()} documents pass`;
  }
  const unfilled = (filters.unfilled || []).map((name) => name.toUpperCase()).join(" and ");
  if (unfilled) text += ` (no document of this index has ${unfilled} codes: the filter can match nothing here)`;
  return text;
}

// --- the whole document ---------------------------------------------------------------

const STOP = new Set(("a an and are as at be by for from has have in is it its of on or said that the this to was were which with wherein " +
  "comprising comprises comprise including includes having along least one plurality configured each first second").split(" "));

function stem(word) {
  return word.length > 3 && word.endsWith("s") && !word.endsWith("ss") ? word.slice(0, -1) : word;
}

// the words of a query worth marking in a document (as graphtx/index/display.py's query_terms)
function queryTerms(text) {
  return new Set((text.match(/[A-Za-z][A-Za-z0-9-]{2,}/g) || []).map((w) => w.toLowerCase()).filter((w) => !STOP.has(w)).map(stem));
}

// text as nodes, each word of `terms` in a <mark>
function marked(text, terms) {
  if (!terms.size) return [text];
  const out = [];
  let last = 0;
  for (const m of text.matchAll(/[A-Za-z][A-Za-z0-9-]{2,}/g)) {
    if (!terms.has(stem(m[0].toLowerCase()))) continue;
    out.push(text.slice(last, m.index), el("mark", {}, m[0]));
    last = m.index + m[0].length;
  }
  out.push(text.slice(last));
  return out;
}

function claimsSection(doc, terms) {
  if (doc.claims && doc.claims.length) {
    const independent = doc.claims.filter((c) => c.independent).map((c) => c.number);
    return el("section", { class: "claims" }, el("h3", {}, `Claims (${doc.claims.length}; independent: ${independent.join(", ") || "none marked"})`),
      el("ol", { class: "claims" }, doc.claims.map((c) => el("li", { value: c.number, class: c.independent ? "independent" : "dependent" },
        c.independent ? el("span", { class: "badge" }, "independent") : null, " ", ...marked(c.text, terms)))));
  }
  return doc.first_claim ? el("section", {}, el("h3", {}, "First claim"), el("p", { class: "text" }, ...marked(doc.first_claim, terms)),
    el("p", { class: "note" }, "Only the first claim is in this index (built without its corpus, or before every claim was kept: rebuild it to see them all).")) : null;
}

function citationsSection(title, docs) {
  if (!docs) return null;
  return el("section", { class: "citations" }, el("h3", {}, title), docs.length
    ? el("ul", {}, docs.map((d) => el("li", {}, el("a", { class: "doc-link", href: `/view/${encodeURIComponent(d.doc_id)}` }, d.doc_id), d.title ? ` · ${d.title}` : "")))
    : el("p", { class: "note" }, "none"));
}

// --- export ----------------------------------------------------------------------------

function csvCell(value) {
  let text = value === null || value === undefined ? "" : String(value);
  if (typeof value === "string" && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;  // a spreadsheet must not run a cell as a formula
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

function csvLink(label, name, header, rows) {
  const csv = "\uFEFF" + [header, ...rows].map((row) => row.map(csvCell).join(",")).join("\n") + "\n";  // BOM: spreadsheets read UTF-8
  return el("a", { class: "export", download: name, href: `data:text/csv;charset=utf-8,${encodeURIComponent(csv)}` }, label);
}

// the page's hits, with what each hit's claim chart found, as CSV
function hitsCsv(hits) {
  return csvLink("hits as CSV", "graphtx-hits.csv", ["rank", "doc_id", "score", "title", "date", "features_found", "features", "not_found"],
    hits.map((h) => {
      const elements = (h.explanation && h.explanation.elements) || [];
      return [h.rank, h.doc_id, h.score, h.title, h.date, elements.filter((e) => e.found).length, elements.length,
        elements.filter((e) => !e.found).map((e) => e.number).join(" ")];
    }));
}

// one hit's claim chart as CSV
function chartCsv(hit) {
  const elements = (hit.explanation && hit.explanation.elements) || [];
  return csvLink("claim chart as CSV", `graphtx-claim-chart-${hit.doc_id}.csv`, ["feature", "query_feature", "hit_feature", "similarity", "found", "confidence"],
    elements.map((e) => [e.number, e.text, e.hit_text, e.similarity, e.found || "not found", e.confidence]));
}

async function showDocument(docId) {
  showView("document");
  const box = $("#document");
  box.textContent = "Loading…";
  try {
    const doc = await call("GET", `/documents/${encodeURIComponent(docId)}?svg=true`);
    let last = current && current.state ? current.state.q : "";
    if (!last) {
      try { last = sessionStorage.getItem("graphtx.query") || ""; } catch (err) { last = ""; }  // survives opening the page; storage may be off
    }
    const query = last && !ID_LIKE.test(last) ? last : "";
    const terms = queryTerms(query);  // the last claim-text query's words, marked in the document
    box.textContent = "";
    const similar = el("button", { type: "button", id: "similar" }, "find documents like this one");
    similar.addEventListener("click", () => {
      const state = { q: doc.doc_id };
      setForm(state);
      runSearch(state, 0);
    });
    box.append(
      el("h2", {}, doc.title || doc.doc_id),
      el("p", { class: "ids" }, el("code", {}, doc.doc_id), " ", doc.link ? el("a", { class: "external", href: doc.link, rel: "noopener noreferrer", target: "_blank" }, "register ↗") : null),
      facts(doc),
      doc.abstract ? el("section", {}, el("h3", {}, "Abstract"), el("p", { class: "text" }, ...marked(doc.abstract, terms))) : null,
      claimsSection(doc, terms),
      doc.description ? el("details", { class: "description" }, el("summary", {}, `Description (${doc.description.length.toLocaleString()} characters${terms.size ? ", the query's words marked" : ""})`),
        ...doc.description.split(/\n+/).filter((para) => para.trim()).map((para) => el("p", { class: "text" }, ...marked(para, terms)))) : null,
      citationsSection("Cites (in this index)", doc.cited),
      citationsSection("Cited by (in this index)", doc.citing),
      similar,
      doc.svg ? el("section", {}, el("h3", {}, "Invention graph"), svgBox(doc.svg, `${doc.graph ? doc.graph.kind : ""} graph`)) : null);
    document.title = `${doc.doc_id} · graphtx`;
  } catch (err) {
    box.textContent = err.message;
  }
}

function showView(name) {
  $("#search-view").hidden = name !== "search";
  $("#document-view").hidden = name !== "document";
}

function route(push = false) {
  const path = window.location.pathname;
  if (path.startsWith("/view/")) {
    showDocument(decodeURIComponent(path.slice("/view/".length)));
    return;
  }
  const params = new URLSearchParams(window.location.search);
  const state = Object.fromEntries(params.entries());
  setForm(state);
  showView("search");
  if (state.q) runSearch(state, Number(state.offset || 0), push);
}

async function init() {
  $("#search-form").addEventListener("submit", (event) => {
    event.preventDefault();
    runSearch(formState(), 0);
  });
  $("#next").addEventListener("click", () => current && runSearch(current.state, current.offset + PAGE_SIZE));
  $("#prev").addEventListener("click", () => current && runSearch(current.state, Math.max(0, current.offset - PAGE_SIZE)));
  $("#back").addEventListener("click", (event) => {
    if (history.length > 1 && document.referrer.startsWith(window.location.origin)) {
      event.preventDefault();
      history.back();
    }
  });
  window.addEventListener("popstate", () => route(false));
  try {
    const health = await call("GET", "/healthz");
    indexCount = health.count;
    if (health.max_explain_hits) explainLimit = Math.max(1, Math.min(PAGE_SIZE, health.max_explain_hits));
    $("#status").textContent = `${health.count.toLocaleString()} documents · ${health.ranker} ranker`;
    const offered = new Set(health.rankers || []);
    $("#f-ranker").querySelectorAll("option").forEach((option) => {
      if (option.value && offered.size && !offered.has(option.value)) option.remove();  // e.g. learned on an index without a fitted ranker
    });
  } catch (err) {
    $("#status").textContent = "service not answering";
  }
  route(false);
}

document.addEventListener("DOMContentLoaded", init);
