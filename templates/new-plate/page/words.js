// Every sentence of the readout, the figure's description and its data table, written once: the page calls these,
// and the build runs this module under node for the page as built. It imports only the number formatter.
import { num, sig } from "./notation.js";

export function readoutParagraphs(f, W) {
  const last = f.points[f.points.length - 1];
  return [`At ${f.rate.name}, y reaches ${sig(last.y)} at n = ${num(last.n)}.`];
}

export function tableRows(f, figureId) {
  return f.points.map(({ n, y }) => [num(n), sig(y)]);
}

export function describe(f, figureId, W) {
  const first = f.points[0];
  const last = f.points[f.points.length - 1];
  return `y grows from ${sig(first.y)} at n = ${num(first.n)} to ${sig(last.y)} at n = ${num(last.n)}.`;
}

export function words(f, W, figureIds) {
  return {
    readout: readoutParagraphs(f, W),
    describe: Object.fromEntries(figureIds.map((id) => [id, describe(f, id, W)])),
    tables: Object.fromEntries(figureIds.map((id) => [id, tableRows(f, id)])),
  };
}
