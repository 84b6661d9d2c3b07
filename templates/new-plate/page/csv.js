// "This selection's numbers (CSV)": the rows of the figure.
import { data } from "./data.js";

export function selectionCsv(f) {
  return ["n,y", ...f.points.map(({ n, y }) => `${n},${y}`)].join("\n") + "\n";
}

export function downloadSelection(f) {
  const link = document.createElement("a");
  link.href = URL.createObjectURL(new Blob([selectionCsv(f)], { type: "text/csv" }));
  link.download = data.csv_name.replace(/\.csv$/, "-selection.csv");
  link.click();
  URL.revokeObjectURL(link.href);
}
