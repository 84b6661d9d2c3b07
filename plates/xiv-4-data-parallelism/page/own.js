// The reader's own run (issue 10; generator/custom.py): free inputs, checked as the schema checks.
import { given, num, percent } from "./notation.js";
import { OWN, data, form } from "./data.js";
import { factsOf } from "./selection.js";

// --- the reader's own run (issue 10; generator/custom.py): free inputs, checked as the schema checks --------

const ownInputs = Object.fromEntries(Object.keys(OWN.fields).map((k) => [k, document.getElementById(`own-${k}`)]));
const ownFieldsets = [...document.querySelectorAll("[data-own-for]")];
/** Show or hide the reader's own fields; while one is open, the phone's control bar lays them out in full
 * (plate.css: .own-open) rather than in its one sideways row. */
function showOwnFields(sel) {
  for (const box of ownFieldsets) box.hidden = sel[box.dataset.ownFor] !== OWN.id;
  form.classList.toggle("own-open", ownFieldsets.some((box) => !box.hidden));
}
const INT_TEXT = /^[+-]?\d(?:[\d,_]*\d)?$/;
const FLOAT_TEXT = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const SPECIAL_TEXT = /^([+-]?)(inf|infinity|nan)$/i;

/** custom.parse: a whole number (exact digits kept), a float, or the text itself. */
function parseTyped(text) {
  const t = text.trim();
  if (INT_TEXT.test(t)) {
    const digits = t.replace(/[,_]/g, "");
    return { type: "int", big: BigInt(digits.replace(/^\+/, "")), value: Number(digits) };
  }
  if (FLOAT_TEXT.test(t)) return { type: "float", value: Number(t) };
  const special = SPECIAL_TEXT.exec(t);
  if (special) {
    const value = special[2].toLowerCase() === "nan" ? NaN : special[1] === "-" ? -Infinity : Infinity;
    return { type: "float", value };
  }
  return { type: "text" };
}

const grouped = (big, sep) => big.toString().replace(/\B(?=(\d{3})+(?!\d))/g, sep);

/** schema.passes: whether a typed value passes one test of a rule (the rules are data: schema.NUMBER_RULES). */
function passes(test, v) {
  const [name, x] = Array.isArray(test) ? test : [test];
  const number = v.type === "int" || v.type === "float";
  const exact = v.type === "int" && Number.isInteger(x); // a whole number against a whole bound: digit for digit
  if (name === "int") return v.type === "int";
  if (name === "number") return number;
  if (name === "finite") return number && Number.isFinite(v.value);
  if (name === "not_whole_float") {
    return !(v.type === "float" && Number.isFinite(v.value) && Number.isInteger(v.value) && v.value > 0);
  }
  if (name === "above") return exact ? v.big > BigInt(x) : v.value > x;
  if (name === "at_least") return exact ? v.big >= BigInt(x) : v.value >= x;
  if (name === "at_most") return exact ? v.big <= BigInt(x) : v.value <= x;
  throw new Error(`unknown test ${name}`);
}

/** custom.check: [value, null] for a good value of a field, [null, message] otherwise: the field's first rule
 * broken says why (schema.broken_rule), then what was typed, quoted (custom.shown). */
export function ownCheck(field, text) {
  const v = parseTyped(text);
  const broken = OWN.fields[field].rules.find(([tests]) => !tests.every((test) => passes(test, v)));
  if (!broken) return [v.value, null];
  const why = broken[1].replace("{example}", () => grouped(BigInt(v.value), "_"));
  const shownText = JSON.stringify([...text].length <= 60 ? text : `${[...text].slice(0, 57).join("")}…`);
  return [null, OWN.got.replace("{why}", () => why).replace("{text}", () => shownText)];
}

/** A message beside a field (null clears it): aria-invalid, and the message as its description. */
function ownMessage(field, message) {
  const input = ownInputs[field];
  const box = document.getElementById(`own-${field}-error`);
  box.textContent = message || "";
  box.hidden = !message;
  if (message) {
    input.setAttribute("aria-invalid", "true");
    input.setAttribute("aria-describedby", box.id);
  } else {
    input.removeAttribute("aria-invalid");
    input.removeAttribute("aria-describedby");
  }
}

/** The slider's value as a fraction (its text is whole percent). */
const sliderMfu = () => Number(ownInputs.mfu.value) / 100;

export function ownSliderShown() {
  document.getElementById("own-mfu-shown").textContent = percent(sliderMfu());
}

/** The free inputs that count for a selection: a custom model's, batch's, network's; the MFU always. */
function ownFieldsFor(sel) {
  return Object.keys(OWN.fields).filter((k) => {
    const control = OWN.fields[k].control;
    return control === "mfu" || sel[control] === OWN.id;
  });
}

/** custom.shape_problem: the optional layer shape, all or none, leaving room beside the embeddings (the rules and
 * messages are custom.SHAPE_RULES). */
function shapeProblem(values) {
  const { partial, room } = OWN.shape_rules;
  const given = OWN.shape.filter((k) => values[k] !== undefined);
  if (given.length && given.length < OWN.shape.length) return [OWN.shape.find((k) => values[k] === undefined), partial];
  if (given.length) {
    const least = room.over.reduce((product, k) => product * values[k], room.factor);
    if (values[room.field] <= least) return [room.field, room.say.replace("{least}", () => num(least))];
  }
  return null;
}

/** A selection with the free inputs that count read in; null when one of them is not a good value (the
 * figures then stay as they are). Texts come from the fields, or from `texts` (the URL) when given. */
export function ownSelection(base, texts = null) {
  showOwnFields(base);
  const sel = { ...base };
  const values = {};
  let ok = true;
  for (const field of Object.keys(OWN.fields)) ownMessage(field, null);
  for (const field of ownFieldsFor(base)) {
    const text = field === "mfu" && texts === null ? String(sliderMfu()) : texts ? texts[field] : ownInputs[field].value;
    if (OWN.shape.includes(field) && text.trim() === "") continue; // optional, left empty
    const [value, message] = ownCheck(field, text);
    if (message) {
      ownMessage(field, message);
      ok = false;
    } else {
      values[field] = value;
    }
  }
  const problem = ok && base.model === OWN.id ? shapeProblem(values) : null;
  if (problem) {
    ownMessage(problem[0], problem[1]);
    ok = false;
  }
  if (!ok) return null;
  Object.assign(sel, values);
  if (sel.mfu === data.presets.workshop.mfu) delete sel.mfu;
  // custom.model_problem: good values one by one can still overflow the model together. Presets alone cannot:
  // the build refuses any selection of them that does.
  if (ownUrlEntries(sel).length === 0) return sel;
  const f = factsOf({ ...data.default, ...sel });
  const far = (v) => !Number.isFinite(v) || Math.abs(v) >= OWN.largest;
  const results = (name) => (name in f ? [f[name]] : f.points.map((p) => p[name]));
  if (OWN.results.some((name) => results(name).some(far))) {
    for (const field of ownFieldsFor(base)) if (field !== "mfu") ownMessage(field, OWN.too_far);
    return null;
  }
  return sel;
}

/** The reader's own values named in the URL, written into the fields; a bad one is shown with its message
 * and the figures fall back to the plate's default for that control. */
export function ownFromUrl(sel) {
  const params = new URLSearchParams(location.hash.slice(1));
  const texts = {};
  for (const field of Object.keys(OWN.fields)) {
    texts[field] = params.has(field) ? params.get(field) : field === "mfu" ? String(data.presets.workshop.mfu)
      : OWN.shape.includes(field) && sel.model === OWN.id && params.has("params") ? "" : ownInputs[field].value;
    if (field === "mfu") {
      const [value] = ownCheck("mfu", texts.mfu);
      if (value !== null) ownInputs.mfu.value = String(Math.round(value * 100));
      ownSliderShown();
    } else {
      ownInputs[field].value = texts[field];
    }
  }
  const good = ownSelection(sel, texts);
  if (good) return good;
  // Keep the messages the check left, and draw what the controls would show without the bad values.
  const fallback = { ...sel };
  for (const control of ["model", "batch", "network"]) {
    if (fallback[control] === OWN.id) fallback[control] = data.default[control];
  }
  const shownMessages = Object.keys(OWN.fields).map((k) => document.getElementById(`own-${k}-error`).textContent);
  const result = ownSelection(fallback, texts) || { ...fallback };
  Object.keys(OWN.fields).forEach((k, i) => { if (shownMessages[i]) ownMessage(k, shownMessages[i]); });
  showOwnFields(sel);
  return result;
}

/** The reader's own values of a selection, for the URL. */
export function ownUrlEntries(sel) {
  return Object.keys(OWN.fields).filter((k) => sel[k] !== undefined).map((k) => [k, String(sel[k])]);
}
