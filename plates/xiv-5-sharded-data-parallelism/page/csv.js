// The shown selection's numbers as CSV, downloaded from the page: a row per stage and replica count, the columns
// of the site's CSV (plate/hooks.py CSV_COLUMNS).
import { KEYS, data } from "./data.js";

const csvCell = (v) => (/[",\r\n]/.test(String(v)) ? `"${String(v).replace(/"/g, '""')}"` : String(v));

export function selectionCsv(f) {
  const s = f.selection;
  const lines = [data.csv_columns.join(",")];
  for (const st of f.stages) {
    f.replicas.forEach((n, i) => lines.push([s.model, s.gpu, s.precision, s.network, st.stage, n,
      st.states_bytes[i] / 1e9, st.traffic_bytes[i] / 1e9, st.traffic_s[i]].map(csvCell).join(",")));
  }
  return `${lines.join("\n")}\n`;
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
