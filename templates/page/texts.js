// The words of a selection on the page: written once in words.js (the build runs the same module for the default),
// filled in here for the selection shown.
import { data, readout } from "./data.js";
import { factsOf } from "./selection.js";
import { describe, readoutParagraphs, tableRows } from "./words.js";

/** What the words need besides the facts (words.js W): the plate module's words_context, as the build gives it. */
const W = data.words_context;

/** Every text of one selection, as the page as built shows the default's. */
export function texts(sel) {
  const f = factsOf(sel);
  const ids = data.figures.map((fig) => fig.id);
  const paragraphs = readoutParagraphs(f, W);
  return {
    readout: paragraphs.join(" "), readout_paragraphs: paragraphs, caption: f.caption,
    describe: Object.fromEntries(ids.map((id) => [id, describe(f, id, W)])),
    tables: Object.fromEntries(ids.map((id) => [id, tableRows(f, id)])),
  };
}

/** Each figure's description and data table, the readout and the captions, for the selection shown, but not yet
 * those of the figures `away` (ids) from the screen. Only what changed is written: the page keeps its layout, and
 * the live readout announces only news. */
const setText = (el, text) => { if (el.textContent !== text) el.textContent = text; };
const tableStamps = new WeakMap(); // table -> its rows as JSON, read off the page the first time

let holders = null; // the elements written here, found once (a search of the whole page cost ~0.5 ms a change)

/** `wordsAway`: figures whose description and table wait (those away, unless said otherwise). */
export function fillTexts(f, away = new Set(), wordsAway = away) {
  fillReadout(f);
  holders ||= {
    captions: [...document.querySelectorAll("[data-selection]")].map((el) => [el, el.closest(".figure")?.id]),
    describes: [...document.querySelectorAll("[data-describe]")],
    tables: [...document.querySelectorAll("[data-table]")],
  };
  for (const [el, id] of holders.captions) if (!away.has(id)) setText(el, f.caption);
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

// "plate XIV.5" as a link when that plate is built alongside (generator/crossrefs.py does the same for the page as
// built, by the same rule): the id ends where no letter, digit or further ".N" follows. Classes spelt out: \w, \d
// and \s are not Python's.
const LINKS = data.links || {};
const REFERENCE_SPACE = String.raw`[\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]`; // both \s's
const REFERENCE = new RegExp(String.raw`(?<![A-Za-z0-9_#-])([Pp]late${REFERENCE_SPACE}+)([A-Za-z0-9]+\.[0-9]+)` +
  String.raw`(?![A-Za-z0-9_]|\.[0-9])`, "g");

/** A text as nodes: its references to the plates built alongside as links, the rest as text. */
function linked(text) {
  const nodes = [];
  let at = 0;
  for (const m of text.matchAll(REFERENCE)) {
    if (!(m[2] in LINKS)) continue;
    nodes.push(document.createTextNode(text.slice(at, m.index)));
    nodes.push(Object.assign(document.createElement("a"), { href: LINKS[m[2]], textContent: m[0] }));
    at = m.index + m[0].length;
  }
  nodes.push(document.createTextNode(text.slice(at)));
  return nodes;
}
