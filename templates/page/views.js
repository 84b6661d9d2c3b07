// The live Vega views: the runtime, made once, each figure's view, and the rows and width it is given.
import { data } from "./data.js";
import { DATASETS } from "./selection.js";
import { nextTask } from "./schedule.js";

/** The Vega runtime, run once, for the first view (liveView asks only while there is no window.vega). The page
 * carries it inert (a script of type text/plain), so loading the page does not parse it; run as a script element of
 * the same text, the page's CSP allows it by the hash it lists. vl-convert's fallback is a module that has run at
 * load already. */
function vegaRuntime() {
  const script = document.createElement("script");
  script.textContent = document.getElementById("vega-runtime").textContent;
  document.head.append(script);
  window.vegaRuntime();
}

/** A live Vega view for one figure, drawn off-page with the rows of the selection shown at that moment (`current`
 * reads it) and swapped in for its static SVG. The view is made in one task, run in the next and drawn in a third,
 * so input and paint get in between. */
export async function liveView(figure, current, width) {
  if (!window.vega) {
    vegaRuntime();
    await nextTask(); // running the runtime is a long task on its own: the view is made in the next one
  }
  // The dataflow was parsed at build time and is carried as JSON of its own, read now; only vl-convert's fallback
  // runtime carries the parser, and the spec.
  const runtime = figure.vega ? window.vega.parse(figure.vega, null, { ast: true })
    : JSON.parse(document.getElementById(`dataflow-${figure.id}`).textContent);
  const holder = document.querySelector(`#${figure.id} .chart`);
  const live = document.createElement("div");
  live.className = "live";
  const view = new window.vega.View(runtime, {
    expr: figure.vega ? window.vegaExpressionInterpreter : window.vegaExpressions, // the fallback interprets ASTs
    renderer: "none", // the first run lays the marks out and draws nothing; the SVG renderer comes after it
    hover: false,
  });
  view.initialize(live);
  const names = new Set(figure.datasets || figure.vega.data.map((d) => d.name));
  const made = { view, holder, names, stamps: {}, tuples: {}, fed: null, width: null };
  await nextTask();
  feed(made, current()); // the controls may have moved while the view was made
  fitWidth(made, width);
  await view.runAsync();
  await nextTask(); // drawing the SVG is the other half of a first run: a task of its own
  view.renderer("svg").initialize(live); // made anew on the same element, which it empties first
  await view.runAsync();
  holder.replaceChildren(live);
  holder.dataset.live = "true";
  return made;
}

/** Hand a view the rows and marks of a selection: only the datasets its spec declares, and only those whose
 * rows differ from what it drew (the memory figure, say, follows only the model, GPU and sharding). */
// NaN and ±Infinity as themselves: JSON would write both as null and hide a change between them.
const exact = (key, value) => (typeof value === "number" && !Number.isFinite(value) ? String(value) : value);

export function feed(made, f) {
  const rows = (f.rows ||= {}); // made once per selection, shared by the views that show them
  let changed = false;
  for (const [name, make] of Object.entries(DATASETS)) { // the plate's: {dataset name: its rows for a selection}
    if (!made.names.has(name)) continue;
    rows[name] ||= { values: make(f) };
    rows[name].stamp ||= JSON.stringify(rows[name].values, exact);
    if (made.stamps[name] === rows[name].stamp) continue;
    made.stamps[name] = rows[name].stamp;
    handOver(made, name, rows[name].values);
    changed = true;
  }
  made.fed = f;
  // Lay the view out anew: autosize "fit" sizes the plot from the axis labels once, so without this a redraw kept
  // the label room of the selection shown before, and longer labels stuck out of the figure. (Laying out from the
  // full width, exactly as a view opened at the selection is, would cost a second dataflow pass per change.)
  if (changed) made.view.resize();
}

/** Hand a dataset its new rows, keeping the tuples the view holds: a row at the same place changes only its
 * tuple's differing fields, so its marks stay and the renderer rewrites only changed attributes (replacing the
 * tuples made every mark and SVG element anew). Each view gets its own copies: Vega tags a row as its tuple. */
function handOver(made, name, rows) {
  const held = made.tuples[name];
  if (!held) {
    made.tuples[name] = rows.map((row) => ({ ...row }));
    made.view.data(name, made.tuples[name]);
    return;
  }
  const change = made.view.changeset();
  const kept = Math.min(held.length, rows.length);
  for (let i = 0; i < kept; i += 1) {
    for (const field of Object.keys(rows[i])) {
      if (!Object.is(held[i][field], rows[i][field])) change.modify(held[i], field, rows[i][field]);
    }
  }
  const added = rows.slice(kept).map((row) => ({ ...row }));
  change.insert(added).remove(held.slice(kept));
  made.tuples[name] = held.slice(0, kept).concat(added);
  made.view.change(name, change);
}

/** Draw at the holder's width (text stays at its set size), but no wider than a printed page's measure
 * (about 680 CSS px), so a figure scaled to the paper keeps legible text whatever screen it was drawn on.
 * `measured` is the holder's width when the caller has read it already (one layout for all the figures).
 * True when the width changed (the view then needs a run). */
const printing = window.matchMedia("print");
let paper = false; // between beforeprint and afterprint
/** Printing begins (true) or ends (false): main.js's print listeners say so. */
export const setPaper = (on) => { paper = on; };

export function fitWidth(made, measured) {
  const clientWidth = measured === undefined ? made.holder.clientWidth : measured;
  const width = paper || printing.matches ? 720 : Math.min(720, Math.max(260, Math.floor(clientWidth)));
  // Compared with the width asked for last: view.width() reads back the plot's width inside the axes (autosize
  // "fit"), which never equals it, so comparing with that redrew every view on every resize notification.
  if (!width || made.width === width) return false;
  made.width = width;
  made.view.width(width);
  return true;
}
