// oeb view: the slices page (docs/slices.md), drawn from /api/slices and /api/mix. Loaded before
// app.js, whose helpers (el, svg, getJSON, show, link, runSelect, navigate, percent, query, params,
// STATIC) it calls once the page starts; values go in as text only, as in app.js.
"use strict";

globalThis.OEB_NAV = [["slices", "Slices"]];
globalThis.OEB_VIEWS = { slices: slicesView };
globalThis.OEB_SLICE_FIELDS = (run) =>
  // the fields page limited to a slice's documents: fields?run=L&trait=T&value=V (&t, &v: their places)
  STATIC
    ? `api/runs/${runIndex(run)}/slices/${params.get("t")}/${params.get("v")}.json`
    : "api/fields" + query({ run, trait: params.get("trait"), value: params.get("value") || "" });

const sliceApi = {
  list: () => (STATIC ? "api/slices.json" : "api/slices"),
  trait: (index, trait) => (STATIC ? `api/slices/${index}.json` : "api/slices" + query({ trait })),
  mix: () => (STATIC ? "api/mix.json" : "api/mix"),
};
const SLICE_COLOURS = ["#0550ae", "#bc4c00", "#1a7f37", "#8250df", "#cf222e", "#116329", "#953800", "#0a3069"];

function interval(ci, signed) {
  if (!ci) return "–";
  const show = (value) => (signed && value >= 0 ? "+" : "") + percent(value);
  return `${show(ci[0])} to ${show(ci[1])}`;
}

function flipTable(answer) {
  const rows = [];
  for (const flip of answer.flips) {
    for (const winner of flip.winners) {
      rows.push(el("tr", { class: "flip" }, el("th", { scope: "row" }, flip.name), el("td", {}, String(flip.documents)),
        el("td", {}, `${flip.leader} ${percent(flip.leader_score)}`), el("td", {}, winner.system),
        el("td", {}, percent(winner.score)), el("td", {}, "+" + percent(winner.mean_diff)), el("td", {}, interval(winner.ci95, true))));
    }
  }
  const head = ["slice", "documents", "pooled leader", "beaten by", "score", "Δ (points)", "95% CI"];
  return [
    el("h2", {}, answer.flips.length ? `Flips: ${answer.flips.length}` : "Flips: none"),
    el("p", { class: "note" }, `A flip: a slice of at least ${answer.min_docs} documents where a system beats the pooled leader (${answer.leader}) with a paired 95% interval above 0.`),
    rows.length ? el("table", { class: "numbers", id: "flips" }, el("thead", {}, el("tr", {}, head.map((h) => el("th", { scope: "col" }, h)))), el("tbody", {}, rows)) : null,
  ];
}

function sliceChart(answer) {
  // per slice a band; per system in it a point at its score and a whisker over its 95% interval
  const systems = answer.slices.length ? answer.slices[0].systems.map((row) => row.system) : [];
  const band = Math.max(60, 26 * systems.length), left = 50, top = 16, height = 300, bottom = 64;
  const width = left + band * answer.slices.length + 20;
  const y = (value) => top + (1 - value) * (height - top - bottom);
  const plot = svg("svg", { viewBox: `0 0 ${width} ${height}`, width, height, role: "img", id: "slice-chart",
    "aria-label": `score per system and slice by ${answer.by.join(" and ")}, with 95% intervals` });
  for (let step = 0; step <= 4; step++) {
    plot.append(svg("line", { x1: left, x2: width - 20, y1: y(step / 4), y2: y(step / 4), class: "grid" }));
    plot.append(svg("text", { x: left - 6, y: y(step / 4) + 4, "text-anchor": "end", class: "tick" }, String(25 * step)));
  }
  const flipped = new Set(answer.flips.map((flip) => flip.name));
  answer.slices.forEach((item, i) => {
    const x0 = left + i * band;
    const group = svg("g", { class: "slice" + (flipped.has(item.name) ? " flip" : "") + (item.small ? " small" : ""), "data-slice": item.name });
    if (flipped.has(item.name)) group.append(svg("rect", { x: x0 + 2, y: top, width: band - 4, height: height - top - bottom, class: "flip-band" }));
    item.systems.forEach((row, k) => {
      const cx = x0 + ((k + 0.5) * band) / systems.length;
      const colour = SLICE_COLOURS[systems.indexOf(row.system) % SLICE_COLOURS.length];
      const point = svg("g", { class: "point" });
      point.append(svg("title", {}, `${row.system} on ${item.name}: ${percent(row.score)}% (${interval(row.ci95)}), ${row.documents} documents`));
      if (row.ci95) point.append(svg("line", { x1: cx, x2: cx, y1: y(row.ci95[0]), y2: y(row.ci95[1]), stroke: colour, class: "whisker" }));
      point.append(svg("circle", { cx, cy: y(row.score), r: 4, fill: colour }));
      group.append(point);
    });
    const value = Object.values(item.slice).join(" · ");
    group.append(svg("text", { x: x0 + band / 2, y: height - bottom + 16, "text-anchor": "middle", class: "label" }, value));
    group.append(svg("text", { x: x0 + band / 2, y: height - bottom + 30, "text-anchor": "middle", class: "tick" },
      `${item.documents} docs` + (item.small ? " *" : "")));
    plot.append(group);
  });
  const legend = el("p", { class: "legend" }, systems.map((name, k) =>
    el("span", { class: "key" }, el("span", { class: "swatch", style: `background:${SLICE_COLOURS[k % SLICE_COLOURS.length]}` }), name)));
  return el("figure", {}, plot, legend, el("figcaption", {},
    `Score (percent, a failed document counts 0) per system and slice; whiskers: 95% bootstrap intervals; shaded: a flip; *: fewer than ${answer.min_docs} documents, not ranked.`));
}

function sliceTables(answer) {
  const flipped = new Set(answer.flips.map((flip) => flip.name));
  const leader = answer.leader;
  return answer.slices.map((item) => {
    const marks = [flipped.has(item.name) ? "flip" : null, item.small ? `fewer than ${answer.min_docs} documents: not ranked` : null].filter(Boolean);
    const ranked = [...item.systems].sort((a, b) => (a.rank === null ? 0 : a.rank) - (b.rank === null ? 0 : b.rank));
    const rows = ranked.map((row) => el("tr", {},
      el("td", {}, row.rank === null ? "–" : String(row.rank)), el("th", { scope: "row" }, row.system),
      el("td", {}, percent(row.score)), el("td", {}, interval(row.ci95)), el("td", {}, `${row.scored}/${row.documents}`)));
    const pairs = item.pairs.map((pair) => el("li", {}, `${pair.b} − ${pair.a}: ${percent(pair.mean_diff)} points (${interval(pair.ci95, true)}, ${pair.verdict})`));
    const docs = item.doc_ids.map((doc) => el("li", {}, el("a", { href: link("documents", { doc, run: leader }) }, doc)));
    const value = item.slice[answer.by[0]];
    const fieldsLink = el("p", {}, "Fields over these documents: ", item.systems.map((row, k) => [k ? ", " : "",
      el("a", { class: "slice-fields", href: link("fields", { run: row.system, trait: answer.by[0], value,
        t: answer.traitIndex, v: answer.values.indexOf(value) }) }, row.system)]));
    return el("section", { class: "slice-block", "data-slice": item.name },
      el("h3", {}, `${item.name}: ${item.documents} documents` + (marks.length ? ` (${marks.join("; ")})` : "")),
      el("table", { class: "numbers" }, el("thead", {}, el("tr", {}, ["rank", "system", "score", "95% CI", "scored"].map((h) => el("th", { scope: "col" }, h)))), el("tbody", {}, rows)),
      pairs.length ? el("ul", { class: "summary" }, pairs) : null,
      fieldsLink,
      el("details", {}, el("summary", {}, `its ${item.documents} documents`), el("ul", { class: "documents" }, docs)));
  });
}

function mixSection(answer) {
  const mix = answer.mix;
  const strata = mix.strata.map((s) => el("tr", {}, el("th", { scope: "row" }, s.name), el("td", {}, (100 * s.share).toFixed(1)), el("td", {}, String(s.documents))));
  const rows = answer.systems.map((row) => el("tr", {},
    el("td", {}, String(row.rank)), el("td", {}, String(row.pooled_rank)), el("th", { scope: "row" }, row.system),
    el("td", {}, percent(row.score)), el("td", {}, interval(row.ci)),
    el("td", {}, row.usd_per_1k_pages === null ? "–" : "$" + row.usd_per_1k_pages.toFixed(2)),
    el("td", {}, row.latency_p95_s === null ? "–" : row.latency_p95_s.toFixed(2) + " s")));
  return [
    el("h2", {}, "Leaderboard at the mix" + (mix.partial ? " (partial)" : "")),
    mix.partial ? el("p", { class: "error", id: "mix-partial" }, `No documents for ${mix.missing.join(", ")}: the score covers ${(100 * mix.covered_share).toFixed(1)}% of the mix.`) : null,
    el("table", { class: "numbers", id: "mix-strata" }, el("thead", {}, el("tr", {}, ["stratum", "share %", "documents"].map((h) => el("th", { scope: "col" }, h)))), el("tbody", {}, strata)),
    el("table", { class: "numbers", id: "mix" }, el("thead", {}, el("tr", {}, ["rank", "pooled rank", "system", "score", "95% CI", "cost/1k pages", "latency p95"].map((h) => el("th", { scope: "col" }, h)))), el("tbody", {}, rows)),
  ];
}

async function slicesView() {
  document.title = "oeb view: slices";
  const listed = await getJSON(sliceApi.list());
  const names = listed.traits.map((entry) => entry.trait);
  const trait = params.get("trait") || "pages";
  const index = names.indexOf(trait);
  if (index < 0) throw new Error(`no trait ${JSON.stringify(trait)}; the traits are ${names.join(", ")}`);
  const answer = await getJSON(sliceApi.trait(index, trait));
  answer.traitIndex = index;
  answer.values = listed.traits[index].values;
  const parts = [el("h1", {}, `Slices by ${trait}`),
    el("div", { class: "controls" }, runSelect("trait", trait, names.map((name) => [name, name]), (value) => navigate("slices", { trait: value })))];
  if (listed.warnings.length) parts.push(el("p", { class: "note", id: "slice-warnings" }, listed.warnings.join(" ")));
  if (listed.mix) parts.push(...mixSection(await getJSON(sliceApi.mix())));
  parts.push(...flipTable(answer), el("h2", {}, "Score per slice"), sliceChart(answer), ...sliceTables(answer));
  show(...parts.filter(Boolean));
}
