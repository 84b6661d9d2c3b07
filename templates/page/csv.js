// The shown selection's numbers as CSV, downloaded from the page: the plate's PAGE csv_rows (its Python, compiled
// at build time) under the site CSV's columns. A plate's page/csv.js replaces this module.
import { KEYS, data } from "./data.js";
import { page_csv_rows } from "./py.page.js";

const csvCell = (v) => (/[",\r\n]/.test(String(v)) ? `"${String(v).replace(/"/g, '""')}"` : String(v));

/** The selection's rows, a line each, under the columns of the site's CSV. */
export function selectionCsv(f) {
  return `${[data.csv_columns, ...page_csv_rows(f)].map((row) => row.map(csvCell).join(",")).join("\n")}\n`;
}

/** Save the shown selection's CSV, made here: a Blob handed to a download link, no request. */
export function downloadSelection(f) {
  const name = `${data.csv_name.replace(/\.csv$/, "")}-${KEYS.map((k) => f.selection[k]).join("-")}.csv`;
  const url = URL.createObjectURL(new Blob([selectionCsv(f)], { type: "text/csv;charset=utf-8" }));
  const link = Object.assign(document.createElement("a"), { href: url, download: name });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 0);
}
