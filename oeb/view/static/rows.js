// oeb view: a document's verdicts a slice at a time (loaded before document.js; app.js holds the
// helpers). The server filters, orders and slices every verdict of a document (oeb/view/paging.py);
// an export's files hold only the document's slices in its own order, so there the page reads them
// all when a filter, an order or a second system is asked for, and filters and orders them alike here.
"use strict";

const LISTED = 500; // rows an export's page adds at a time, as the server's default limit

function rowOf(item) {
  // a listed verdict, or a side-by-side row, as the page draws it: the gold, where it stands, each side
  const sides = item.sides || [item];
  const first = sides.find(Boolean);
  return { address: item.address, path: item.path, gold: first.gold, goldKey: first.gold_key,
    goldAt: first.located && first.located.gold, sides };
}

function under(path, field) {
  // the server's paging.under: the field itself, or a field beneath an object's or array's node
  return path === field || path.startsWith(field + ".") || path.startsWith(field + "[");
}

function keeps(row, filters) {
  // the server's filters (paging._keeps): a kind (or any error) on either side, a field, a text
  const results = row.sides.filter(Boolean).map((v) => v.result);
  if (filters.kind === "errors" && results.every((r) => r === "matched")) return false;
  if (filters.kind && filters.kind !== "errors" && !results.includes(filters.kind)) return false;
  if (filters.field && !under(row.path, filters.field)) return false;
  if (!filters.q) return true;
  const text = filters.q.toLowerCase();
  return [row.address, shown(row.gold), ...row.sides.filter(Boolean).map((v) => shown(v.pred))]
    .some((part) => part.toLowerCase().includes(text));
}

function ordered(rows, sort) {
  // the server's orders (paging.chosen): as graded, errors first by kind, by address
  const rank = [...KINDS.slice(1), KINDS[0]];
  const worst = (row) => Math.min(...row.sides.filter(Boolean).map((v) => rank.indexOf(v.result)));
  if (sort === "errors") return [...rows].sort((a, b) => worst(a) - worst(b));
  if (sort === "address") return [...rows].sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
  return rows;
}

async function everySlice(run, doc) {
  // one run's whole answer from an export: its first file's head and every slice's verdicts
  let answer = await getJSON(api.document(run, doc, {}));
  const head = answer, verdicts = [...answer.verdicts];
  while (answer.next !== null && answer.next !== undefined) {
    answer = await getJSON(api.document(run, doc, { offset: answer.next }));
    verdicts.push(...answer.verdicts);
  }
  return { head, verdicts };
}

function merge(lists) {
  // each run's verdicts by address, in the first run's order (paging.rows_of)
  const rows = new Map();
  lists.forEach((verdicts, side) => {
    for (const v of verdicts) {
      if (!rows.has(v.address)) rows.set(v.address, { address: v.address, path: v.path, sides: lists.map(() => null) });
      rows.get(v.address).sides[side] = v;
    }
  });
  return [...rows.values()];
}

function rowSource(doc, labels, filters) {
  // offset => {heads: each run's head, rows, next, matching, total}: one slice of the rows asked for
  if (!STATIC) {
    return async (offset) => {
      const answer = await getJSON(api.document(labels[0], doc, { vs: labels[1], ...filters, offset }));
      return { heads: [answer, answer.vs].filter(Boolean), rows: (answer.rows || answer.verdicts).map(rowOf),
        next: answer.next, matching: answer.matching, total: answer.total };
    };
  }
  const plain = labels.length === 1 && !filters.kind && !filters.field && !filters.q && !filters.sort;
  if (plain) {
    return async (offset) => {
      const answer = await getJSON(api.document(labels[0], doc, { offset }));
      return { heads: [answer], rows: answer.verdicts.map(rowOf), next: answer.next, matching: answer.total, total: answer.total };
    };
  }
  let whole = null;
  return async (offset) => {
    if (!whole) {
      const answers = await Promise.all(labels.map((label) => everySlice(label, doc)));
      const heads = answers.map((answer, side) => (side ? { ...answer.head, label: labels[side] } : answer.head));
      whole = { heads, rows: merge(answers.map((answer) => answer.verdicts)).map(rowOf) };
    }
    const kept = ordered(whole.rows.filter((row) => keeps(row, filters)), filters.sort);
    const end = Math.min(offset + LISTED, kept.length);
    return { heads: whole.heads, rows: kept.slice(offset, end), next: end < kept.length ? end : null,
      matching: kept.length, total: whole.rows.length };
  };
}

async function everyBox(label, doc, page, draw) {
  // every outlined error of one run on one page, a bounded answer at a time; false once stale
  let offset = 0;
  while (offset !== null && offset !== undefined) {
    const answer = await getJSON(api.boxes(label, doc, page, offset));
    if (draw(answer) === false) return false;
    offset = answer.next;
  }
  return true;
}
