// A plate's selection in the page: its facts and its figures' rows, made by the plate's own Python (its PAGE's
// facts and datasets), compiled for the page at build time (generator/page/compiler.py). A plate's page/selection.js
// replaces this module.
import { data } from "./data.js";
import { page_datasets, page_facts } from "./py.page.js";

/** The facts of a selection {control: id}, from the presets the build wrote into the page. */
export const factsOf = (sel, presets = data.presets) => page_facts(sel, presets);

// The rows the views feed, by dataset name (the build lists the names the plate's datasets give): made once per
// facts for all the views.
const made = new WeakMap();
const rowsOf = (f) => { if (!made.has(f)) made.set(f, page_datasets(f)); return made.get(f); };
export const DATASETS = Object.fromEntries(data.datasets.map((name) => [name, (f) => rowsOf(f)[name]]));
