// oeb view: the calibration page (docs/grounding.md), drawn from /api/calibration: per run with
// confidences, its risk-coverage curve and reliability diagram, and the figures of
// `oeb report --calibration`. Loaded before app.js, whose helpers (el, svg, getJSON, show, percent,
// STATIC) it calls once the page starts; values go in as text only, as in app.js.
"use strict";

globalThis.OEB_NAV = [...(globalThis.OEB_NAV || []), ["calibration", "Calibration"]];
globalThis.OEB_VIEWS = { ...(globalThis.OEB_VIEWS || {}), calibration: calibrationView };
const CALIBRATION_COLOURS = ["#0550ae", "#bc4c00", "#1a7f37", "#8250df", "#cf222e", "#116329"];

function calibrationPlot(id, title, runs, points, xLabel, yLabel, diagonal) {
  const width = 360, height = 300, left = 46, bottom = 40, top = 24, right = 12;
  const x = (v) => left + v * (width - left - right);
  const y = (v) => height - bottom - v * (height - top - bottom);
  const plot = svg("svg", { viewBox: `0 0 ${width} ${height}`, width, height, role: "img", id, "aria-label": title });
  plot.append(svg("text", { x: left, y: 14, class: "tick" }, title));
  for (let step = 0; step <= 4; step++) {
    plot.append(svg("line", { x1: left, x2: width - right, y1: y(step / 4), y2: y(step / 4), class: "grid" }));
    plot.append(svg("text", { x: left - 6, y: y(step / 4) + 4, "text-anchor": "end", class: "tick" }, String(25 * step)));
    plot.append(svg("text", { x: x(step / 4), y: height - bottom + 16, "text-anchor": "middle", class: "tick" }, String(25 * step)));
  }
  plot.append(svg("text", { x: (left + width) / 2, y: height - 6, "text-anchor": "middle", class: "tick" }, xLabel));
  plot.append(svg("text", { x: 12, y: top + 8, class: "tick" }, yLabel));
  if (diagonal) plot.append(svg("line", { x1: x(0), y1: y(0), x2: x(1), y2: y(1), class: "grid" }));
  runs.forEach((run, index) => {
    const colour = CALIBRATION_COLOURS[index % CALIBRATION_COLOURS.length];
    const pairs = points(run);
    if (pairs.length > 1) {
      plot.append(svg("polyline", { points: pairs.map(([a, b]) => `${x(a)},${y(b)}`).join(" "), fill: "none", stroke: colour, "data-run": run.name }));
    }
    for (const [a, b] of pairs) plot.append(svg("circle", { cx: x(a), cy: y(b), r: 2.5, fill: colour, "data-run": run.name }));
  });
  return plot;
}

function coverageCell(block) {
  const shown = percent(block.coverage) + (block.threshold === null ? "" : ` (≥${block.threshold.toPrecision(4)})`);
  return block.ci95 && block.ci95[0] !== null ? `${shown} [${percent(block.ci95[0])}, ${percent(block.ci95[1])}]` : shown;
}

async function calibrationView() {
  document.title = "oeb view: calibration";
  const answer = await getJSON(STATIC ? "api/calibration.json" : "api/calibration");
  const head = ["system", "values", "auto@95%", "auto@99%", "auto@99.5%", "straight-through", "ECE", "AUROC"];
  const rows = answer.runs.map((run) =>
    run.confidence
      ? [run.name, `${run.with_confidence}/${run.values}`, ...["95", "99", "99.5"].map((key) => coverageCell(run.coverage[key])),
         percent(run.straight_through), run.ece === null ? "n/a" : percent(run.ece), run.auroc === null ? "n/a" : run.auroc.toFixed(3)]
      : [run.name, "n/a", "n/a", "n/a", "n/a", "n/a", "n/a", "n/a"]);
  const table = el("table", { class: "numbers", id: "calibration" },
    el("thead", {}, el("tr", {}, head.map((h) => el("th", { scope: "col" }, h)))),
    el("tbody", {}, rows.map((cells) => el("tr", {}, cells.map((cell, i) => (i ? el("td", {}, cell) : el("th", { scope: "row" }, cell)))))));
  const confident = answer.runs.filter((run) => run.confidence);
  const legend = el("p", { class: "note" }, ...confident.map((run, i) =>
    el("span", { style: `color:${CALIBRATION_COLOURS[i % CALIBRATION_COLOURS.length]}` }, `■ ${run.name} `)));
  const plots = confident.length
    ? el("div", { class: "plots" },
        calibrationPlot("risk-coverage", "risk-coverage: share accepted (x) against share of them wrong (y)", confident,
          (run) => run.risk_coverage.map(([coverage, risk]) => [coverage, risk]), "coverage %", "risk %", false),
        calibrationPlot("reliability", "reliability: confidence (x) against share right (y), 10 bins", confident,
          (run) => run.reliability.map(([, , conf, accuracy]) => [conf, accuracy]), "confidence %", "right %", true))
    : el("p", { class: "note" }, "No run shown gave confidences.");
  show(el("h1", {}, "Calibration"), table,
    el("p", { class: "note" }, "auto@P%: the share of predicted values accepted unreviewed at the lowest confidence threshold whose accepted values are P% right (95% bootstrap interval over documents); straight-through: documents whose every value clears the 99% threshold, of all the run's documents (a failed one never goes through)."),
    legend, plots);
}
