// The words of a selection on the page: written once in words.js (the build runs the same module for the default),
// filled in here for the selection shown.
import { data, readout } from "./data.js";
import { split_references } from "./references.js";
import { factsOf } from "./selection.js";
import { describe, readoutParagraphs, tableRows, title } from "./words.js";

/** What the words need besides the facts (words.js W): the plate module's words_context, as the build gives it. */
const W = data.words_context;

/** Every text of one selection, as the page as built shows the default's. */
export function texts(sel) {
  const f = factsOf(sel);
  const ids = data.figures.map((fig) => fig.id);
  const paragraphs = readoutParagraphs(f, W);
  return {
    readout: paragraphs.join(" "), readout_paragraphs: paragraphs, caption: f.caption,
    title: Object.fromEntries(ids.map((id) => [id, title(f, id, W)])),
    describe: Object.fromEntries(ids.map((id) => [id, describe(f, id, W)])),
    tables: Object.fromEntries(ids.map((id) => [id, tableRows(f, id)])),
  };
}

/** Each figure's title, description and data table, the readout and the captions, for the selection shown, but
 * not yet those of the figures `away` (ids) from the screen. Only what changed is written: the page keeps its layout, and
 * the live readout announces only news. */
const setText = (el, text) => { if (el.textContent !== text) el.textContent = text; };
const tableStamps = new WeakMap(); // table -> its rows as JSON, read off the page the first time

let holders = null; // the elements written here, found once (a search of the whole page cost ~0.5 ms a change)

/** `wordsAway`: figures whose description and table wait (those away, unless said otherwise). */
export function fillTexts(f, away = new Set(), wordsAway = away) {
  fillReadout(f);
  holders ||= {
    captions: [...document.querySelectorAll("[data-selection]")].map((el) => [el, el.closest(".figure")?.id]),
    titles: [...document.querySelectorAll("[data-title]")],
    describes: [...document.querySelectorAll("[data-describe]")],
    tables: [...document.querySelectorAll("[data-table]")],
  };
  for (const [el, id] of holders.captions) if (!away.has(id)) setText(el, f.caption);
  for (const el of holders.titles) if (!away.has(el.dataset.title)) setText(el, title(f, el.dataset.title, W));
  for (const el of holders.describes) {
    if (!wordsAway.has(el.dataset.describe)) setText(el, describe(f, el.dataset.describe, W));
  }
  for (const table of holders.tables) {
    if (wordsAway.has(table.dataset.table)) continue;
    const rows = tableRows(f, table.dataset.table);
    const stamp = JSON.stringify(rows);
    const had = tableStamps.has(table) ? tableStamps.get(table)
      : JSON.stringify([...table.tBodies[0].rows].map((tr) => [...tr.cells].map((cell) => cell.textContent)));
    tableStamps.set(table, stamp);
    if (had === stamp) continue;
    table.tBodies[0].replaceChildren(...rows.map(([head, ...cells]) => {
      const tr = document.createElement("tr");
      const th = document.createElement("th");
      th.scope = "row";
      th.textContent = head;
      tr.append(th, ...cells.map((c) => Object.assign(document.createElement("td"), { textContent: c })));
      return tr;
    }));
  }
}

/** The readout, one paragraph per question. */
function fillReadout(f) {
  const paragraphs = readoutParagraphs(f, W);
  const had = [...readout.children];
  if (had.length === paragraphs.length && had.every((p, i) => p.textContent === paragraphs[i])) return;
  readout.replaceChildren(...paragraphs.map((text, i) => {
    const p = document.createElement("p");
    p.dataset.readout = String(i);
    p.replaceChildren(...linked(text));
    return p;
  }));
}

// "plate XIV.5" as a link when that plate is built alongside: where a reference is, generator/references.py says
// (compiled, references.js), as it does for the page as built (generator/crossrefs.py).
const LINKS = data.links || {};

/** A text as nodes: its references to the plates built alongside as links, the rest as text. */
function linked(text) {
  return split_references(text, LINKS, []).map((piece, i) => (i % 2 === 0 ? document.createTextNode(piece)
    : Object.assign(document.createElement("a"), { href: LINKS[piece[1]], textContent: piece[0] })));
}
