// oeb view: the documents list and one document's verdicts beside its pages (loaded before app.js,
// which holds the helpers these use and starts the page). Values are put in the page as text only.
"use strict";

const STATUSES = ["graded", "failed", "missing"];
const ZOOMS = [["fit", "fit width"], ["1", "100%"], ["2", "200%"]];
const POINT = 96 / 72; // CSS pixels per PDF point at 100%

function errorText(error) {
  // scores.jsonl keeps a document's error as its line of text; a record keeps it as an object
  return typeof error === "string" ? error : error.message || JSON.stringify(error);
}

// -- every document of a run ---------------------------------------------------------------------

async function documentList() {
  const run = runLabel(params.get("run"));
  document.title = `oeb view: documents of ${run}`;
  const rows = await getJSON(api.documents(run));
  const state = { status: params.get("status") || "", suite: params.get("suite") || "", text: params.get("q") || "" };
  let sort = { key: params.get("sort") || "accuracy", up: params.get("desc") === null };
  const columns = [["doc_id", "document"], ["suite", "suite"], ["pages", "pages"], ["status", "status"],
    ["accuracy", "accuracy"], ...ERRORS.map((k) => [k, k.replace("invented_", "inv. ")]), ["matched", "matched"]];
  const value = (row, key) => (KINDS.includes(key) ? row.counts[key] : row[key]);
  const body = el("tbody", {});
  const count = el("span", { id: "count", class: "note" });
  function draw() {
    const text = state.text.toLowerCase();
    const kept = rows.filter((row) => (!state.status || row.status === state.status) &&
      (!state.suite || row.suite === state.suite) && (!text || row.doc_id.toLowerCase().includes(text)));
    kept.sort((a, b) => {
      const va = value(a, sort.key), vb = value(b, sort.key);
      const order = va === vb ? 0 : va === null || va === undefined ? 1 : vb === null || vb === undefined ? -1 : va < vb ? -1 : 1;
      return sort.up ? order : -order;
    });
    body.replaceChildren(...kept.map((row) => el("tr", { class: `doc ${row.status}`, "data-status": row.status },
      el("th", { scope: "row" }, el("a", { href: link("documents", { doc: row.doc_id, run }) }, row.doc_id)),
      el("td", {}, row.suite), el("td", {}, row.pages === null || row.pages === undefined ? "–" : String(row.pages)),
      el("td", { title: row.error ? errorText(row.error) : null },
        el("span", { class: `status ${row.status}` }, row.status)),
      el("td", {}, percent(row.accuracy)),
      ERRORS.map((kind) => el("td", {}, String(row.counts[kind]))), el("td", {}, String(row.counts.matched)))));
    count.textContent = `${kept.length} of ${rows.length} documents`;
    history.replaceState(null, "", link("document_list", { run, status: state.status, suite: state.suite, q: state.text,
      sort: sort.key, desc: sort.up ? null : "1" }));
  }
  const head = el("tr", {}, columns.map(([key, name]) => el("th", { scope: "col" },
    el("button", { type: "button", onclick: () => { sort = { key, up: sort.key === key ? !sort.up : true }; draw(); } }, name))));
  const search = el("input", { id: "q", type: "search", value: state.text, placeholder: "document id contains",
    oninput: (event) => { state.text = event.target.value; draw(); } });
  const failed = rows.filter((row) => row.status !== "graded").length;
  show(el("h1", {}, `Documents of ${run}`),
    el("div", { class: "controls" },
      runSelect("run", run, RUNS.map((r) => [r.label, r.label]), (chosen) => navigate("document_list", { run: chosen })),
      runSelect("status", state.status, [["", "every status"], ...STATUSES.map((s) => [s, s])], (chosen) => { state.status = chosen; draw(); }),
      runSelect("suite", state.suite, [["", "every suite"], ...suites().map((s) => [s, s])], (chosen) => { state.suite = chosen; draw(); }),
      el("label", { for: "q" }, "find ", search), count),
    el("p", { class: "note" }, `${rows.length} documents, ${failed} without a graded answer (failed or missing). A heading sorts; a document opens its verdicts, or its error and raw answer.`),
    el("table", { class: "numbers", id: "documents" }, el("thead", {}, head), body));
  draw();
}

// -- a document ----------------------------------------------------------------------------------

function box(page, bbox, kind, label) {
  // an outline drawn just outside the value's box, so the text it marks stays readable
  const holder = document.querySelector(`.page[data-page="${page}"]`);
  if (!holder || !bbox) return null;
  const width = Number(holder.dataset.width), height = Number(holder.dataset.height);
  const outline = el("div", { class: `box ${kind}`, title: label, "data-value": kind.split(" ")[0] });
  Object.assign(outline.style, { left: `${(100 * bbox[0]) / width}%`, top: `${(100 * bbox[1]) / height}%`,
    width: `${(100 * (bbox[2] - bbox[0])) / width}%`, height: `${(100 * (bbox[3] - bbox[1])) / height}%` });
  holder.append(outline);
  return outline;
}

function placeText(who, at, notes) {
  // one phrase saying where a value stands, or why it was not found
  if (!at) return `${who}: not looked for (no text to find)`;
  if (at.status === "found") return `${who} on page ${at.page}` + (at.others ? ` (printed ${at.others} more time(s); its row or label picks this one)` : "") + (at.ocr ? " (read by OCR)" : "");
  if (at.status === "ambiguous") return `${who} on page ${at.page}?: printed in ${at.others + 1} places, the likeliest outlined`;
  if (at.status === "not_printed") return `${who}: not printed in the document's text layer (the document does not hold it)`;
  const scans = notes.filter((n) => n.source !== "text").map((n) => n.page);
  return `${who}: not found; page(s) ${scans.join(", ")} are scans` + (notes.some((n) => n.source === "ocr") ? " read by OCR, which may have misread it" : " without a text layer, not read");
}

function keyLine(key) {
  return key === null || key === undefined ? null : el("div", { class: "canonical", title: "canonical key: what the scorer compares" }, key);
}

function schemaNode(node) {
  if (!node) return el("p", { class: "note" }, "The schema has no node for this field (an invented field).");
  return el("dl", { class: "node" }, Object.entries(node).map(([key, value]) =>
    [el("dt", {}, key), el("dd", {}, typeof value === "string" ? value : JSON.stringify(value))]));
}

function recordView(answer, label) {
  const record = answer.record;
  const parts = [el("h2", {}, `No graded answer from ${label}: ${answer.status}`)];
  if (!record) return [...parts, el("p", { class: "note" }, "The run saved no record of this document.")];
  const error = record.error ? errorText(record.error) : "none recorded";
  parts.push(el("p", { class: "error", id: "record-error" }, `error: ${error}`),
    el("p", {}, `attempts: ${record.attempts === null || record.attempts === undefined ? "–" : record.attempts}`),
    el("h3", {}, "raw answer" + (record.raw_chars > (record.raw || "").length ? ` (first ${record.raw.length} of ${record.raw_chars} characters)` : "")),
    el("pre", { class: "raw", id: "raw" }, record.raw === null ? "(none)" : record.raw));
  return parts;
}

function fieldChoices(paths, field) {
  // the document's fields; a node above them (the schema page links objects and arrays) kept as chosen
  const node = field && !paths.includes(field) ? [[field, `${field} (every field under it)`]] : [];
  return [["", "every field"], ...node, ...paths.map((p) => [p, p])];
}

const ORDERS = [["order", "as graded"], ["errors", "errors first"], ["address", "by address"]];

function valueCell(verdict, side, value) {
  // a value as listed: whole, or its first characters when too long to list (selecting loads it all)
  const cut = verdict && verdict.cut && verdict.cut[side];
  return el("div", { class: `value ${side}` }, shown(value), cut ? el("span", { class: "cut" }, ` … (${cut} characters; select the row for all)`) : null);
}

function countsText(counts) {
  const total = Object.values(counts || {}).reduce((a, b) => a + b, 0);
  return `${total} verdicts: ` + KINDS.filter((kind) => counts[kind]).map((kind) => `${counts[kind]} ${kind}`).join(", ");
}

async function documentView() {
  const doc = CONF.doc;
  const run = runLabel(params.get("run"));
  const vs = params.get("vs") ? runLabel(params.get("vs")) : "";
  const labels = vs ? [run, vs] : [run];
  document.title = `oeb view: ${doc}`;
  const state = { kind: params.get("kind") || "", field: params.get("field") || "", q: params.get("q") || "",
    sort: params.get("sort") || "order", zoom: params.get("zoom") || "fit", all: params.get("all") === "1" };
  const filters = () => ({ kind: state.kind, field: state.field, q: state.q, sort: state.sort === "order" ? "" : state.sort });
  let source = rowSource(doc, labels, filters());
  const opened = await source(0);
  const heads = opened.heads, first = heads[0];
  const pages = el("div", { class: "pages", id: "pages" });
  for (let page = 1; page <= first.pages; page++) {
    const note = (first.page_notes || []).find((n) => n.page === page) || {};
    const [width, height] = [note.width || 612, note.height || 792];
    // a scan's note stands above its page, never over the image: a value printed at the top stays seen
    if (note.note) pages.append(el("p", { class: "page-note" }, `page ${page}: ${note.note}`));
    pages.append(el("div", { class: "page", "data-page": page, "data-width": width, "data-height": height,
      style: `aspect-ratio: ${width} / ${height}` },
      el("img", { src: pageImage(doc, page), alt: `page ${page} of ${doc}`, loading: page > 2 ? "lazy" : "eager" }),
      el("span", { class: "page-number" }, `page ${page}`)));
  }
  if (!first.pages) pages.append(el("p", { class: "note" }, "No PDF pages to show for this document."));
  const status = el("p", { id: "where", class: "where", "aria-live": "polite" }, "Select a verdict to see where its values stand and why it is what it is.");
  const why = el("section", { id: "why", class: "why", "aria-live": "polite" });
  const sideNames = labels.map((_, side) => (labels.length > 1 ? ["A", "B"][side] : ""));
  const runOf = (label) => RUNS[runIndex(label)];
  function zoom(level) {
    state.zoom = level;
    pages.dataset.zoom = level;
    for (const holder of pages.querySelectorAll(".page")) {
      holder.style.width = level === "fit" ? "" : `${Number(holder.dataset.width) * POINT * Number(level)}px`;
    }
    remember();
  }
  let outlining = 0;
  async function outlineErrors() {
    // every error of every page, loaded or not: each page's boxes asked of the server, a bounded answer at a time
    const mine = ++outlining;
    document.querySelectorAll(".box.all").forEach((node) => node.remove());
    delete pages.dataset.outlined;
    if (!state.all) return;
    for (let page = 1; page <= first.pages; page++) {
      for (const [side, label] of labels.entries()) {
        const done = await everyBox(label, doc, page, (answer) => {
          if (mine !== outlining) return false;
          for (const [, which, result, address, x0, y0, x1, y1] of answer.boxes) {
            if (side && which === "gold") continue; // the gold is outlined once, from the first run
            const who = which === "gold" ? "gold" : labels.length > 1 ? `prediction ${sideNames[side]}` : "prediction";
            box(page, [x0, y0, x1, y1], `${which} all${side ? " vs" : ""}`, `${address}: ${who} (${result})`);
          }
          return true;
        });
        if (!done) return;
      }
    }
    pages.dataset.outlined = "all";
  }
  function where(row) {
    document.querySelectorAll(".box:not(.all)").forEach((node) => node.remove());
    const parts = [], outlines = [];
    const notes = first.page_notes || [];
    if (row.gold !== null && row.gold !== undefined) {
      parts.push(placeText("gold", row.goldAt, notes));
      if (row.goldAt && row.goldAt.page) outlines.push(box(row.goldAt.page, row.goldAt.bbox, "gold", "gold: " + shown(row.gold)));
    }
    row.sides.forEach((verdict, side) => {
      if (!verdict || verdict.pred === null) return;
      const at = verdict.located && verdict.located.pred;
      const who = labels.length > 1 ? `prediction ${sideNames[side]} (${labels[side]})` : "prediction";
      parts.push(placeText(who, at, notes));
      if (at && at.page) outlines.push(box(at.page, at.bbox, side ? "pred vs" : "pred", "prediction: " + shown(verdict.pred)));
      if (verdict.cited) {
        // where the system itself says it read the value (its own citation), in its own colour
        outlines.push(box(verdict.cited.page, verdict.cited.bbox, "cited", `cited by the system: page ${verdict.cited.page}`));
        parts.push(`${who} cited on page ${verdict.cited.page}`);
      }
      if (verdict.grounding) parts.push(`grounding: ${verdict.grounding.replaceAll("_", " ")}`);
    });
    if (!first.pages) parts.push("this document has no PDF pages to show");
    status.textContent = parts.join(" · ") || "Nothing to find: neither side gives a value here.";
    const shownOutline = outlines.find(Boolean);
    if (shownOutline) shownOutline.scrollIntoView({ block: "center", inline: "center", behavior: "instant" });
    const explained = row.sides.map((verdict, side) => {
      if (!verdict) return null;
      const head = labels.length > 1 ? `${sideNames[side]} (${labels[side]}): ${verdict.result}` : verdict.result;
      const text = verdict.explain || (verdict.result === "matched" ? `equal: both read as ${JSON.stringify(verdict.gold_key)}` :
        `gold key ${JSON.stringify(verdict.gold_key)}, predicted key ${JSON.stringify(verdict.pred_key)}`);
      return [el("h3", {}, head), el("pre", { class: "explain" }, text)];
    });
    why.replaceChildren(el("h2", {}, `Why: ${row.address}`), el("div", {}, explained),
      el("h3", {}, `schema: ${row.path}`), schemaNode((first.fields || {})[row.path]),
      el("p", {}, el("a", { href: link("schema", { doc, run }) + `#node-${encodeURIComponent(row.path)}` }, "open this field's node")));
  }
  async function whole(row, tr) {
    // a row listed with a value cut short: each such side's verdict asked for whole, the row redrawn
    const cut = row.sides.map((verdict, side) => (verdict && verdict.cut && !verdict.whole ? side : -1)).filter((side) => side >= 0);
    const loaded = await Promise.all(cut.map((side) => getJSON(api.verdict(labels[side], doc, row.sides[side].n))));
    cut.forEach((side, i) => { row.sides[side] = { ...loaded[i], whole: true }; });
    Object.assign(row, rowOf(row), { sides: row.sides });
    tr.replaceChildren(...cells(row).flat(Infinity).filter(Boolean));
  }
  function select(tr, row) {
    document.querySelectorAll("tr.verdict.selected").forEach((node) => { node.classList.remove("selected"); node.removeAttribute("aria-selected"); });
    tr.classList.add("selected");
    tr.setAttribute("aria-selected", "true");
    if (row.sides.some((verdict) => verdict && verdict.cut && !verdict.whole)) {
      row.loading = row.loading || whole(row, tr);
      row.loading.then(() => { if (tr.classList.contains("selected")) where(row); }).catch(fail);
    } else where(row);
  }
  function cells(row) {
    return [el("th", { scope: "row" }, el("div", { class: "value" }, row.address)),
      el("td", {}, valueCell(row.sides.find(Boolean), "gold", row.gold), keyLine(row.goldKey)),
      labels.map((_, side) => {
        const verdict = row.sides[side];
        return [el("td", {}, verdict ? valueCell(verdict, "pred", verdict.pred) : el("div", { class: "value pred" }), verdict ? keyLine(verdict.pred_key) : null),
          el("td", {}, verdict ? el("span", { class: `kind ${verdict.result}` }, verdict.result) : "–",
            verdict && verdict.adjudication ? el("span", { class: "adjudicated", title: "changed by this accepted adjudication" }, " ", verdict.adjudication) : null)];
      })];
  }
  function line(row) {
    const tr = el("tr", { tabindex: 0, class: "verdict", "data-address": row.address, "data-path": row.path,
      "data-results": row.sides.map((v) => (v ? v.result : "")).join(" "),
      onclick: () => select(tr, row), onfocus: () => select(tr, row),
      onkeydown: (event) => { if (!moveFocus(event, "tr.verdict") && event.key === "Enter") select(tr, row); } }, cells(row));
    tr.row = row;
    return tr;
  }
  const body = el("tbody", {});
  const count = el("span", { id: "count", class: "note" });
  const more = el("button", { type: "button", id: "more", class: "more", hidden: true, onclick: () => loadMore() });
  const listing = { shown: 0, next: null, matching: 0, total: 0, generation: 0, loading: null };
  function append(slice) {
    body.append(...slice.rows.map(line));
    Object.assign(listing, { shown: listing.shown + slice.rows.length, next: slice.next, matching: slice.matching, total: slice.total });
    const unit = labels.length > 1 ? "rows" : "verdicts"; // side by side: one row per address, each run's verdict there
    count.textContent = `${listing.shown} of ${listing.matching} ${unit} shown` + (listing.matching !== listing.total ? ` (${listing.total} in all)` : "");
    more.hidden = listing.next === null || listing.next === undefined;
    more.textContent = `show more (${listing.matching - listing.shown} left)`;
    requestAnimationFrame(() => { if (!more.hidden && inView(more)) loadMore(); }); // the end still in sight: keep filling
  }
  function inView(node) {
    const pane = node.closest(".verdicts"), rect = node.getBoundingClientRect();
    const frame = pane ? pane.getBoundingClientRect() : { top: 0, bottom: innerHeight };
    return rect.bottom >= frame.top && rect.top <= Math.min(frame.bottom, innerHeight) && rect.height > 0;
  }
  function loadMore() {
    if (listing.next === null || listing.next === undefined || listing.loading) return listing.loading;
    const mine = listing.generation;
    listing.loading = source(listing.next).then((slice) => { if (mine === listing.generation) append(slice); })
      .catch(fail).finally(() => { listing.loading = null; });
    return listing.loading;
  }
  let typing = null;
  function refilter(now) {
    // the loaded rows the filters drop are hidden at once; the server's answer then lists every row they keep
    for (const tr of body.rows) tr.hidden = !keeps(tr.row, filters());
    remember();
    clearTimeout(typing);
    typing = setTimeout(async () => {
      const mine = ++listing.generation;
      source = rowSource(doc, labels, filters());
      const slice = await source(0);
      if (mine !== listing.generation) return;
      body.replaceChildren();
      Object.assign(listing, { shown: 0, loading: null });
      append(slice);
    }, now ? 0 : 250);
  }
  function remember() {
    history.replaceState(null, "", link("documents", { doc, run, vs, kind: state.kind, field: state.field, q: state.q,
      sort: state.sort === "order" ? null : state.sort, zoom: state.zoom === "fit" ? null : state.zoom, all: state.all ? "1" : null }));
  }
  const head = el("tr", {}, el("th", { scope: "col" }, "address"), el("th", { scope: "col" }, "gold"),
    labels.map((label, side) => [el("th", { scope: "col", title: runOf(label).setting },
      labels.length > 1 ? `prediction ${sideNames[side]}: ${label}` : "prediction"), el("th", { scope: "col" }, "verdict")]));
  const others = RUNS.map((r) => r.label).filter((label) => label !== run);
  const summary = heads.map((answer, side) => el("li", { title: runOf(labels[side]).setting }, `${labels[side]}: ` +
    (answer.status === "graded" ? `accuracy ${percent(answer.accuracy)}% · ${countsText(answer.counts)}` :
      `${answer.status} (${answer.error ? errorText(answer.error) : "no answer"})`)));
  const failures = heads.flatMap((answer, side) => (answer.status === "graded" ? [] : recordView(answer, labels[side])));
  const kinds = KINDS.filter((kind) => heads.some((answer) => answer.counts && answer.counts[kind]));
  const allToggle = el("input", { id: "all-errors", type: "checkbox", checked: state.all,
    onchange: (event) => { state.all = event.target.checked; outlineErrors().catch(fail); remember(); } });
  const search = el("input", { id: "q", type: "search", value: state.q, placeholder: "address or value contains",
    oninput: (event) => { state.q = event.target.value; refilter(false); } });
  show(el("h1", {}, doc),
    el("p", { class: "note" }, `suite ${first.suite} · ${first.pages} page(s) · `,
      el("a", { href: link("schema", { doc, run }) }, "schema with its verdict counts"), " · ",
      el("a", { href: link("document_list", { run }) }, "every document")),
    el("ul", { class: "summary" }, summary),
    failures.length ? el("section", { id: "record", class: "record" }, failures) : null,
    el("div", { class: "controls" },
      runSelect("kind", state.kind, [["", "every verdict"], ["errors", "every error"], ...kinds.map((k) => [k, k])],
        (chosen) => { state.kind = chosen; refilter(true); }),
      runSelect("field", state.field, fieldChoices(first.paths || [], state.field), (chosen) => { state.field = chosen; refilter(true); }),
      el("label", { for: "q" }, "find ", search),
      runSelect("sort", state.sort, ORDERS, (chosen) => { state.sort = chosen; refilter(true); }),
      runSelect("vs", vs, [["", "no second system"], ...others.map((l) => [l, l])],
        (chosen) => navigate("documents", { doc, run, vs: chosen, kind: state.kind, field: state.field, q: state.q,
          sort: state.sort === "order" ? null : state.sort })),
      runSelect("zoom", state.zoom, ZOOMS, zoom),
      el("label", { for: "all-errors" }, allToggle, " outline every error"),
      count),
    el("div", { class: "document" }, pages,
      el("div", { class: "verdicts" }, status, why,
        el("table", { id: "verdicts", class: labels.length > 1 ? "side-by-side" : "" }, el("thead", {}, head), body), more)));
  append(opened);
  new IntersectionObserver((entries) => { if (entries.some((entry) => entry.isIntersecting)) loadMore(); }).observe(more);
  zoom(state.zoom);
  outlineErrors().catch(fail);
}
