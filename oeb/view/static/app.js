// oeb view: every page drawn from the JSON API. Values from runs, golds and schemas are put in the page
// as text only (textContent, text nodes, attributes set one by one), never parsed as markup.
"use strict";

const CONF = document.body.dataset;
const ROOT = CONF.root;
const STATIC = CONF.mode === "static"; // an export: the API as JSON files, pages as .html files
const SCALE = Number(CONF.scale); // pixels of a rendered page per PDF point
const KINDS = ["matched", "misread", "unfound", "fabricated", "invented_item", "invented_field"];
const ERRORS = KINDS.slice(1);
const params = new URLSearchParams(location.search);
const main = document.getElementById("main");
let RUNS = [];

// -- building the page ---------------------------------------------------------------------------

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

function svg(tag, attrs, text) {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

function percent(value) {
  return value === null || value === undefined ? "–" : (100 * value).toFixed(1);
}

function shown(value) {
  // a JSON value as a reader sees it: strings bare, everything else as JSON, null as an empty cell
  if (value === null || value === undefined) return "";
  return typeof value === "string" ? value : JSON.stringify(value);
}

function query(values) {
  const q = new URLSearchParams();
  for (const [key, value] of Object.entries(values)) if (value !== null && value !== undefined && value !== "") q.set(key, value);
  const text = q.toString();
  return text ? "?" + text : "";
}

// -- where things are: the server's routes, or an export's files ---------------------------------

function runIndex(label) {
  // a run's short name, or its label as `oeb report` prints it (the slices page links by that), or its folder's name
  const index = RUNS.findIndex((run) => run.label === label || run.report_label === label ||
    run.folder.replace(/\/+$/, "").split("/").pop() === label);
  if (index < 0) throw new Error(`no run labelled ${JSON.stringify(label)}`);
  return index;
}

function runLabel(given) {
  // the run's short name, however the URL names it: the menus, headings and links then agree
  return RUNS[runIndex(given || RUNS[0].label)].label;
}

function suites() {
  return RUNS.length ? Object.keys(RUNS[0].per_suite || {}) : [];
}

const api = {
  runs: () => (STATIC ? "api/runs.json" : "api/runs"),
  gold: () => (STATIC ? "api/gold.json" : "api/gold"),
  fields: (run, suite) =>
    STATIC
      ? `api/runs/${runIndex(run)}/` + (suite ? `fields/${suites().indexOf(suite)}.json` : "fields.json")
      : "api/fields" + query({ run, suite }),
  documents: (run) =>
    STATIC ? `api/runs/${runIndex(run)}/documents.json` : "api/documents" + query({ run }),
  document: (run, doc, values) =>
    // values: the server's filters and slice; an export has only each slice in order, at its offset
    STATIC
      ? `api/runs/${runIndex(run)}/documents/${encodeURIComponent(doc)}` + (values && values.offset ? `/${values.offset}.json` : ".json")
      : `api/documents/${encodeURIComponent(doc)}` + query({ run, ...(values || {}) }),
  verdict: (run, doc, n) =>
    STATIC
      ? `api/runs/${runIndex(run)}/verdicts/${encodeURIComponent(doc)}/${n}.json`
      : `api/verdicts/${encodeURIComponent(doc)}` + query({ run, n }),
  boxes: (run, doc, page, offset) =>
    STATIC
      ? `api/runs/${runIndex(run)}/boxes/${encodeURIComponent(doc)}/${page}` + (offset ? `/${offset}.json` : ".json")
      : `api/boxes/${encodeURIComponent(doc)}` + query({ run, page, offset: offset || null }),
  schema: (run, doc) =>
    STATIC
      ? `api/runs/${runIndex(run)}/schema/${encodeURIComponent(doc)}.json`
      : `api/schema/${encodeURIComponent(doc)}` + query({ run }),
  audit: () => (STATIC ? "api/audit.json" : "api/audit"),
};

function pageImage(doc, page) {
  // a screen of more device pixels than CSS pixels (devicePixelRatio 2) asks for as many times more, in
  // quarter steps up to three; the server lowers it for a page past its pixel guard. An export has one size.
  const url = `${ROOT}pages/${encodeURIComponent(doc)}/${page}.png`;
  const ratio = Math.min(Math.round(Math.max(window.devicePixelRatio || 1, 1) * 4) / 4, 3);
  return STATIC || ratio === 1 ? url : `${url}?scale=${+(SCALE * ratio).toFixed(2)}`;
}

function link(view, values) {
  const { doc, ...rest } = values || {};
  const ext = STATIC ? ".html" : "";
  if (view === "board") return ROOT + (STATIC ? "index.html" : "./");
  if (view === "documents" || view === "schema") return `${ROOT}${view}/${encodeURIComponent(doc)}${ext}${query(rest)}`;
  if (view === "document_list") return `${ROOT}documents${ext}${query(rest)}`;
  return `${ROOT}${view}${ext}${query(rest)}`;
}

async function getJSON(path) {
  const response = await fetch(ROOT + path);
  let body = null;
  try {
    body = await response.json();
  } catch (error) {
    body = null;
  }
  if (!response.ok) throw new Error((body && body.error) || `${response.status} ${response.statusText}: ${path}`);
  return body;
}

function show(...nodes) {
  main.replaceChildren(...nodes.filter((node) => node !== null && node !== undefined));
}

function fail(error) {
  document.title = "oeb view: not found";
  show(el("h1", {}, "Not found"), el("p", { class: "error", role: "alert" }, error.message || String(error)),
       el("p", {}, el("a", { href: link("board") }, "Back to the leaderboard")));
}

function nav(current) {
  const items = [["board", "Leaderboard"], ["fields", "Fields"], ["document_list", "Documents"], ...(globalThis.OEB_NAV || [])];
  if (CONF.audit) items.push(["audit", "Gold audit"]);
  const run = params.get("run");
  document.getElementById("nav").replaceChildren(
    ...items.map(([view, name]) =>
      el("a", { href: link(view, view !== "board" && view !== "audit" && run ? { run } : {}), "aria-current": view === current ? "page" : null }, name))
  );
}

function runSelect(name, chosen, choices, onchange) {
  const select = el("select", { id: name, name, onchange: (event) => onchange(event.target.value) },
    choices.map(([value, text]) => el("option", { value, selected: value === chosen }, text)));
  return el("label", { for: name }, name + " ", select);
}

function navigate(view, values) {
  location.href = link(view, values);
}

// -- the leaderboard -----------------------------------------------------------------------------

function cost(row) {
  const usd = row.cost && row.cost.usd;
  if (usd && usd.per_doc !== null) return { value: usd.per_doc, unit: "$" };
  const credits = row.cost && row.cost.credits;
  if (credits && credits.per_doc !== null) return { value: credits.per_doc, unit: "credits" };
  return null;
}

function seconds(value) {
  return value === null || value === undefined ? "–" : value.toFixed(2) + " s";
}

function boardTable() {
  // docs/grounding.md: each shown when some run has its figure; n/a on a run without it
  const grounded = [["grounding_f1", "grounding F1"], ["auto_99", "auto@99%"]].filter(([key]) => RUNS.some((run) => key in run));
  const head = ["system", "headline", "accuracy", "misread", "unfound", "fabricated", "inv. item", "inv. field",
    "coverage", "documents", "cost/doc", "cost/1k pages", "accuracy 95% CI", "latency p50", "latency p95",
    ...grounded.map(([, name]) => name)];
  const rows = RUNS.map((run) => {
    const price = cost(run);
    const usd = run.cost && run.cost.usd;
    return el("tr", {},
      el("th", { scope: "row", title: run.setting }, el("a", { href: link("fields", { run: run.label }) }, run.label),
        " ", el("a", { class: "small", href: link("document_list", { run: run.label }) }, "documents")),
      el("td", {}, percent(run.headline)), el("td", {}, percent(run.accuracy)),
      ERRORS.map((kind) => el("td", {}, percent(run[kind]))),
      el("td", {}, percent(run.coverage)), el("td", {}, `${run.scored}/${run.documents}`),
      el("td", {}, price ? (price.unit === "$" ? "$" + price.value.toFixed(4) : price.value.toFixed(2) + " credits") : "–"),
      el("td", {}, usd && usd.per_1k_pages !== null ? "$" + usd.per_1k_pages.toFixed(2) : "–"),
      el("td", {}, run.ci95 ? `${percent(run.ci95[0])}–${percent(run.ci95[1])}` : "–"),
      el("td", {}, seconds(run.latency_p50_s)), el("td", {}, seconds(run.latency_p95_s)),
      grounded.map(([key]) => el("td", {}, run[key] == null ? "n/a" : percent(run[key]))));
  });
  return el("table", { class: "numbers", id: "leaderboard" },
    el("thead", {}, el("tr", {}, head.map((name) => el("th", { scope: "col" }, name)))), el("tbody", {}, rows));
}

function headlineInterval(run) {
  // the accuracy's 95% interval times the coverage (known exactly): the headline's, coverage given
  return run.ci95 ? run.ci95.map((end) => end * run.coverage) : null;
}

function chart() {
  // cost per document against the headline, one point per system, its 95% interval as a whisker
  const width = 640, height = 360, left = 60, right = 20, top = 24, bottom = 50;
  const points = RUNS.map((run) => ({ run, price: cost(run), interval: headlineInterval(run) }))
    .filter((p) => p.run.headline !== null);
  const priced = points.filter((p) => p.price);
  const unit = priced.length ? priced[0].price.unit : "$";
  const maxCost = Math.max(...priced.map((p) => p.price.value), 0) * 1.15 || 1;
  const lows = points.map((p) => (p.interval ? p.interval[0] : p.run.headline));
  const highs = points.map((p) => (p.interval ? p.interval[1] : p.run.headline));
  const yMin = Math.max(0, Math.min(...lows, 1) - 0.05), yMax = Math.min(1, Math.max(...highs, 0) + 0.05);
  const x = (value) => left + (value / maxCost) * (width - left - right);
  const y = (value) => top + (1 - (value - yMin) / (yMax - yMin || 1)) * (height - top - bottom);
  const plot = svg("svg", { viewBox: `0 0 ${width} ${height}`, width, height, role: "img", id: "chart",
    "aria-label": "cost per document against the headline, one point per system with its 95% interval" });
  plot.append(svg("line", { x1: left, y1: height - bottom, x2: width - right, y2: height - bottom, class: "axis" }));
  plot.append(svg("line", { x1: left, y1: top, x2: left, y2: height - bottom, class: "axis" }));
  for (let step = 0; step <= 4; step++) {
    const accuracy = yMin + ((yMax - yMin) * step) / 4;
    plot.append(svg("text", { x: left - 6, y: y(accuracy) + 4, "text-anchor": "end", class: "tick" }, percent(accuracy)));
    const price = (maxCost * step) / 4;
    plot.append(svg("text", { x: x(price), y: height - bottom + 16, "text-anchor": "middle", class: "tick" },
      unit === "$" ? "$" + price.toFixed(3) : price.toFixed(2)));
  }
  plot.append(svg("text", { x: (left + width) / 2, y: height - 8, "text-anchor": "middle" },
    unit === "$" ? "cost per document (USD)" : "cost per document (credits)"));
  plot.append(svg("text", { x: 14, y: (top + height - bottom) / 2, transform: `rotate(-90 14 ${(top + height - bottom) / 2})`,
    "text-anchor": "middle" }, "headline (%)"));
  for (const { run, price, interval } of points) {
    const cx = x(price && price.unit === unit ? price.value : 0);
    const group = svg("g", { class: price ? "point" : "point unpriced" });
    group.append(svg("title", {}, `${run.label}: headline ${percent(run.headline)}%` + (price ? `, ${price.value} ${price.unit} per document` : ", no cost reported")));
    if (interval) {
      group.append(svg("line", { x1: cx, x2: cx, y1: y(interval[0]), y2: y(interval[1]), class: "whisker" }));
      for (const end of interval) group.append(svg("line", { x1: cx - 5, x2: cx + 5, y1: y(end), y2: y(end), class: "whisker" }));
    }
    group.append(svg("circle", { cx, cy: y(run.headline), r: 5 }));
    const label = svg("text", { x: cx + 8, y: Math.max(12, y(run.headline) - 8), class: "label" }, run.label);
    group.append(label);
    plot.append(group);
  }
  const unpriced = points.filter((p) => !p.price).map((p) => p.run.label);
  const figure = el("figure", {}, plot, el("figcaption", {},
    "Cost per document against the headline (accuracy × coverage); whiskers: the 95% bootstrap interval of accuracy times the coverage." +
    (unpriced.length ? ` No cost reported (drawn at 0): ${unpriced.join(", ")}.` : "")));
  requestAnimationFrame(() => fitLabels(plot, width));
  return figure;
}

function fitLabels(plot, width) {
  // a label running past the right edge goes left of its point; one still too long is shortened
  // with "…" (its point's tooltip has it whole)
  for (const label of plot.querySelectorAll("text.label")) {
    const x = Number(label.getAttribute("x"));
    if (x + label.getComputedTextLength() <= width - 2) continue;
    label.setAttribute("x", x - 16);
    label.setAttribute("text-anchor", "end");
    const full = label.textContent;
    while (label.textContent.length > 1 && x - 16 - label.getComputedTextLength() < 2) {
      label.textContent = full.slice(0, label.textContent.length - 2) + "…";
    }
  }
}

function suiteTable() {
  const names = suites();
  return el("table", { class: "numbers", id: "suites" },
    el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "system"), names.map((s) => el("th", { scope: "col" }, s)))),
    el("tbody", {}, RUNS.map((run) => el("tr", {}, el("th", { scope: "row" }, run.label),
      names.map((suite) => {
        const m = run.per_suite[suite];
        return el("td", {}, el("a", { href: link("fields", { run: run.label, suite }) }, `${percent(m.accuracy)} (${m.scored}/${m.documents})`));
      })))));
}

function goldLines(said) {
  // what `oeb report` prints under its leaderboard: the gold used, its error (per suite, indented), the
  // ranks within its noise
  return el("div", { class: "note gold", id: "gold" }, said.lines.map((line) =>
    el("div", { class: line.startsWith("  ") ? "suite" : null }, line.trim())));
}

async function board() {
  document.title = "oeb view: leaderboard";
  const said = await getJSON(api.gold());
  show(el("h1", {}, "Leaderboard"),
    el("p", { class: "note" }, "Percent; accuracy and the five error shares are per-document means over scored documents; headline = accuracy × coverage; latency: the median and 95th percentile of a document's wall time. A system opens its fields."),
    goldLines(said), boardTable(), el("h2", {}, "Cost against the headline"), chart(), el("h2", {}, "Accuracy per suite"), suiteTable());
}

// -- fields --------------------------------------------------------------------------------------

function moveFocus(event, selector) {
  // arrow keys move through the rows of a list; Enter opens the row
  if (event.key !== "ArrowDown" && event.key !== "ArrowUp") return false;
  const rows = [...document.querySelectorAll(selector)].filter((row) => !row.hidden);
  const at = rows.indexOf(event.currentTarget);
  const next = rows[at + (event.key === "ArrowDown" ? 1 : -1)];
  if (next) next.focus();
  event.preventDefault();
  return true;
}

async function fields() {
  const run = runLabel(params.get("run"));
  const suite = params.get("suite") || "";
  if (suite && !suites().includes(suite)) throw new Error(`no suite ${JSON.stringify(suite)}`);
  document.title = `oeb view: fields of ${run}`;
  const rows = await getJSON(params.get("trait") ? globalThis.OEB_SLICE_FIELDS(run) : api.fields(run, suite));
  let sort = { key: "accuracy", up: true };
  const failing = el("section", { id: "failing", "aria-live": "polite" });
  const body = el("tbody", {});
  const columns = [["path", "field"], ...KINDS.map((k) => [k, k.replace("invented_", "inv. ")]), ["total", "total"],
    ["accuracy", "accuracy"], ["documents", "documents"]];
  const value = (row, key) => (KINDS.includes(key) ? row.counts[key] : row[key]);
  function open(row) {
    failing.replaceChildren(el("h2", {}, `Documents where ${row.path} fails (${row.failing.length})`),
      row.failing.length
        ? el("ul", { class: "documents" }, row.failing.map((doc) =>
            el("li", {}, el("a", { href: link("documents", { doc, run, field: row.path }) }, doc))))
        : el("p", { class: "note" }, "Every value of this field is matched."));
    const first = failing.querySelector("a");
    if (first) first.focus();
  }
  function draw() {
    const sorted = [...rows].sort((a, b) => {
      const va = value(a, sort.key), vb = value(b, sort.key);
      const order = va === vb ? 0 : va === null ? 1 : vb === null ? -1 : va < vb ? -1 : 1;
      return sort.up ? order : -order;
    });
    body.replaceChildren(...sorted.map((row) =>
      el("tr", { tabindex: 0, class: "field", onclick: () => open(row),
        onkeydown: (event) => { if (!moveFocus(event, "tr.field") && event.key === "Enter") open(row); } },
        el("th", { scope: "row" }, row.path), KINDS.map((k) => el("td", {}, String(row.counts[k]))),
        el("td", {}, String(row.total)), el("td", {}, percent(row.accuracy)), el("td", {}, String(row.documents)))));
  }
  const head = el("tr", {}, columns.map(([key, name]) => el("th", { scope: "col" },
    el("button", { type: "button", onclick: () => { sort = { key, up: sort.key === key ? !sort.up : key !== "path" ? key === "accuracy" : true }; draw(); } }, name))));
  draw();
  show(el("h1", {}, `Fields of ${run}` + (params.get("trait") ? ` on ${params.get("trait")}=${params.get("value")}` : "")),
    el("div", { class: "controls" },
      runSelect("run", run, RUNS.map((r) => [r.label, r.label]), (chosen) => navigate("fields", { run: chosen, suite })),
      runSelect("suite", suite, [["", "every suite"], ...suites().map((s) => [s, s])], (chosen) => navigate("fields", { run, suite: chosen }))),
    el("p", { class: "note" }, "One row per schema field, array items folded ([]), worst accuracy first; a heading sorts, a row (Enter) lists the documents where the field fails."),
    el("table", { class: "numbers", id: "fields" }, el("thead", {}, head), body), failing);
}

// -- a document's schema -------------------------------------------------------------------------

function schemaView(answer, doc, run) {
  const counts = answer.counts;
  function under(path) {
    const total = {};
    for (const [key, kinds] of Object.entries(counts)) {
      if (path === "" || key === path || key.startsWith(path + ".") || key.startsWith(path + "[]")) {
        for (const [kind, n] of Object.entries(kinds)) total[kind] = (total[kind] || 0) + n;
      }
    }
    return total;
  }
  function badges(total) {
    return el("span", { class: "badges" }, Object.entries(total).map(([kind, n]) => el("span", { class: `kind ${kind}` }, `${kind} ${n}`)));
  }
  function node(schema, name, path) {
    const type = schema && (Array.isArray(schema.type) ? schema.type.join(" | ") : schema.type || (schema.$ref ? schema.$ref : ""));
    const children = [];
    const branches = schema ? [schema, ...(schema.anyOf || []), ...(schema.oneOf || []), ...(schema.allOf || [])] : [];
    for (const branch of branches) {
      for (const [key, child] of Object.entries((branch && branch.properties) || {})) children.push(node(child, key, path ? `${path}.${key}` : key));
      if (branch && branch.items && typeof branch.items === "object") children.push(node(branch.items, "[]", path + "[]"));
    }
    const total = under(path);
    const description = schema && typeof schema.description === "string" ? schema.description : "";
    const named = Object.keys(total).length && path
      ? el("a", { class: "name", href: link("documents", { doc, run, field: path }) }, name)
      : el("span", { class: "name" }, name);
    const item = el("li", { id: "node-" + path }, named, " ", el("span", { class: "type" }, type), " ", badges(total),
      description ? el("div", { class: "description" }, description) : null);
    if (children.length) item.append(el("ul", {}, children));
    return item;
  }
  return el("ul", { class: "tree", id: "schema-tree" }, node(answer.schema, "(document)", ""));
}

async function schema() {
  const doc = CONF.doc;
  const run = runLabel(params.get("run"));
  document.title = `oeb view: schema of ${doc}`;
  const answer = await getJSON(api.schema(run, doc));
  show(el("h1", {}, `Schema of ${doc}`),
    el("p", { class: "note" }, `Verdicts of ${run} per node (a node counts everything under it) · `,
      el("a", { href: link("documents", { doc, run }) }, "the document's verdicts")),
    schemaView(answer, doc, run));
}

// -- the gold audit ------------------------------------------------------------------------------

async function audit() {
  document.title = "oeb view: gold audit";
  const findings = await getJSON(api.audit());
  const run = RUNS[0].label;
  const head = ["document", "address", "kind", "gold", "consensus", "agree", "systems", "note"];
  show(el("h1", {}, "Gold audit"),
    el("p", { class: "note" }, `${findings.length} finding(s): places where the gold may be wrong. Check each against the PDF; a document opens its verdicts.`),
    el("table", { id: "audit" }, el("thead", {}, el("tr", {}, head.map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, findings.map((f) => el("tr", {},
        el("td", {}, el("a", { href: link("documents", { doc: f.doc_id, run }) }, f.doc_id)),
        el("td", {}, f.address), el("td", {}, f.kind), el("td", {}, el("div", { class: "value" }, shown(f.gold))),
        el("td", {}, el("div", { class: "value" }, shown(f.consensus))), el("td", {}, `${f.agree}/${f.of}`),
        el("td", {}, f.systems.join(", ")), el("td", {}, f.note))))));
}

// -- start ---------------------------------------------------------------------------------------

const VIEWS = { board, fields, document_list: documentList, documents: documentView, schema, audit, ...(globalThis.OEB_VIEWS || {}) };

async function start() {
  nav(CONF.view);
  if (CONF.view === "notfound") throw new Error(CONF.message);
  RUNS = await getJSON(api.runs());
  await VIEWS[CONF.view]();
}

start().catch(fail);
