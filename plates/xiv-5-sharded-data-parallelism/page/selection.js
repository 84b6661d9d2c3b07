// Plate XIV.5's selection module (the page entry the engine's modules import from, docs/plates.md): the facts of
// a selection computed in the page from the presets (plate/facts.py's facts_data, field by field), the rows each
// figure's Vega spec reads (plate/figures.py's, row by row), and the words (words.js).
// tests/plates/xiv5/test_xiv5_js.py holds each equal to its Python twin under node, where no page exists: the
// page's data is read only when factsOf is not given the presets.
import { GIB, STAGES, kept_bytes, replica_counts, smallest_replicas, state_bytes, traffic_bytes,
  traffic_limit_bytes, traffic_ratio, traffic_seconds } from "./model.js";
import { GB, num } from "./notation.js";
import { sameTraffic, stagesText, words } from "./words.js";

const STAGE_IDS = ["none", "zero1", "zero2", "zero3"]; // plate/facts.py STAGES, in order
const GRAD_BYTES = { bf16: 2, fp32: 4 }; // plate/facts.py GRAD_BYTES
const PRECISIONS = { bf16: "BF16", fp32: "FP32" }; // plate/facts.py PRECISIONS
const LABEL_AT = 64; // plate/figures.py LABEL_AT
const STEEP_DECADES = 0.1; // plate/figures.py STEEP_DECADES

let pagePresets = null;
/** The presets the build wrote into the page (its plate-data JSON), read once. */
const presetsOfPage = () => (pagePresets ||= JSON.parse(document.getElementById("plate-data").textContent).presets);

/** facts.facts_data(facts.facts(presets, sel)): a selection {model, gpu, stage, precision, network} of ids. */
export function factsOf(sel, presets = presetsOfPage()) {
  const m = presets.models[sel.model];
  const gpu = presets.gpus[sel.gpu];
  const net = presets.networks[sel.network];
  const k = STAGE_IDS.indexOf(sel.stage);
  const b = GRAD_BYTES[sel.precision];
  if (!m || !gpu || !net || k < 0 || !b) throw new RangeError(`not a selection of the presets: ${JSON.stringify(sel)}`);
  const params = m.params;
  const replicas = replica_counts(presets.workshop.max_replicas);
  const memory = gpu.memory_gb * GB;
  const memoryGib = gpu.memory_gb * GIB;
  const link = (net.nvlink ? gpu.nvlink_gbytes_per_s : net.link_gbytes_per_s) * 1e9;
  const orNull = (x) => (Number.isNaN(x) ? null : x);
  const stages = STAGES.map((s) => {
    const states = replicas.map((n) => state_bytes(params, s, n));
    const first = states.findIndex((x) => x <= memory);
    return {
      stage: s, states_bytes: states, floor_bytes: kept_bytes(params, s),
      smallest_fitting: orNull(smallest_replicas(params, s, memory)),
      smallest_fitting_gib: orNull(smallest_replicas(params, s, memoryGib)),
      smallest_fitting_on_grid: first < 0 ? null : replicas[first],
      traffic_bytes: replicas.map((n) => traffic_bytes(params, s, b, n)),
      traffic_s: replicas.map((n) => traffic_seconds(params, s, b, link, n)),
      traffic_ratio: traffic_ratio(s, b), traffic_limit_bytes: traffic_limit_bytes(params, s, b),
      traffic_limit_s: traffic_limit_bytes(params, s, b) / link,
      domain_traffic_s: net.nvlink && gpu.nvlink_domain ? traffic_seconds(params, s, b, link, gpu.nvlink_domain) : null,
    };
  });
  return {
    selection: { model: sel.model, gpu: sel.gpu, stage: sel.stage, precision: sel.precision, network: sel.network },
    model: { name: m.name, params },
    gpu: { name: gpu.name, memory_gb: gpu.memory_gb, nvlink_domain: gpu.nvlink_domain ?? null,
      interconnect: gpu.interconnect },
    network: { name: net.name, short: net.short, nvlink: Boolean(net.nvlink) },
    caption: `${m.name} · ${gpu.name} · stage ${k} · ${PRECISIONS[sel.precision]} gradients · ${net.short}`,
    precision_name: PRECISIONS[sel.precision], stage: k, grad_bytes: b, max_replicas: presets.workshop.max_replicas,
    replicas, memory_bytes: memory,
    memory_gib_bytes: memoryGib, link_bytes_per_s: link, link_gbytes_per_s: link / 1e9, unsharded_bytes: state_bytes(params, 0, 1), stages,
  };
}

const stageName = (k) => `stage ${k}`;

/** figures.label_above: whether each stage's name goes above its line at LABEL_AT. */
export function labelAbove(f) {
  const at = f.replicas.findIndex((n) => n >= Math.min(LABEL_AT, f.max_replicas));
  const level = f.stages.map((s) => Math.log10(s.states_bytes[at]));
  const steep = f.stages.map((s, k) => at + 1 < f.replicas.length &&
    level[k] - Math.log10(s.states_bytes[at + 1]) > STEEP_DECADES);
  return level.map((y, k) => {
    const up = k ? level[k - 1] - y : Infinity;
    let down = k + 1 < level.length ? y - level[k + 1] : Infinity;
    if (steep[k]) down = 0.0;
    return up >= down;
  });
}

/** {dataset: rows} for each dataset the figures' Vega specs read: plate/figures.py's *_rows. */
export function datasets(f) {
  const above = labelAbove(f);
  const rows = (field, key) => f.stages.flatMap((s) => f.replicas.map((n, i) => ({
    replicas: n, stage: stageName(s.stage), [key]: s[field][i] / 1e9, selected: s.stage === f.stage,
    ...(key === "states_gb" ? { label_above: above[s.stage] } : {}),
  })));
  return {
    states: rows("states_bytes", "states_gb"),
    memory: [{ memory_gb: f.memory_bytes / 1e9, replicas: f.max_replicas,
      label_above: f.unsharded_bytes <= f.memory_bytes,
      gpu_label: `${f.gpu.name} memory: ${num(f.gpu.memory_gb)} GB` }],
    traffic: rows("traffic_bytes", "traffic_gb"),
    traffic_labels: sameTraffic(f).map(([stages]) => ({
      replicas: f.max_replicas, traffic_gb: f.stages[stages[0]].traffic_bytes[f.replicas.length - 1] / 1e9,
      text: stagesText(stages), stage: stageName(stages[0]),
    })),
  };
}

// The words, re-exported with the rest: the engine's join without esbuild (generator/jsmodules.py) refuses
// `export { words };`, so the entry hands them on in one object (in the joined script words.js's `words` is in
// scope as it is).
export const plate = { factsOf, datasets, words };

// The rows the engine's views.js feeds, by dataset name (docs/plates.md): made once per facts for all the views.
const made = new WeakMap();
const rowsOf = (f) => { if (!made.has(f)) made.set(f, datasets(f)); return made.get(f); };
export const DATASETS = Object.fromEntries(["states", "memory", "traffic", "traffic_labels"]
  .map((name) => [name, (f) => rowsOf(f)[name]]));
