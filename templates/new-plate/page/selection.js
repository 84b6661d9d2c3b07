// The facts of a selection, as plate/__init__.py facts_data names them, and the figure's rows.
import { P } from "./data.js";
import { counts } from "./model.js";

const N = counts(P.steps);

export function factsOf(sel) {
  const rate = P.rates[sel.rate];
  return { rate, points: N.map((n) => ({ n, y: n * rate.per_step })), caption: rate.name };
}

/** {dataset name: rows of one selection}, for every dataset the figures read (views.js feeds them); plate/
 * __init__.py `rows` makes the same. */
export const DATASETS = { line: (f) => f.points.map(({ n, y }) => ({ n, y })) };
