// The facts of a selection, as plate/__init__.py facts_data names them, and the figure's rows.
import { P, REPLICAS } from "./data.js";

export function factsOf(sel) {
  const rate = P.rates[sel.rate];
  return { rate, points: REPLICAS.map((n) => ({ n, y: n * rate.per_step })), caption: rate.name };
}

export const gridRows = (f) => f.points.map(({ n, y }) => ({ n, y }));
// The engine's views ask for these datasets too; this plate's figure has none of them.
export const factsRows = () => [];
export const timelineRows = () => [];
export const timelineFacts = () => [];
export const memoryRows = () => [];
