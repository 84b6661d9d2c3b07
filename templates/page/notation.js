// The plate's number formatter in the page: generator/notation.py function by function (the rule is in its
// docstring), so a number reads the same in the page as built and in the live page. Every plate's words use it.
export const GB = 1e9;

/** notation.num: half-up on the exact value (toFixed's rule), thousands separated. */
export function num(value, digits = 0) {
  let text = Number(value).toFixed(digits);
  if (/^-0(\.0*)?$/.test(text)) text = text.slice(1);
  const [whole, part] = text.split(".");
  return whole.replace(/\B(?=(\d{3})+(?!\d))/g, ",") + (part !== undefined ? `.${part}` : "");
}

/** notation.sig: a measure to significant figures with their trailing zeros. */
export function sig(value, figures = 3) {
  if (value === 0) return "0";
  const exponent = Number(Number(value).toExponential(figures - 1).split("e")[1]);
  return num(value, Math.max(0, figures - 1 - exponent));
}

/** notation.given: a value given by an author or reader, no zeros added. */
export function given(value, figures = 3) {
  const text = sig(value, figures);
  return text.includes(".") ? text.replace(/0+$/, "").replace(/\.$/, "") : text;
}

const TIME_UNITS = [["s", 1e-2, 1.0], ["ms", 1e-3, 1e-3], ["µs", 1e-6, 1e-6], ["ns", 0.0, 1e-9]];
const SIZE_UNITS = [["TB", 1e12], ["GB", 1e9], ["MB", 1e6], ["kB", 1e3], ["B", 0.0]];
/** notation._rounded: |value| at three significant figures, which picks its unit. */
const rounded = (value) => Number(Math.abs(value).toExponential(2));

/** notation.seconds: three significant figures in the unit that suits the time (digits ignored). */
export function seconds(value, digits = null) {
  if (value === 0) return "0 s";
  const [unit, , scale] = TIME_UNITS.find(([, floor]) => rounded(value) >= floor);
  return `${sig(value / scale)} ${unit}`;
}

/** notation.data_size: bytes in the decimal unit that suits them. */
export function data_size(value) {
  if (value === 0) return "0 B";
  const [unit, scale] = SIZE_UNITS.find(([, s]) => rounded(value) >= s);
  return `${sig(scale ? value / scale : value)} ${unit}`;
}

export const gigabytes = (value) => data_size(value * 1e9);

/** notation.percent: a measure, whole when it is a whole percent, never 0% unless zero (digits ignored). */
export function percent(fraction, digits = null) {
  const value = fraction * 100;
  const whole = Math.round(value);
  if (value === 0 || Math.abs(value - whole) <= 1e-9 * Math.max(1, Math.abs(value))) return `${num(whole)}%`;
  return `${sig(value)}%`;
}

/** notation.fraction: a share as a decimal measure. */
export const fraction = (value) => sig(value);

/** notation.about: a rounded figure for 'about …', to significant figures, ties away from zero, no zeros kept. */
export function about(value, figures = 2) {
  if (value === 0) return "0";
  let exponent = Math.floor(Math.log10(Math.abs(value)));
  if (10 ** (exponent + 1) <= Math.abs(value)) exponent += 1; // log10 a hair off at a power of ten
  if (10 ** exponent > Math.abs(value)) exponent -= 1;
  const places = figures - exponent - 1;
  const text = places >= 0 ? num(value, places) : num(Math.round(Math.abs(value) / 10 ** -places) * 10 ** -places *
    Math.sign(value));
  return text.includes(".") ? text.replace(/0+$/, "").replace(/\.$/, "") : text;
}

const SUPERSCRIPTS = { 0: "⁰", 1: "¹", 2: "²", 3: "³", 4: "⁴", 5: "⁵", 6: "⁶", 7: "⁷", 8: "⁸", 9: "⁹", "-": "⁻" };
/** notation.power: 10, 9 → '10⁹'. */
export const power = (base, exponent) => `${base}${String(exponent).replace(/[0-9-]/g, (c) => SUPERSCRIPTS[c])}`;
