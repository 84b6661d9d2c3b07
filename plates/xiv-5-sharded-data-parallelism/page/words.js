// Plate XIV.5's words, written once: the readout, each figure's description and data table. The live page calls
// them on factsOf's facts (selection.js); the build runs this same file under node on the default's facts
// (generator/texts.py), so the page as built and the live page say the same. No DOM here.
// f is plate/facts.py's facts_data; W is what the words need besides (the engine's texts.js makes it; facts.py's
// words_context is its twin): of it they read only the plates this one refers to (plate.md's [plates]).
// It imports nothing from ./model.js: every number it writes is one of the facts, formatted by notation.js.
import { data_size, num, seconds, sig } from "./notation.js";

/** ' (plate XIV.6)' when the content names the plate on that subject, else nothing. */
const seePlate = (W, subject) => (W.plates && W.plates[subject] ? ` (plate ${W.plates[subject]})` : "");

const replicasWord = (n) => (n === 1 ? "replica" : "replicas");
const last = (list) => list[list.length - 1];

/** 'stage 3', 'stages 0, 1 and 2'. */
export function stagesText(stages) {
  if (stages.length === 1) return `stage ${stages[0]}`;
  return `stages ${stages.slice(0, -1).join(", ")} and ${last(stages)}`;
}

/** Stages that send the same bytes at the selected precision, [[stages, ratio to the all-reduce]], least first. */
export function sameTraffic(f) {
  const groups = new Map();
  for (const s of f.stages) {
    if (!groups.has(s.traffic_ratio)) groups.set(s.traffic_ratio, []);
    groups.get(s.traffic_ratio).push(s.stage);
  }
  return [...groups.entries()].map(([ratio, stages]) => [stages, ratio]).sort((a, b) => a[1] - b[1]);
}

/** Whether the selected stage's states fit one GPU, from how many replicas (GB = 10⁹ B, and as GiB). */
function fitText(f) {
  const s = f.stages[f.stage];
  const memory = `one ${f.gpu.name} GPU's ${num(f.gpu.memory_gb)} GB (10⁹ B)`;
  const states = `${f.model.name}'s model states`;
  if (s.smallest_fitting === null) {
    const kept = f.stage === 0 ? `all ${data_size(s.floor_bytes)} of them` :
      `${data_size(s.floor_bytes)} of them whole, however many replicas share the rest`;
    return `Under stage ${f.stage}, ${states} never fit in ${memory}: every GPU keeps ${kept}.`;
  }
  const n = s.smallest_fitting;
  const gib = s.smallest_fitting_gib;
  const binary = gib === n ? "" : ` (${num(gib)} if the memory is read as ${num(f.gpu.memory_gb)} GiB, 2³⁰ B each)`;
  const from = n === 1 ? "on a single GPU" : `once ${num(n)} or more GPUs share them`;
  return `Under stage ${f.stage}, ${states} fit in ${memory} ${from}${binary}.`;
}

/** What each GPU then sends per step as replicas grow, against plain data parallelism, and how long that takes. */
function trafficText(f, W) {
  const s = f.stages[f.stage];
  const precision = f.precision_name;
  const sent = `Each GPU sends, and receives, ${data_size(s.traffic_limit_bytes)} per step as replicas grow`;
  const what = f.stage === 0 ? `: the ring all-reduce of its ${precision} gradients`
    : `, ${sig(s.traffic_ratio)} times the ring all-reduce of ${precision} gradients`;
  const speed = `${num(f.link_gbytes_per_s)} GB/s per direction`;
  const link = f.gpu.interconnect;
  let time;
  if (!f.network.nvlink) {
    time = `At ${speed} on the ${f.network.short} network that takes ${seconds(s.traffic_limit_s)}.`;
  } else if (f.gpu.nvlink_domain) {
    const d = num(f.gpu.nvlink_domain);
    time = `Over ${link} (${speed}) one domain of ${d} GPUs takes ${seconds(s.domain_traffic_s)}; ` +
      `${link} joins no more than ${d} of them.`;
  } else {
    time = `Over ${link} (${speed}) that would take ${seconds(s.traffic_limit_s)}, were every GPU joined by it.`;
  }
  return `${sent}${what}. ${time}`;
}

/** What the formulas leave out, so a reader does not take the numbers for a whole run's. */
const leftOut = (W) => `These count model states and bandwidth only: activations${seePlate(W, "activations")}, ` +
  "the weights a unit holds gathered while it computes, temporary buffers and each collective's latency are left out.";

/** The readout: one paragraph on memory, one on traffic. */
export function readoutParagraphs(f, W) {
  return [fitText(f), `${trafficText(f, W)} ${leftOut(W)}`];
}

/** How stage k fits, in words: from how many replicas, or not at all. */
function fits(f, k) {
  const n = f.stages[k].smallest_fitting;
  if (n === null) return `stage ${k} never fits`;
  return `stage ${k} fits from ${num(n)} ${replicasWord(n)}`;
}

/** Figure (a) in words: stage 0's level against the GPU's memory, and where each sharded stage fits. */
function describeStates(f) {
  const where = f.unsharded_bytes <= f.memory_bytes ? "under" : "above";
  return `Model states per GPU against data-parallel replicas for ZeRO stages 0 to 3, log–log, ${f.model.name} ` +
    `on the ${f.gpu.name}: stage 0 stays at ${data_size(f.unsharded_bytes)}, ${where} the GPU's ` +
    `${num(f.gpu.memory_gb)} GB (10⁹ B); ` + [1, 2, 3].map((k) => fits(f, k)).join(", ") + ".";
}

/** Figure (b) in words: which stages send alike, how much, and how many times the all-reduce. */
function describeTraffic(f, W) {
  const groups = sameTraffic(f);
  const [baseStages, baseRatio] = groups.find(([stages]) => stages.includes(0));
  const alike = baseStages.length > 1 ? `${stagesText(baseStages)} send the same` : "stage 0 sends its all-reduce";
  const parts = [`${alike}, approaching ${data_size(f.stages[0].traffic_limit_bytes)}`];
  for (const [stages, ratio] of groups) {
    if (!stages.includes(0)) {
      const verb = stages.length > 1 ? "send" : "sends";
      parts.push(`${stagesText(stages)} ${verb} ${sig(ratio / baseRatio)} times that, approaching ` +
        `${data_size(f.stages[stages[0]].traffic_limit_bytes)}`);
    }
  }
  return `Bytes each GPU sends per step against data-parallel replicas, ${f.model.name} with ` +
    `${f.precision_name} gradients: ` + parts.join("; ") + " as replicas grow.";
}

/** A figure in words for one selection. */
export function describe(f, figureId, W) {
  if (figureId === "fig-states") return describeStates(f);
  if (figureId === "fig-traffic") return describeTraffic(f, W);
  throw new RangeError(`no words for figure ${figureId}`);
}

/** A figure's data table for one selection, as text: a row per replica count, a column per stage. */
export function tableRows(f, figureId) {
  const field = { "fig-states": "states_bytes", "fig-traffic": "traffic_bytes" }[figureId];
  if (!field) throw new RangeError(`no table for figure ${figureId}`);
  return f.replicas.map((n, i) => [num(n), ...f.stages.map((s) => data_size(s[field][i]))]);
}

/** Every word of one selection's facts: the readout's paragraphs, and each figure's description and table. */
export function words(f, W, figureIds) {
  return {
    readout: readoutParagraphs(f, W),
    describe: Object.fromEntries(figureIds.map((id) => [id, describe(f, id, W)])),
    tables: Object.fromEntries(figureIds.map((id) => [id, tableRows(f, id)])),
  };
}
