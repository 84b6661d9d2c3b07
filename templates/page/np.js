// numpy and math as the page's compiled Python sees them (generator/page/compiler.py): the same names on single numbers,
// each doing what numpy does to one element, so a function the build broadcasts over arrays runs here per value.
const isnan = (x) => Number.isNaN(x);
export const np = {
  where: (condition, a, b) => (condition ? a : b),
  // numpy's maximum and minimum return NaN when either is NaN; Math.max and Math.min do too
  maximum: (a, b) => Math.max(a, b),
  minimum: (a, b) => Math.min(a, b),
  equal: (a, b) => a === b,
  ceil: Math.ceil, floor: Math.floor, log2: Math.log2, log10: Math.log10, sqrt: Math.sqrt, exp: Math.exp,
  log: Math.log, abs: Math.abs, isnan, isfinite: (x) => Number.isFinite(x),
  asarray: (x) => x, float64: (x) => Number(x),
  nan: NaN, inf: Infinity,
};
export const math = {
  ceil: Math.ceil, floor: Math.floor, log2: Math.log2, log10: Math.log10, sqrt: Math.sqrt, exp: Math.exp,
  log: Math.log, fabs: Math.abs, isnan, isfinite: (x) => Number.isFinite(x), inf: Infinity, nan: NaN, pi: Math.PI,
};
