// This plate's model in the page (the mirror of plate/__init__.py's Model): y = rate × n. The engine's page modules
// (templates/page/data.js) ask for `replica_counts` by that name: the n axis here.

/** n = 1, 2, 4, … most. */
export function replica_counts(most) {
  const counts = [];
  for (let n = 1; n <= most; n *= 2) counts.push(n);
  return counts;
}

export const model = { replica_counts };
