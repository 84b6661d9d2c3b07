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

/** [key, value] of each control the URL's fragment names by an id the page does not have. */
export function unknownInUrl() {
  const params = new URLSearchParams(location.hash.slice(1));
  return ALL.filter((k) => params.has(k) && !data.choices[k].includes(params.get(k))).map((k) => [k, params.get(k)]);
}

const SHOWN_CHARS = 40; // of an unknown id in the note: a long one would not leave it one line

/** Say in one polite line near the controls what the link named that this page does not have, and what it shows
 * instead (the default of each); with none, no line. */
export function sayUnknown(unknown) {
  const note = document.getElementById("link-note");
  if (!note || (unknown.length === 0 && note.hidden)) return; // said nothing, and says nothing: every change
  const cut = (v) => (v.length > SHOWN_CHARS ? `${v.slice(0, SHOWN_CHARS - 1)}…` : v);
  const list = (items) => (items.length < 2 ? items.join("")
    : `${items.slice(0, -1).join(", ")} and ${items[items.length - 1]}`);
  const named = list(unknown.map(([k, v]) => `${k} "${cut(v)}"`));
  const shown = unknown.map(([k]) => selects[k]?.selectedOptions[0]?.text ?? data.default[k]);
  note.textContent = unknown.length === 0 ? ""
    : `The link named ${named}, which this page does not have; showing the default${shown.length > 1 ? "s" : ""}, `
      + `${list(shown)}.`;
  note.hidden = unknown.length === 0;
}

/** Keep the selection in the URL without adding history entries for every change. Written once the controls
 * have rested for URL_REST_MS, or at once when the reader leaves the page's window (to the address bar, to share
 * the link) or the page: history.replaceState takes this browser from several to tens of milliseconds, which
 * neither a redraw nor a run of quick changes should wait for. */
const URL_REST_MS = 250;
let urlPending = null;
let urlTimer = 0;
let urlFrom = ""; // the fragment when urlPending was given: one that names a selection since is a link followed

export function selectionToUrl(sel) {
  urlPending = sel; // its fragment is made when written: a run of quick changes makes only the last one's
  urlFrom = location.hash;
  clearTimeout(urlTimer);
  urlTimer = setTimeout(writeUrl, URL_REST_MS);
}

/** Write the selection last given to selectionToUrl into the URL now (the page shows other than the link said). */
export function writeUrl() {
  clearTimeout(urlTimer);
  if (urlPending === null) return;
  // A selection link followed since (its hashchange may not have run yet) wins over the one it replaced: writing
  // the older selection now would make the page read its own stale URL instead of the link.
  const followed = location.hash !== urlFrom && ALL.some((k) => new URLSearchParams(location.hash.slice(1)).has(k));
  if (followed) { urlPending = null; return; }
  const params = new URLSearchParams(KEYS.map((k) => [k, urlPending[k]]));
  for (const [k, v] of extraEntries(urlPending)) params.set(k, v);
  history.replaceState(null, "", `#${params}`);
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
