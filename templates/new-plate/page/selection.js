// The facts of a selection, as plate/__init__.py facts_data names them, and the figure's rows.
import { P, REPLICAS } from "./data.js";

export function factsOf(sel) {
  const rate = P.rates[sel.rate];
  return { rate, points: REPLICAS.map((n) => ({ n, y: n * rate.per_step })), caption: rate.name };
}

/** The figure's rows (plate/__init__.py `rows` makes the same). */
export const lineRows = (f) => f.points.map(({ n, y }) => ({ n, y }));

/** {key of the page data's `data`: rows of one selection}, for every dataset the figures read (views.js feeds them). */
export const DATASETS = { line: lineRows };

// The rows functions the engine's main.js exposes by name (window.plate): this plate has none of those datasets.
export const gridRows = () => [];
export const factsRows = () => [];
export const timelineRows = () => [];
export const timelineFacts = () => [];
