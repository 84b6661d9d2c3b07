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

const setText = (el, text) => { if (el.textContent !== text) el.textContent = text; };

let holders = null; // the elements written here, found once (a search of the whole page cost ~0.5 ms a change)
// The facts each element was last written from: a change calls fillTexts again for the figures it deferred (once
// per figure caught up), and an element that shows these facts already is passed over before its words are made.
const written = new WeakMap();
/** Write el from the facts f with write(), unless it shows them already. */
function fill(el, f, write) {
  if (written.get(el) === f) return;
  write();
  written.set(el, f);
}

/** The readout, and each figure's title, caption, description and data table, for the selection shown, but not
 * yet those of the figures `away` (ids) from the screen, nor the tables (with their captions) of `tablesAway` (those
 * away, unless said otherwise). Only what changed is written: the page keeps its layout, and the live readout
 * announces only news. */
export function fillTexts(f, away = new Set(), tablesAway = away) {
  fill(readout, f, () => fillReadout(readoutParagraphs(f, W)));
  holders ||= {
    captions: [...document.querySelectorAll("[data-selection]")].map((el) => {
      const table = el.closest("table[data-table]"); // a table's caption goes with its table
      return [el, table ? table.dataset.table : el.closest(".figure")?.id, Boolean(table)];
    }),
    titles: [...document.querySelectorAll("[data-title]")],
    describes: [...document.querySelectorAll("[data-describe]")],
    tables: [...document.querySelectorAll("[data-table]")],
  };
  for (const [el, id, inTable] of holders.captions) {
    if (!(inTable ? tablesAway : away).has(id)) fill(el, f, () => setText(el, f.caption));
  }
  for (const el of holders.titles) {
    const id = el.dataset.title;
    if (!away.has(id)) fill(el, f, () => setText(el, title(f, id, W)));
  }
  for (const el of holders.describes) {
    const id = el.dataset.describe;
    if (!away.has(id)) fill(el, f, () => setText(el, describe(f, id, W)));
  }
  for (const table of holders.tables) {
    const id = table.dataset.table;
    if (!tablesAway.has(id)) fill(table, f, () => fillTable(table.tBodies[0], tableRows(f, id)));
  }
}

/** A table's body showing rows ([head, ...cells]): cell by cell while it has their shape (only changed texts are
 * written), made anew when the number of rows or columns differs. */
function fillTable(body, rows) {
  const had = body.rows;
  if (had.length === rows.length && rows.every((row, i) => had[i].cells.length === row.length)) {
    rows.forEach((row, i) => row.forEach((text, j) => setText(had[i].cells[j], text)));
    return;
  }
  body.replaceChildren(...rows.map(([head, ...cells]) => {
    const tr = document.createElement("tr");
    const th = document.createElement("th");
    th.scope = "row";
    th.textContent = head;
    tr.append(th, ...cells.map((c) => Object.assign(document.createElement("td"), { textContent: c })));
    return tr;
  }));
}

/** The readout, one paragraph per question: a paragraph whose text changed gets new nodes, the others stay. The
 * page as built has white space between its paragraphs, which the first change takes out with the rest. */
function fillReadout(paragraphs) {
  const had = [...readout.children];
  if (had.length !== paragraphs.length || readout.childNodes?.length !== had.length) {
    readout.replaceChildren(...paragraphs.map((text, i) => {
      const p = document.createElement("p");
      p.dataset.readout = String(i);
      p.replaceChildren(...linked(text));
      return p;
    }));
    return;
  }
  had.forEach((p, i) => { if (p.textContent !== paragraphs[i]) p.replaceChildren(...linked(paragraphs[i])); });
}

// "plate XIV.5" as a link when that plate is built alongside: where a reference is, generator/page/references.py says
// (compiled, references.js), as it does for the page as built (generator/page/crossrefs.py).
const LINKS = data.links || {};

/** A text as nodes: its references to the plates built alongside as links, the rest as text. */
function linked(text) {
  return split_references(text, LINKS, []).map((piece, i) => (i % 2 === 0 ? document.createTextNode(piece)
    : Object.assign(document.createElement("a"), { href: carried(piece[1]), textContent: piece[0] })));
}

// A link to a plate whose URL reads some of this page's choices carries them (the plate module's LINK_KEYS, as
// render.py gives them: {plate id: keys}), so the reader arrives at the same model, GPU, network or batch.
const CARRY = data.carry || {};
let carrying = null; // the selection shown, whose choices the links carry

/** The address of plate id's page, with the choices it reads from the selection shown. */
function carried(id) {
  const keys = CARRY[id];
  if (!keys || !carrying) return LINKS[id];
  const entries = keys.filter((k) => carrying[k] !== undefined).map((k) => `${k}=${encodeURIComponent(carrying[k])}`);
  return entries.length ? `${LINKS[id]}#${entries.join("&")}` : LINKS[id];
}

/** Every link to a plate that carries choices, pointed at sel's (called before the texts are written for sel). */
export function carryLinks(sel) {
  carrying = sel;
  const ids = Object.keys(CARRY).filter((id) => LINKS[id]);
  if (!ids.length) return;
  for (const a of document.querySelectorAll("a[href]")) {
    const page = a.getAttribute("href").split("#")[0];
    const id = ids.find((i) => LINKS[i] === page);
    if (id) a.setAttribute("href", carried(id));
  }
}
