// oeb view --review: the review queue and the adjudications list, drawn with app.js's helpers (el, show,
// getJSON, box, link, STATIC; loaded before app.js, called after). Every value from the file, the gold or a
// system is put in the page as text only.
"use strict";

const oebReview = (() => {
  const KEYS = { a: "accept", r: "reject", e: "correct", n: "next", p: "previous", x: "absent" };
  const ABSENT = "absent: the document states no value here";

  async function post(path, body) {
    const response = await fetch(ROOT + path, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-OEB-Token": CONF.token },
      body: JSON.stringify(body),
    });
    let answer = null;
    try {
      answer = await response.json();
    } catch (error) {
      answer = null;
    }
    if (!response.ok) throw new Error((answer && answer.error) || `${response.status} ${response.statusText}`);
    return answer;
  }

  function proposal(item) {
    if (item.action === "accept") return "also count: " + item.values.map(shown).join(" | ");
    if (item.action === "remove") return "drop the gold value (not gradable)";
    if (item.action === "verify") {
      if (item.value === undefined) return "is the gold right?";
      return item.value === null ? "not on the page: drop the gold value" : "correct to: " + shown(item.value);
    }
    return `${item.action}: ${shown(item.value)}`;
  }

  function button(action, key, label, onclick) {
    return el("button", { type: "button", id: `do-${action}`, "aria-keyshortcuts": key, onclick },
      label, " ", el("kbd", {}, key));
  }

  async function queue() {
    document.title = "oeb view: review";
    const answer = await getJSON("api/review");
    const items = answer.queue;
    const decided = new Map(); // id -> status written
    let at = 0;
    const status = el("p", { id: "status", role: "status", "aria-live": "polite" });
    const problem = el("p", { id: "problem", class: "error", role: "alert" });
    const reason = el("textarea", { id: "reason", rows: 2, cols: 60, placeholder: "why (kept from the entry when empty, required to reject)" });
    const value = el("input", { id: "value", type: "text", size: 40, placeholder: "a corrected value (JSON or text), Enter to save" });
    const body = el("div", { id: "entry" });

    function say(text) {
      problem.textContent = "";
      status.textContent = text;
    }

    function draw() {
      problem.textContent = "";
      if (!items.length) {
        body.replaceChildren(el("p", { class: "note" }, "Nothing to review: every entry of the file is decided."));
        return;
      }
      const item = items[at];
      const page = (item.evidence && item.evidence.page) || 1;
      const systems = Object.entries(item.systems);
      const [width, height] = item.page_size || [0, 0];
      const holder = item.pages
        ? el("div", { class: "pages" }, el("div", { class: "page", "data-page": page, "data-width": width, "data-height": height },
            el("img", { src: pageImage(item.doc_id, page), alt: `page ${page} of ${item.doc_id}` }),
            el("span", { class: "page-number" }, String(page))))
        : el("p", { class: "note" }, "no PDF page to show");
      const readings = el("table", { id: "readings" }, el("tbody", {}, systems.map(([label, reading], index) =>
        el("tr", { "data-reading": index + 1 }, el("td", {}, index < 9 ? el("kbd", {}, String(index + 1)) : "", " ", label), el("td", {}, el("div", { class: "value" }, shown(reading.value))),
          el("td", {}, el("span", { class: `kind ${reading.result}` }, reading.result))))));
      const facts = el("dl", {},
        el("dt", {}, "entry"), el("dd", { id: "entry-id" }, `${item.id} (${item.action}, `,
          el("span", { id: "entry-status" }, decided.get(item.id) || item.status), ")"),
        el("dt", {}, "gold"), el("dd", {}, el("div", { class: "value", id: "gold" }, shown(item.gold))),
        el("dt", {}, "proposal"), el("dd", {}, el("div", { class: "value", id: "proposal" }, proposal(item))),
        el("dt", {}, "why proposed"), el("dd", {}, el("div", { class: "value", id: "proposed-reason" }, item.reason || "")),
        el("dt", {}, `systems (${item.disagree} of ${systems.length} disagree with the gold)`), el("dd", {}, readings));
      body.replaceChildren(
        el("h2", {}, `${at + 1} of ${items.length}: `, el("a", { href: link("documents", { doc: item.doc_id }) }, item.doc_id),
          " · ", el("code", {}, item.address)),
        el("div", { class: "document" }, holder, el("div", { class: "verdicts" }, facts)));
      if (item.evidence && item.evidence.bbox && item.pages) box(page, item.evidence.bbox, "gold", "evidence");
    }

    async function decide(decision, typed) {
      if (!items.length) return;
      const item = items[at];
      if (typed !== undefined) value.value = typed;
      if (decision === "absent") {  // a sampled value not on the page: the gold was wrong (value: null)
        if (item.action !== "verify") decision = "reject";
        if (!reason.value.trim()) reason.value = ABSENT;
      }
      if (decided.has(item.id)) {
        problem.textContent = `${item.id} is already ${decided.get(item.id)}`;
        return;
      }
      if (decision === "reject" && !reason.value.trim()) {
        problem.textContent = "a rejection needs a reason: type it first";
        reason.focus();
        return;
      }
      if (decision === "correct" && !value.value.trim()) {
        problem.textContent = "type the corrected value first";
        value.focus();
        return;
      }
      try {
        const written = await post("api/review/decide", { id: item.id, revision: item.revision, decision,
          reason: reason.value, value: decision === "correct" ? value.value : undefined });
        decided.set(item.id, written.status);
        Object.assign(item, written);
        reason.value = "";
        value.value = "";
        if (document.activeElement === value || document.activeElement === reason) document.activeElement.blur();
        say(`${item.id} ${written.status} by ${written.by}`);
        if (at < items.length - 1) at += 1;
        draw();
        say(`${written.id} ${written.status} by ${written.by}`);
      } catch (error) {
        problem.textContent = error.message;
      }
    }

    function move(step) {
      at = Math.min(Math.max(at + step, 0), Math.max(items.length - 1, 0));
      draw();
    }

    const actions = {
      accept: () => decide("accept"),
      reject: () => decide("reject"),
      correct: () => (value.value.trim() ? decide("correct") : value.focus()),
      absent: () => decide("absent"),
      next: () => move(1),
      previous: () => move(-1),
    };
    value.addEventListener("keydown", (event) => {
      if (event.key === "Enter") {
        event.preventDefault();
        decide("correct");
      }
    });
    document.addEventListener("keydown", (event) => {
      const typing = ["INPUT", "TEXTAREA", "SELECT"].includes(document.activeElement.tagName);
      if (event.key === "Escape" && typing) {
        document.activeElement.blur();
        return;
      }
      if (typing || event.ctrlKey || event.metaKey || event.altKey) return;
      if (/^[1-9]$/.test(event.key) && items.length) { // pick that system's reading as the value
        const reading = Object.values(items[at].systems)[Number(event.key) - 1];
        if (!reading) return;
        event.preventDefault();
        decide("correct", JSON.stringify(reading.value));
        return;
      }
      const action = KEYS[event.key];
      if (!action) return;
      event.preventDefault();
      actions[action]();
    });

    show(
      el("h1", {}, "Review"),
      el("p", { class: "note" }, `${items.length} proposed entr${items.length === 1 ? "y" : "ies"} of ${answer.file}, most disagreeing systems first; `,
        `deciding as ${answer.by}. Each decision is written to the file at once.`),
      el("div", { class: "controls", role: "toolbar", "aria-label": "decide" },
        button("accept", "a", "Accept", actions.accept), button("reject", "r", "Reject", actions.reject),
        button("correct", "e", "Correct", actions.correct), button("absent", "x", "Absent", actions.absent),
        button("previous", "p", "Previous", actions.previous),
        button("next", "n", "Next", actions.next)),
      el("div", { class: "controls" }, el("label", { for: "reason" }, "reason "), reason,
        el("label", { for: "value" }, "corrected value "), value),
      status, problem, body);
    draw();
  }

  function effect(entry) {
    return Object.entries(entry.effect).map(([label, change]) =>
      el("div", {}, `${label}: ${percent(change.accuracy[0])} → ${percent(change.accuracy[1])} `,
        change.verdicts.map((v) => el("span", { class: `kind ${v.result}` }, v.result))));
  }

  async function list() {
    document.title = "oeb view: adjudications";
    const answer = await getJSON(STATIC ? "api/adjudications.json" : "api/adjudications"); // an export: its file
    const head = ["id", "document", "address", "action", "status", "by", "reason", "effect per run (accuracy)"];
    show(el("h1", {}, "Adjudications"),
      el("p", { class: "note" }, `${answer.entries.length} entries of ${answer.file} (sha256 ${answer.sha256.slice(0, 12)}).`),
      answer.problem ? el("p", { class: "error", role: "alert" }, answer.problem) : null,
      el("table", { id: "adjudications" }, el("thead", {}, el("tr", {}, head.map((h) => el("th", { scope: "col" }, h)))),
        el("tbody", {}, answer.entries.map((entry) => el("tr", { "data-id": entry.id },
          el("td", {}, entry.id), el("td", {}, el("a", { href: link("documents", { doc: entry.doc_id }) }, entry.doc_id)),
          el("td", {}, entry.address), el("td", {}, entry.action), el("td", {}, entry.status), el("td", {}, entry.by || ""),
          el("td", {}, el("div", { class: "value" }, entry.reason || "")), el("td", {}, effect(entry)))))));
  }

  return { queue, list };
})();

if (document.body.dataset.review) {
  const mode = document.body.dataset.review;
  globalThis.OEB_NAV = [...(globalThis.OEB_NAV || []), ...(mode === "write" ? [["review", "Review"]] : []),
    ["adjudications", "Adjudications"]];
  globalThis.OEB_VIEWS = { ...(globalThis.OEB_VIEWS || {}), review: oebReview.queue, adjudications: oebReview.list };
}
