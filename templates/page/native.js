// What the page's formatter (generator/page/notation.py, compiled) cannot say in the Python the page runs: a double's
// exact decimal digits. generator/page/native.py has the same two functions for the build; tests/test_notation.py holds
// the two to the same text for any double.

/** native.fixed: value rounded half-up on its exact binary value to digits places (negative: tens, hundreds, …),
 * in full, ungrouped. toFixed where it can (0 to 100 places, below 1e21), else the same rule on the exact value. */
export function fixed(value, digits) {
  value = Number(value);
  if (!Number.isFinite(value)) return String(value);
  if (digits >= 0 && digits <= 100 && Math.abs(value) < 1e21) return value.toFixed(digits);
  // value = mantissa × 2^power exactly; rounded = the integer nearest value × 10^digits, a tie away from zero
  const bits = new DataView(new ArrayBuffer(8));
  bits.setFloat64(0, Math.abs(value));
  const word = bits.getBigUint64(0);
  const biased = Number(word >> 52n);
  const mantissa = (word & ((1n << 52n) - 1n)) | (biased ? 1n << 52n : 0n);
  const power = (biased || 1) - 1075;
  let numerator = power >= 0 ? mantissa << BigInt(power) : mantissa;
  let denominator = power >= 0 ? 1n : 1n << BigInt(-power);
  if (digits >= 0) numerator *= 10n ** BigInt(digits);
  else denominator *= 10n ** BigInt(-digits);
  let rounded = numerator / denominator;
  if (2n * (numerator % denominator) >= denominator) rounded += 1n;
  let text = rounded.toString();
  if (digits > 0) {
    text = text.padStart(digits + 1, "0");
    text = `${text.slice(0, -digits)}.${text.slice(-digits)}`;
  } else if (digits < 0 && rounded !== 0n) {
    text += "0".repeat(-digits);
  }
  return (value < 0 ? "-" : "") + text;
}

/** native.exponent: the decimal exponent of value once rounded to figures significant figures (NaN when none). */
export const exponent = (value, figures) => Number(Number(value).toExponential(figures - 1).split("e")[1]);
