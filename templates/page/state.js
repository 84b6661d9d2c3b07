// The selection in the URL's fragment, and the selection the controls show.
import { ALL, CLUSTER_KEYS, KEYS, data, selects } from "./data.js";
import { ownUrlEntries } from "./own.js";

/** The selection named in the URL's fragment, falling back to the plate's default for each key. */
export function selectionFromUrl() {
  const params = new URLSearchParams(location.hash.slice(1));
  const chosen = {};
  for (const k of ALL) {
    const wanted = params.get(k);
    chosen[k] = data.choices[k].includes(wanted) ? wanted : data.default[k];
  }
  return chosen;
}

/** Keep the selection in the URL without adding history entries for every change. Written once the controls
 * have rested for URL_REST_MS, or at once when the reader leaves the page's window (to the address bar, to share
 * the link) or the page: history.replaceState takes this browser from several to tens of milliseconds, which
 * neither a redraw nor a run of quick changes should wait for. */
const URL_REST_MS = 250;
let urlPending = null;
let urlTimer = 0;

export function selectionToUrl(sel) {
  const params = new URLSearchParams(KEYS.map((k) => [k, sel[k]]));
  for (const [k, v] of extraEntries(sel)) params.set(k, v);
  urlPending = `#${params}`;
  clearTimeout(urlTimer);
  urlTimer = setTimeout(writeUrl, URL_REST_MS);
}

function writeUrl() {
  clearTimeout(urlTimer);
  if (urlPending === null) return;
  history.replaceState(null, "", urlPending);
  urlPending = null;
}
window.addEventListener("blur", writeUrl);
window.addEventListener("pagehide", writeUrl);
document.addEventListener("visibilitychange", writeUrl);

export function currentSelection() {
  return Object.fromEntries(ALL.map((k) => [k, selects[k] ? selects[k].value : data.default[k]]));
}

/** The real cluster's choices that are not DDP's defaults, then the reader's own values: the URL's extra entries. */
export const extraEntries = (sel) => [...CLUSTER_KEYS.filter((k) => sel[k] !== undefined && sel[k] !== data.default[k])
  .map((k) => [k, sel[k]]), ...ownUrlEntries(sel)];
