// The shown selection's numbers as CSV, downloaded from the page.
import { KEYS, data } from "./data.js";

// --- the shown selection's numbers as CSV (generator/facts.py selection_rows) --------------------------

/** A cell as a CSV holds it: quoted only when it must be. */
const csvCell = (v) => (/[",\r\n]/.test(String(v)) ? `"${String(v).replace(/"/g, '""')}"` : String(v));

/** The selection's CSV: a row per replica count, the columns Python declares (facts.SELECTION_COLUMNS, each
 * [name, source, field, divisor]: the selection's id or option, a model input, or a value of the run). */
export function selectionCsv(f) {
  const columns = data.csv_columns;
  const value = ([, source, field, divisor], r) => {
    const v = source === "sel" ? f.sel[field] ?? data.default[field] : source === "inputs" ? f.inputs[field]
      : (source === "cluster" ? f.cluster : f.run)[field][r];
    return typeof v === "number" && divisor !== 1 ? v / divisor : v;
  };
  const lines = [columns.map(([name]) => name).join(",")];
  for (let r = 0; r < f.run.replicas.length; r++) lines.push(columns.map((c) => csvCell(value(c, r))).join(","));
  return `${lines.join("\n")}\n`;
}

/** The file a selection's CSV is saved as: the site's CSV's name, then the selection's ids. */
const selectionCsvName = (sel) => `${data.csv_name.replace(/\.csv$/, "")}-${KEYS.map((k) => sel[k]).join("-")}.csv`;

/** Save the shown selection's CSV, made here: a Blob handed to a download link, no request. */
export function downloadSelection(f) {
  const url = URL.createObjectURL(new Blob([selectionCsv(f)], { type: "text/csv;charset=utf-8" }));
  const link = Object.assign(document.createElement("a"), { href: url, download: selectionCsvName(f.sel) });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 0);
}
