// The reader's own values beside the presets (free inputs): read and checked by the plate's Python, its PAGE's own
// role compiled (py.page.js: page_own; docs/plates.md), which this module gives the fields' texts and whose answer
// it puts in the page. A plate without that role has none. The fields: an input #own-<field> for each field of the
// page data's own.fields, its message #own-<field>-error, its output #own-<field>-shown if it has one, and
// [data-own-for=<control>] around the fields shown while that control is own.id.
import { data, form } from "./data.js";
import { page_own } from "./py.page.js";

const OWN = page_own ? data.own : null;
const FIELDS = OWN ? Object.keys(OWN.fields) : [];
const inputOf = (field) => document.getElementById(`own-${field}`);
const boxes = OWN ? [...document.querySelectorAll("[data-own-for]")] : [];
const typed = () => Object.fromEntries(FIELDS.map((field) => [field, inputOf(field).value]));
// Each change answers for every field: only what differs is written, so a change that leaves the fields as they
// were restyles none of them.
const putHidden = (el, hidden) => { if (el.hidden !== hidden) el.hidden = hidden; };
const putText = (el, text) => { if (el.textContent !== text) el.textContent = text; };

/** Show or hide the fields of each control; while one is open, the phone's control bar lays them out in full
 * (plate.css: .own-open) rather than in its one sideways row. */
function showFields(sel) {
  for (const box of boxes) putHidden(box, sel[box.dataset.ownFor] !== OWN.id);
  form.classList.toggle("own-open", boxes.some((box) => !box.hidden));
}

/** A message beside a field (null clears it): aria-invalid, and the message as its description. */
function say(field, message) {
  const input = inputOf(field);
  const box = document.getElementById(`own-${field}-error`);
  putText(box, message || "");
  putHidden(box, !message);
  if (message) {
    input.setAttribute("aria-invalid", "true");
    input.setAttribute("aria-describedby", box.id);
  } else {
    input.removeAttribute("aria-invalid");
    input.removeAttribute("aria-describedby");
  }
}

/** The role's answer into the page: what each input and output shows, each field's message. */
function put(answer) {
  for (const [field, text] of Object.entries(answer.inputs || {})) inputOf(field).value = text;
  for (const [field, text] of Object.entries(answer.shown || {})) {
    putText(document.getElementById(`own-${field}-shown`), text);
  }
  if (answer.messages) for (const field of FIELDS) say(field, answer.messages[field] || null);
}

/** The free inputs' outputs, as the reader moves one. */
export function ownSliderShown() {
  if (OWN) put(page_own(null, typed(), null, data));
}

/** A selection with the free inputs that count read in; null when one of them is not a good value (the figures
 * then stay as they are). */
export function ownSelection(base) {
  if (!OWN) return base;
  showFields(base);
  const answer = page_own(base, typed(), null, data);
  put(answer);
  return answer.selection;
}

/** The reader's own values named in the URL, written into the fields, and the selection they make; a bad one is
 * shown with its message, and the figures show the plate's default for its control. */
export function ownFromUrl(sel) {
  if (!OWN) return sel;
  const params = new URLSearchParams(location.hash.slice(1));
  const linked = Object.fromEntries(FIELDS.filter((field) => params.has(field))
    .map((field) => [field, params.get(field)]));
  const answer = page_own(sel, typed(), linked, data);
  put(answer);
  showFields(sel);
  return answer.selection;
}

/** The reader's own values of a selection, for the URL. */
export const ownUrlEntries = (sel) => FIELDS.filter((k) => sel[k] !== undefined).map((k) => [k, String(sel[k])]);

/** The role itself, for readers of window.plate: page_own(selection, typed, linked, data). */
export const ownRead = (sel, typedTexts, linked = null) => (OWN ? page_own(sel, typedTexts, linked, data) : null);
