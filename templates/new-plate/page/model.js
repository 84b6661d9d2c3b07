// This plate's model in the page (the mirror of plate/__init__.py's Model): y = rate × n.

/** n = 1, 2, 4, … most (plate/__init__.py's Model.counts). */
export function counts(most) {
  const found = [];
  for (let n = 1; n <= most; n *= 2) found.push(n);
  return found;
}

export const model = { counts };
