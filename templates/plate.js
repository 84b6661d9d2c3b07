// The plate's live figures: the static SVGs of the default are replaced by Vega views that follow the controls.
// model.js (above, in the same script) evaluates the model; this file turns its numbers into rows, marks and words,
// as generator/charts.py and generator/render.py do for the default. The Vega runtime (window.vega and
// window.vegaExpressionInterpreter) is run when the first view is made: see vegaRuntime().
const data = JSON.parse(document.getElementById("plate-data").textContent);
const KEYS = data.keys;
const P = data.presets;
const form = document.getElementById("controls");
const readout = document.getElementById("readout");
const CLUSTER_KEYS = data.cluster_keys; // the real cluster's own controls: in the URL only when not DDP's defaults
const ALL = [...KEYS, ...CLUSTER_KEYS];
const selects = Object.fromEntries(ALL.map((k) => [k, document.getElementById(`choose-${k}`)]));
const REPLICAS = replica_counts(P.workshop.max_replicas);

/** The selection named in the URL's fragment, falling back to the plate's default for each key. */
function selectionFromUrl() {
  const params = new URLSearchParams(location.hash.slice(1));
  const chosen = {};
  for (const k of ALL) {
    const wanted = params.get(k);
    chosen[k] = data.choices[k].includes(wanted) ? wanted : data.default[k];
  }
  return chosen;
}

/** Keep the selection in the URL without adding history entries for every change. Written once the controls
 * have rested for URL_REST_MS, or at once when the reader leaves the page's window (to the address bar, to share
 * the link) or the page: history.replaceState takes this browser from several to tens of milliseconds, which
 * neither a redraw nor a run of quick changes should wait for. */
const URL_REST_MS = 250;
let urlPending = null;
let urlTimer = 0;

function selectionToUrl(sel) {
  const params = new URLSearchParams(KEYS.map((k) => [k, sel[k]]));
  for (const [k, v] of extraEntries(sel)) params.set(k, v);
  urlPending = `#${params}`;
  clearTimeout(urlTimer);
  urlTimer = setTimeout(writeUrl, URL_REST_MS);
}

function writeUrl() {
  clearTimeout(urlTimer);
  if (urlPending === null) return;
  history.replaceState(null, "", urlPending);
  urlPending = null;
}
window.addEventListener("blur", writeUrl);
window.addEventListener("pagehide", writeUrl);
document.addEventListener("visibilitychange", writeUrl);

function currentSelection() {
  return Object.fromEntries(ALL.map((k) => [k, selects[k] ? selects[k].value : data.default[k]]));
}

/** The real cluster's choices that are not DDP's defaults, then the reader's own values: the URL's extra entries. */
const extraEntries = (sel) => [...CLUSTER_KEYS.filter((k) => sel[k] !== undefined && sel[k] !== data.default[k])
  .map((k) => [k, sel[k]]), ...ownUrlEntries(sel)];

// --- facts of a selection (generator/facts.py Facts) ---------------------------------------------------

/** What the plate says about one selection: the model's run and what is read off it. */
function factsOf(sel) {
  const P = presetsOf(sel); // the presets, with the reader's own model, batch, network and MFU where chosen
  const x = inputs(P, data.options, sel);
  const run = evaluate(x, REPLICAS);
  const gpu = P.gpus[sel.gpu];
  const network = P.networks[sel.network];
  const maxReplicas = REPLICAS[REPLICAS.length - 1];
  const points = REPLICAS.map((n, r) => ({
    replicas: n, compute_s: run.compute_s[r], allreduce_s: run.allreduce_s[r], step_s: run.step_s[r],
    efficiency: run.efficiency[r], tokens_per_replica: run.tokens_per_replica[r],
    sequences_per_replica: run.sequences_per_replica[r], comm_s: run.comm_s[r], exposed_s: run.exposed_s[r],
    states_gb: run.states_bytes[r] / GB, fits: run.fits[r],
  }));
  const modelStatesGb = P.workshop.bytes_per_param_states * P.models[sel.model].params / GB;
  const domain = gpu.nvlink_domain;
  const f = {
    sel, run, points, gpu, network, inputs: x, model: P.models[sel.model], batch: P.batches[sel.batch],
    max_replicas: maxReplicas,
    crossing_replicas: run.crossing_index < 0 ? null : REPLICAS[run.crossing_index],
    continuous_crossing: run.continuous_crossing,
    backward_only: sel.overlap === "backward",
    sharding_stage: data.options.sharding.findIndex(([id]) => id === sel.sharding),
    smallest_fitting_replicas: Number.isNaN(run.smallest_fitting) ? null : run.smallest_fitting,
    smallest_fitting_on_grid: run.smallest_fitting_index < 0 ? null : REPLICAS[run.smallest_fitting_index],
    hypothetical_from: network.nvlink && domain != null && domain < maxReplicas ? domain : null,
    model_states_gb: modelStatesGb,
    gpu_memory_gb: gpu.memory_gb,
    fits_in_memory: modelStatesGb <= gpu.memory_gb,
    caption: caption(sel),
    grad_bytes: x.bytes_per_grad * x.params,
  };
  f.timeline_replicas = f.crossing_replicas || f.max_replicas;
  const t = f.points[REPLICAS.indexOf(f.timeline_replicas)];
  f.forward_comm_s = forward_traffic(x.sharding, x.bytes_per_grad) * t.allreduce_s;
  f.forward_exposed_s = Math.max(0.0, f.forward_comm_s - t.compute_s / 3);
  f.timeline_comm_s = t.comm_s - f.forward_comm_s;
  const m = f.model;
  // DDP's buckets under the chosen bucket_cap_mb: the timeline's, and the real cluster's (Facts.cluster)
  f.bucket_cap_mb = !sel.bucket || sel.bucket === "default" ? null : Number(sel.bucket);
  f.buckets = f.cluster_buckets = buckets(tensor_params(m.params, m.layers, m.d_model, m.ffn, m.vocab),
    x.bytes_per_grad, ...bucket_caps(f.bucket_cap_mb));
  f.bucket_schedule = bucket_schedule(t.compute_s, f.timeline_comm_s, ...f.buckets);
  f.cluster = cluster(run.compute_s, ...f.cluster_buckets, x.link_bytes_per_s, x.nvlink_bytes_per_s, REPLICAS,
    Number(sel.micro || 1));
  f.bucketed_tail_s = f.forward_exposed_s + bucketed_tail_seconds(t.compute_s, f.timeline_comm_s, ...f.buckets);
  f.backward_bound_s = step_seconds(t.compute_s, t.comm_s, true, f.forward_comm_s) - t.compute_s;
  f.timeline_tail_s = f.backward_only ? f.bucketed_tail_s : t.exposed_s;
  f.timeline_bound_s = f.backward_only ? f.backward_bound_s : f.timeline_tail_s;
  return f;
}

/** Facts.caption: the presets' names, then the GPU and options where they are not the workshop's. */
function caption(sel) {
  const P = presetsOf(sel);
  const parts = [P.models[sel.model].name, P.batches[sel.batch].name, P.networks[sel.network].short];
  if (sel.gpu !== P.workshop.gpu) parts.push(P.gpus[sel.gpu].name);
  for (const [k, names] of data.captions) if (sel[k] in names) parts.push(names[sel[k]]);
  if (P.workshop.mfu !== data.presets.workshop.mfu) parts.push(`MFU ${percent(P.workshop.mfu)}`);
  return parts.join(" · ");
}

// --- the figures' rows (generator/charts.py grid_rows, facts_rows) --------------------------------------

function gridRows(f) {
  return f.points.map((p, r) => ({
    replicas: p.replicas, compute_s: p.compute_s, comm_s: p.comm_s,
    window_s: f.backward_only ? p.compute_s * 2 / 3 : null, efficiency: p.efficiency,
    cluster_s: f.cluster.comm_s[r], cluster_efficiency: f.cluster.efficiency[r],
  }));
}

function factsRows(f) {
  return [{
    label: f.caption, crossing: f.crossing_replicas, n_star: f.continuous_crossing,
    n_star_text: `n* ≈ ${num(f.continuous_crossing)}`, one_sequence: f.batch.tokens / P.workshop.seq_len,
    max_replicas: f.max_replicas, hypothetical_from: f.hypothetical_from,
  }];
}

// --- the shown selection's numbers as CSV (generator/facts.py selection_rows) --------------------------

/** A cell as a CSV holds it: quoted only when it must be. */
const csvCell = (v) => (/[",\r\n]/.test(String(v)) ? `"${String(v).replace(/"/g, '""')}"` : String(v));

/** The selection's CSV: a row per replica count, the columns Python declares (facts.SELECTION_COLUMNS, each
 * [name, source, field, divisor]: the selection's id or option, a model input, or a value of the run). */
function selectionCsv(f) {
  const columns = data.csv_columns;
  const value = ([, source, field, divisor], r) => {
    const v = source === "sel" ? f.sel[field] ?? data.default[field] : source === "inputs" ? f.inputs[field]
      : (source === "cluster" ? f.cluster : f.run)[field][r];
    return typeof v === "number" && divisor !== 1 ? v / divisor : v;
  };
  const lines = [columns.map(([name]) => name).join(",")];
  for (let r = 0; r < f.run.replicas.length; r++) lines.push(columns.map((c) => csvCell(value(c, r))).join(","));
  return `${lines.join("\n")}\n`;
}

/** The file a selection's CSV is saved as: the site's CSV's name, then the selection's ids. */
const selectionCsvName = (sel) => `${data.csv_name.replace(/\.csv$/, "")}-${KEYS.map((k) => sel[k]).join("-")}.csv`;

/** Save the shown selection's CSV, made here: a Blob handed to a download link, no request. */
function downloadSelection(f) {
  const url = URL.createObjectURL(new Blob([selectionCsv(f)], { type: "text/csv;charset=utf-8" }));
  const link = Object.assign(document.createElement("a"), { href: url, download: selectionCsvName(f.sel) });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 0);
}

/** charts.timeline_rows: one step at the timeline's replica count, as bars. */
function timelineRows(f) {
  const p = f.points[REPLICAS.indexOf(f.timeline_replicas)];
  const compute = p.compute_s;
  const comm = f.timeline_comm_s;
  const tail = f.timeline_tail_s;
  const forward = compute / 3;
  const backward = compute * 2 / 3;
  const m = f.model;
  const embedding = m.vocab * m.d_model;
  const layer = (m.params - 2 * embedding) / m.layers;
  const rows = [{ row: "compute", kind: "forward", start: 0.0, end: forward, shade: 1.0 }];
  let t = forward;
  const parts = [["head", embedding], ...Array(m.layers).fill(["layer", layer]), ["embedding", embedding]];
  parts.forEach(([kind, params], i) => {
    const end = t + backward * params / m.params;
    rows.push({ row: "compute", kind, start: t, end, shade: i % 2 ? 0.55 : 0.8 });
    t = end;
  });
  if (comm > 0 && !f.backward_only) {
    rows.push({ row: "all-reduce", kind: "buckets", start: 0.0, end: p.comm_s, shade: 1.0 });
  } else if (comm > 0) {
    const [starts, ends] = f.bucket_schedule;
    const count = starts.length;
    const groups = Math.min(count, data.bucket_groups);
    for (let g = 0; g < groups; g += 1) {
      const first = Math.floor(g * count / groups);
      const through = Math.floor((g + 1) * count / groups) - 1;
      const start = starts[first];
      const end = ends[through];
      let busy = 0;
      for (let k = first; k <= through; k += 1) busy += ends[k] - starts[k];
      rows.push({ row: "all-reduce", kind: "buckets", start, end,
        shade: end > start ? Math.max(0.25, Math.min(1.0, busy / (end - start))) : 1.0 });
    }
  }
  if (tail > 0) {
    rows.push({ row: "exposed", kind: "tail", start: compute, end: compute + tail, shade: 1.0 });
  }
  return rows;
}

/** charts.timeline_facts: the timeline's rules and labels. */
function timelineFacts(f) {
  const p = f.points[REPLICAS.indexOf(f.timeline_replicas)];
  const tail = f.timeline_tail_s;
  const bound = f.timeline_bound_s;
  return [{
    compute_end: p.compute_s, bound_end: p.compute_s + bound, step_end: p.compute_s + tail,
    span: Math.max(p.compute_s + tail, p.compute_s) * 1.04,
    tail_text: tail > 0 ? `exposed tail ${seconds(tail)}` : "no exposed tail",
    bound_text: `bound ${seconds(bound)}`, replicas_text: `one step on each of ${num(f.timeline_replicas)} replicas`,
  }];
}

// --- the words (generator/render.py readout, memory_text, table_rows, describe) -------------------------

const capital = (text) => text[0].toUpperCase() + text.slice(1);

function sequencesText(share) {
  if (share < 1) return `${fraction(share)} of a sequence`;
  if (share === 1) return "one sequence";
  return `${Number.isInteger(share) ? num(share) : sig(share)} sequences`;
}

function against(f) {
  return [f.sharding_stage === 3 ? "ZeRO-3's traffic" : "the all-reduce", f.backward_only ? "the backward pass" : "compute"];
}

function readoutText(f) {
  return readoutParagraphs(f).join(" ");
}

/** render.readout_paragraphs: one short paragraph per question (hiding, cost, memory). */
function readoutParagraphs(f) {
  return [hidingText(f), costText(f), memoryText(f)];
}

function hidingText(f) {
  const [noun, behind] = against(f);
  const star = num(f.continuous_crossing);
  let text;
  if (f.crossing_replicas === null) {
    text = `${capital(noun)} stays hidden behind ${behind} all the way to ${num(f.max_replicas)} replicas ` +
      `(the lines would meet at n* ≈ ${star}).`;
  } else {
    const at = f.points.find((p) => p.replicas === f.crossing_replicas);
    const window = f.backward_only ? at.compute_s * 2 / 3 : at.compute_s;
    text = `${capital(noun)} outgrows ${behind} at n* ≈ ${star} replicas; ${num(f.crossing_replicas)} is the first ` +
      `power of two past it, where it takes ${seconds(at.comm_s)} against ${seconds(window)} of ` +
      `${behind.replace("the ", "")}.`;
  }
  if (f.hypothetical_from !== null) {
    text += ` NVLink joins at most ${num(f.hypothetical_from)} ${f.gpu.name} GPUs (${f.gpu.nvlink_domain_name}): ` +
      "beyond that the figures shade the NVLink ring as hypothetical.";
  }
  return text;
}

function costText(f) {
  const last = f.points[f.points.length - 1];
  if (f.crossing_replicas === null) {
    return `A step costs its compute alone: ${seconds(last.step_s)} on ${num(last.replicas)} replicas, ` +
      `where communication takes ${seconds(last.comm_s)}; efficiency still ${percent(last.efficiency)}.`;
  }
  const at = f.points.find((p) => p.replicas === f.crossing_replicas);
  return `Each step there waits ${seconds(at.exposed_s)} for communication beyond compute: ` +
    `efficiency ${percent(at.efficiency)}, and each replica processes ${num(at.tokens_per_replica)} tokens ` +
    `per step (${sequencesText(at.sequences_per_replica)}); on ${num(last.replicas)} replicas, ` +
    `${seconds(last.step_s)} and ${percent(last.efficiency)}.`;
}

function firstStageThatFits(f) {
  const x = f.inputs;
  for (let k = 1; k < data.options.sharding.length; k += 1) {
    const n = smallest_fitting_replicas(x.params, k, x.memory_bytes, x.state_bytes);
    if (!Number.isNaN(n)) return [data.options.sharding[k][1], n];
  }
  return null;
}

function memoryText(f) {
  const gpu = `one ${f.gpu.name} (${num(f.gpu_memory_gb)} GB)`;
  const first = f.points[0];
  const last = f.points[f.points.length - 1];
  if (f.sharding_stage === 0) {
    const fits = first.fits ? "fit on" : "do not fit on";
    let text = `Model states: ${gigabytes(first.states_gb)} per GPU, which ${fits} ${gpu}.`;
    const other = first.fits ? null : firstStageThatFits(f);
    if (other !== null) text += ` Sharded with ${other[0]} they would fit from ${num(other[1])} replicas (plate XIV.5).`;
    return text;
  }
  const text = `With ${data.options.sharding[f.sharding_stage][1]}, model states per GPU fall from ` +
    `${gigabytes(first.states_gb)} on one replica to ${gigabytes(last.states_gb)} on ${num(last.replicas)}; `;
  const n = f.smallest_fitting_replicas;
  const onGrid = f.smallest_fitting_on_grid;
  if (n === null) return `${text}they never fit on ${gpu}.`;
  if (onGrid === null) return `${text}they fit on ${gpu} only from ${num(n)} replicas, beyond the figures.`;
  const grid = onGrid === n ? "" : ` (${num(onGrid)} on the figures' powers of two)`;
  return `${text}they fit on ${gpu} from ${num(n)} replicas${grid}.`;
}

function timelineTable(f) {
  const p = f.points[REPLICAS.indexOf(f.timeline_replicas)];
  const compute = p.compute_s;
  const tail = f.timeline_tail_s;
  const bound = f.timeline_bound_s;
  const forward = compute / 3;
  const rows = [["Forward pass", seconds(0), seconds(forward)],
    [`Backward pass: output head, ${num(f.model.layers)} layers, input embedding`, seconds(forward), seconds(compute)]];
  if (p.comm_s > 0 && !f.backward_only) {
    rows.push(["All-reduce beside the whole step (the workshop's overlap)", seconds(0), seconds(p.comm_s)]);
    rows.push(["Exposed tail", seconds(compute), seconds(compute + tail)]);
    return rows;
  }
  if (p.comm_s > 0) {
    const starts = f.bucket_schedule[0];
    rows.push([`All-reduce of ${num(starts.length)} buckets of whole tensors`, seconds(starts[0]),
      seconds(compute + tail)]);
  }
  rows.push(["Exposed tail", seconds(compute), seconds(compute + tail)]);
  rows.push(["Perfect overlap within the backward pass (bound)", seconds(compute), seconds(compute + bound)]);
  return rows;
}

function describeTimeline(f) {
  const p = f.points[REPLICAS.indexOf(f.timeline_replicas)];
  const compute = p.compute_s;
  const tail = f.timeline_tail_s;
  const bound = f.timeline_bound_s;
  let text = `One optimiser step on each of ${num(f.timeline_replicas)} replicas. The forward pass takes ` +
    `${seconds(compute / 3)}, then the backward pass ${seconds(compute * 2 / 3)}, from the output head through ` +
    `${num(f.model.layers)} layers to the input embedding, so compute ends at ${seconds(compute)} (grey rule). `;
  if (p.comm_s === 0) return `${text}With one replica there is nothing to reduce.`;
  if (!f.backward_only) {
    text += "Below, the all-reduce runs beside the whole step from its first instant, as the workshop assumes; " +
      "a real step can send a gradient only once the backward pass has made it (choose \"backward pass " +
      "only\" for the buckets). ";
    if (tail <= 0) return `${text}It ends at ${seconds(p.comm_s)}, within compute: nothing is exposed.`;
    return `${text}It ends at ${seconds(p.comm_s)}: an exposed tail of ${seconds(tail)} after compute (bottom row).`;
  }
  const sizes = f.buckets[0];
  text += `Below, the gradients go in ${num(sizes.length)} buckets, each all-reduced as soon as the backward pass ` +
    "fills it, one after another on the link; bars are darker where the link is busier. DDP closes a bucket once " +
    `it holds ${f.bucket_cap_mb === null ? "25 MiB (the first at 1 MiB)" : `${num(f.bucket_cap_mb)} MiB`} and never splits a tensor, so they hold from ${data_size(sizes.reduce((a, b) => Math.min(a, b)))} to ` +
    `${data_size(sizes.reduce((a, b) => Math.max(a, b)))}. `;
  if (tail <= 0) return `${text}The link finishes with compute: nothing is exposed.`;
  return `${text}The last bucket finishes at ${seconds(compute + tail)}: an exposed tail of ${seconds(tail)} after ` +
    `compute (bottom row). Perfect overlap within the backward pass would leave ${seconds(bound)} ` +
    `(dotted rule, the ideal); the buckets add ${seconds(tail - bound)}.`;
}

function tableRows(f, figureId) {
  if (figureId === "fig-timeline") return timelineTable(f);
  if (figureId === "fig-memory") return memoryTableRows(f);
  const c = f.cluster;
  return f.points.map((p, r) => {
    const n = num(p.replicas) + (p.replicas === f.crossing_replicas ? " (crossed)" : "");
    return figureId === "fig-time"
      ? [n, seconds(p.compute_s), seconds(p.comm_s), seconds(c.comm_s[r])]
      : [n, num(p.tokens_per_replica), percent(p.efficiency), percent(c.efficiency[r])];
  });
}

function describe(f, figureId) {
  if (figureId === "fig-timeline") return describeTimeline(f);
  if (figureId === "fig-memory") return describeMemory(f);
  const points = f.points;
  const first = points[0];
  const last = points[points.length - 1];
  const nMax = num(last.replicas);
  const cross = f.crossing_replicas;
  const [noun, behind] = against(f);
  const star = `n* ≈ ${num(f.continuous_crossing)}`;
  let text;
  if (figureId === "fig-time") {
    text = `On log–log axes against replicas from 1 to ${nMax}, compute per step (solid blue line, circles) ` +
      `falls as 1/n, from ${seconds(first.compute_s)} on one replica to ${seconds(last.compute_s)} on ${nMax}. `;
    if (points.length > 1) {
      text += `With one replica there is nothing to reduce; ${noun} (dashed vermilion line, squares) takes ` +
        `${seconds(points[1].comm_s)} on 2 replicas and ${seconds(last.comm_s)} on ${nMax}, levelling off as n grows. `;
    }
    if (f.backward_only) {
      text += "The dotted blue line is the backward pass, two thirds of compute: all the all-reduce can hide behind. ";
    }
    text += cross
      ? `${capital(noun)} outgrows ${behind} at ${star} (dotted rule, the ideal point) and first on the grid at ${num(cross)} ` +
        "replicas (solid rule)."
      : `${capital(noun)} stays below ${behind} up to ${nMax} replicas.`;
    if (points.length > 1) {
      text += ` The dash-dotted line is DDP on a real cluster: its ${num(f.cluster_buckets[0].length)} ` +
        "buckets' all-reduces, each by NCCL's cheaper of ring and tree on 8-GPU nodes with a NIC per GPU, " +
        `latency included: ${seconds(f.cluster.comm_s[1])} on 2 replicas and ${seconds(f.cluster.comm_s[f.cluster.comm_s.length - 1])} on ${nMax}.`;
    }
  } else {
    const full = points.filter((p) => percent(p.efficiency) === "100%").map((p) => p.replicas);
    if (cross === null) {
      text = `Scaling efficiency (solid blue line) stays at ${percent(last.efficiency)} up to ${nMax} replicas.`;
    } else if (full.length) {
      const at = points.find((p) => p.replicas === cross);
      text = `Scaling efficiency (solid blue line) is 100% up to ${num(Math.max(...full))} replicas, then falls: ` +
        `${percent(at.efficiency)} at ${num(cross)} (solid rule; ${star}, dotted) and ${percent(last.efficiency)} at ${nMax}.`;
    } else {
      text = `Scaling efficiency (solid blue line) is ${percent(first.efficiency)} on one replica and ` +
        `${percent(last.efficiency)} at ${nMax}.`;
    }
    text += " The dash-dotted line is DDP on a real cluster (NCCL on 8-GPU nodes, only the last " +
      `micro-batch's backward pass hiding the buckets), ${percent(f.cluster.efficiency[f.cluster.efficiency.length - 1])} on ${nMax} replicas.`;
  }
  const seqLen = P.workshop.seq_len;
  const oneSequence = f.batch.tokens / seqLen;
  if (oneSequence < last.replicas) {
    text += ` Shaded beyond ${num(oneSequence)} replicas, where a replica gets less than one ${num(seqLen)}-token ` +
      "sequence per step.";
  }
  if (f.hypothetical_from !== null) {
    text += ` Shaded darker beyond ${num(f.hypothetical_from)} GPUs, the most one ${f.gpu.name} NVLink domain ` +
      "holds: there the NVLink ring is hypothetical.";
  }
  return text;
}

/** Every text of one selection, as render.py writes the default's. */
function texts(sel) {
  const f = factsOf(sel);
  const ids = data.figures.map((fig) => fig.id);
  return {
    readout: readoutText(f), readout_paragraphs: readoutParagraphs(f), caption: f.caption,
    describe: Object.fromEntries(ids.map((id) => [id, describe(f, id)])),
    tables: Object.fromEntries(ids.map((id) => [id, tableRows(f, id)])),
  };
}

/** Each figure's description and data table, the readout and the captions, for the selection shown, but not yet
 * those of the figures `away` (ids) from the screen. Only what changed is written: the page keeps its layout, and
 * the live readout announces only news. */
const setText = (el, text) => { if (el.textContent !== text) el.textContent = text; };
const tableStamps = new WeakMap(); // table -> its rows as JSON, read off the page the first time

function fillTexts(f, away = new Set()) {
  fillReadout(f);
  for (const el of document.querySelectorAll("[data-selection]")) {
    if (!away.has(el.closest(".figure")?.id)) setText(el, f.caption);
  }
  for (const el of document.querySelectorAll("[data-describe]")) {
    if (!away.has(el.dataset.describe)) setText(el, describe(f, el.dataset.describe));
  }
  for (const table of document.querySelectorAll("[data-table]")) {
    if (away.has(table.dataset.table)) continue;
    const rows = tableRows(f, table.dataset.table);
    const stamp = JSON.stringify(rows);
    const had = tableStamps.has(table) ? tableStamps.get(table)
      : JSON.stringify([...table.tBodies[0].rows].map((tr) => [...tr.cells].map((cell) => cell.textContent)));
    tableStamps.set(table, stamp);
    if (had === stamp) continue;
    table.tBodies[0].replaceChildren(...rows.map(([head, ...cells]) => {
      const tr = document.createElement("tr");
      const th = document.createElement("th");
      th.scope = "row";
      th.textContent = head;
      tr.append(th, ...cells.map((c) => Object.assign(document.createElement("td"), { textContent: c })));
      return tr;
    }));
  }
}

// --- the memory figure and the readout's paragraphs (issue 10; render.py memory_table_rows, describe_memory) -

/** charts.memory_rows: model states per GPU at each replica count, and the GPU's memory. */
function memoryRows(f) {
  return f.points.map((p) => ({
    replicas: p.replicas, states_gb: p.states_gb, memory_gb: f.gpu_memory_gb,
    first_fit: p.replicas === f.smallest_fitting_on_grid,
    gpu_label: `${f.gpu.name} memory: ${num(f.gpu_memory_gb)} GB`,
  }));
}

function memoryTableRows(f) {
  return f.points.map((p) => [num(p.replicas), gigabytes(p.states_gb), p.fits ? "yes" : "no"]);
}

function describeMemory(f) {
  const first = f.points[0];
  const last = f.points[f.points.length - 1];
  const how = f.sharding_stage === 0 ? "without sharding" : `with ${data.options.sharding[f.sharding_stage][1]}`;
  let shape;
  if (f.sharding_stage === 0) {
    shape = `a flat line: every replica holds all of them, ${gigabytes(first.states_gb)} on each of 1 to ` +
      `${num(last.replicas)} replicas`;
  } else if (f.sharding_stage === 3) {
    shape = `a straight line falling as 1/n, from ${gigabytes(first.states_gb)} on one replica to ` +
      `${gigabytes(last.states_gb)} on ${num(last.replicas)}`;
  } else {
    shape = `falling from ${gigabytes(first.states_gb)} on one replica and levelling off at the part each ` +
      `replica keeps whole, ${gigabytes(last.states_gb)} on ${num(last.replicas)}`;
  }
  const text = `On log–log axes against replicas from 1 to ${num(last.replicas)}, model states per GPU (solid blue ` +
    `line, circles) ${how} make ${shape}. The dashed vermilion line is one ${f.gpu.name}'s memory, ` +
    `${num(f.gpu_memory_gb)} GB.`;
  const onGrid = f.smallest_fitting_on_grid;
  if (onGrid === null) return `${text} The states stay above it at every replica count drawn.`;
  if (onGrid === 1) return `${text} The states fit from one replica on.`;
  return `${text} The states fit from ${num(onGrid)} replicas on (solid rule).`;
}

/** The readout, one paragraph per question. */
function fillReadout(f) {
  const paragraphs = readoutParagraphs(f);
  const had = [...readout.children];
  if (had.length === paragraphs.length && had.every((p, i) => p.textContent === paragraphs[i])) return;
  readout.replaceChildren(...paragraphs.map((text, i) => {
    const p = document.createElement("p");
    p.dataset.readout = String(i);
    p.textContent = text;
    return p;
  }));
}

// --- the reader's own run (issue 10; generator/custom.py): free inputs, checked as the schema checks --------

const OWN = data.own;
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

/** schema._check for the kinds free inputs use, without its ", got …" (the page quotes what was typed). */
function whyNot(kind, v) {
  if (typeof kind === "object") { // a bounded kind (schema.Range): the kind's check, then its bounds
    const why = whyNot(kind.kind, v);
    return why === null && !(kind.low <= v.value && v.value <= kind.high) ? kind.bounds : why;
  }
  const number = v.type === "int" || v.type === "float";
  if (kind === "count") {
    if (v.type === "float" && Number.isFinite(v.value) && Number.isInteger(v.value) && v.value > 0) {
      return `must be a whole number written without a decimal point or exponent (e.g. ${grouped(BigInt(v.value), "_")})`;
    }
    if (v.type !== "int" || v.big <= 0n) return "must be a positive whole number";
    if (v.big > BigInt(OWN.max_count)) return `must be at most 2^53 = ${grouped(BigInt(OWN.max_count), ",")}`;
  } else if (kind === "positive") {
    if (!number || !Number.isFinite(v.value) || v.value <= 0) return "must be a positive number";
  } else if (kind === "fraction") {
    if (!number || !Number.isFinite(v.value) || !(v.value > 0 && v.value <= 1)) {
      return "must be a number greater than 0 and at most 1";
    }
  }
  return null;
}

/** custom.check: [value, null] for a good value of a field, [null, message] otherwise. */
function ownCheck(field, text) {
  const v = parseTyped(text);
  let why = whyNot(OWN.fields[field].kind, v);
  const [low, high] = OWN.mfu_range;
  if (why === null && field === "mfu" && !(low <= v.value && v.value <= high)) {
    why = `must be from ${percent(low)} to ${percent(high)}, the slider's range`;
  }
  if (why === null) return [v.value, null];
  const shownText = JSON.stringify([...text].length <= 60 ? text : `${[...text].slice(0, 57).join("")}…`);
  return [null, `${why}, got ${shownText}`];
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

function ownSliderShown() {
  document.getElementById("own-mfu-shown").textContent = percent(sliderMfu());
}

/** The free inputs that count for a selection: a custom model's, batch's, network's; the MFU always. */
function ownFieldsFor(sel) {
  return Object.keys(OWN.fields).filter((k) => {
    const control = OWN.fields[k].control;
    return control === "mfu" || sel[control] === OWN.id;
  });
}

/** custom.shape_problem: the optional layer shape, all or none, leaving room beside the embeddings. */
function shapeProblem(values) {
  const given = OWN.shape.filter((k) => values[k] !== undefined);
  if (given.length && given.length < OWN.shape.length) {
    return [OWN.shape.find((k) => values[k] === undefined),
      "give all four of layers, d_model, FFN width and vocabulary, or none"];
  }
  if (given.length) {
    const embedding = 2 * values.vocab * values.d_model;
    if (values.params <= embedding) {
      return ["params", `must exceed the embedding and output head, 2 · vocab · d_model = ${num(embedding)}`];
    }
  }
  return null;
}

/** A selection with the free inputs that count read in; null when one of them is not a good value (the
 * figures then stay as they are). Texts come from the fields, or from `texts` (the URL) when given. */
function ownSelection(base, texts = null) {
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
  const run = factsOf({ ...data.default, ...sel }).run;
  const far = (v) => !Number.isFinite(v) || Math.abs(v) >= OWN.largest;
  if (OWN.results.some((name) => [].concat(run[name]).some(far))) {
    for (const field of ownFieldsFor(base)) if (field !== "mfu") ownMessage(field, OWN.too_far);
    return null;
  }
  return sel;
}

/** The reader's own values named in the URL, written into the fields; a bad one is shown with its message
 * and the figures fall back to the plate's default for that control. */
function ownFromUrl(sel) {
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
function ownUrlEntries(sel) {
  return Object.keys(OWN.fields).filter((k) => sel[k] !== undefined).map((k) => [k, String(sel[k])]);
}

/** The presets with the reader's own model, batch and network (id OWN.id) and MFU, as custom.own_facts. */
function presetsOf(sel) {
  const Q = {
    ...P, workshop: { ...P.workshop, mfu: sel.mfu === undefined ? P.workshop.mfu : sel.mfu },
    models: { ...P.models }, batches: { ...P.batches }, networks: { ...P.networks },
  };
  if (sel.model === OWN.id && sel.params !== undefined) {
    Q.models[OWN.id] = {
      id: OWN.id, name: `custom ${given(sel.params / 1e9)}B model`, params: sel.params,
      ...Object.fromEntries(OWN.shape.map((k) => [k, sel[k] === undefined ? 0 : sel[k]])),
    };
  }
  if (sel.batch === OWN.id && sel.tokens !== undefined) {
    Q.batches[OWN.id] = { id: OWN.id, name: `${num(sel.tokens)} tokens`, tokens: sel.tokens };
  }
  if (sel.network === OWN.id && sel.gbps !== undefined) {
    const name = `${given(sel.gbps)} GB/s`;
    Q.networks[OWN.id] = { id: OWN.id, name, short: name, link_gbytes_per_s: sel.gbps, nvlink: false };
  }
  return Q;
}

/** Glossary definitions beside their terms: on hover, on keyboard focus, and on a first tap. */
function termTips() {
  const tip = document.createElement("div");
  tip.className = "term-tip";
  tip.hidden = true;
  tip.setAttribute("aria-hidden", "true"); // screen readers get the definition from aria-describedby
  document.body.append(tip);
  let owner = null;
  let closing = 0;
  let tapOpened = false;
  const open = (link) => {
    clearTimeout(closing);
    const definition = document.getElementById(link.getAttribute("aria-describedby"));
    if (!definition) return;
    owner = link;
    tip.textContent = definition.textContent;
    tip.hidden = false;
    const page = document.documentElement.clientWidth;
    const box = link.getBoundingClientRect();
    const width = Math.min(320, page - 16);
    tip.style.width = `${width}px`;
    tip.style.left = `${Math.max(8, Math.min(box.left, page - width - 8)) + window.scrollX}px`;
    tip.style.top = `${box.bottom + window.scrollY + 6}px`;
  };
  const close = () => { tip.hidden = true; owner = null; };
  const closeSoon = () => { closing = setTimeout(close, 300); };
  for (const link of document.querySelectorAll("a.term[aria-describedby]")) {
    link.addEventListener("mouseenter", () => open(link));
    link.addEventListener("mouseleave", closeSoon);
    link.addEventListener("focus", () => open(link));
    link.addEventListener("blur", closeSoon);
    link.addEventListener("pointerdown", (e) => { tapOpened = e.pointerType === "touch" && owner !== link; });
    link.addEventListener("click", (e) => {
      if (tapOpened) { e.preventDefault(); open(link); } // a second tap follows the link to the glossary
      tapOpened = false;
    });
  }
  tip.addEventListener("mouseenter", () => clearTimeout(closing));
  tip.addEventListener("mouseleave", closeSoon);
  document.addEventListener("keydown", (e) => { if (e.key === "Escape" && owner) close(); });
}

/** The Vega runtime, run once, for the first view. The page carries it inert (a script of type text/plain), so
 * loading the page does not parse it; run as a script element of the same text, the page's CSP allows it by the
 * hash it lists. vl-convert's fallback is a module that has run at load already. */
function vegaRuntime() {
  if (window.vega) return;
  const script = document.createElement("script");
  script.textContent = document.getElementById("vega-runtime").textContent;
  document.head.append(script);
  window.vegaRuntime();
}

/** A live Vega view for one figure, drawn off-page with the rows of the selection shown at that moment (`current`
 * reads it) and swapped in for its static SVG. The view is made in one task and drawn in the next, so input
 * and paint get in between. */
async function liveView(figure, current, width) {
  vegaRuntime();
  // The dataflow was parsed at build time and is carried as JSON of its own, read now; only vl-convert's fallback
  // runtime carries the parser, and the spec.
  const runtime = figure.vega ? window.vega.parse(figure.vega, null, { ast: true })
    : JSON.parse(document.getElementById(`dataflow-${figure.id}`).textContent);
  const holder = document.querySelector(`#${figure.id} .chart`);
  const live = document.createElement("div");
  live.className = "live";
  const view = new window.vega.View(runtime, {
    expr: window.vegaExpressionInterpreter,
    renderer: "svg",
    hover: false,
  });
  view.initialize(live);
  const names = new Set(figure.datasets || figure.vega.data.map((d) => d.name));
  const made = { view, holder, names, stamps: {}, tuples: {}, fed: null, width: null };
  await nextTask();
  feed(made, current()); // the controls may have moved while the view was made
  fitWidth(made, width);
  await view.runAsync();
  holder.replaceChildren(live);
  holder.dataset.live = "true";
  return made;
}

/** Hand a view the rows and marks of a selection: only the datasets its spec declares, and only those whose
 * rows differ from what it drew (the memory figure, say, follows only the model, GPU and sharding). */
const MAKERS = {
  grid: gridRows, facts: factsRows, timeline: timelineRows, timeline_facts: timelineFacts, memory: memoryRows,
};
// NaN and ±Infinity as themselves: JSON would write both as null and hide a change between them.
const exact = (key, value) => (typeof value === "number" && !Number.isFinite(value) ? String(value) : value);

function feed(made, f) {
  const rows = (f.rows ||= {}); // made once per selection, shared by the views that show them
  let changed = false;
  for (const [key, make] of Object.entries(MAKERS)) {
    const name = data.data[key];
    if (!made.names.has(name)) continue;
    rows[key] ||= { values: make(f) };
    rows[key].stamp ||= JSON.stringify(rows[key].values, exact);
    if (made.stamps[name] === rows[key].stamp) continue;
    made.stamps[name] = rows[key].stamp;
    handOver(made, name, rows[key].values);
    changed = true;
  }
  made.fed = f;
  // Lay the view out anew: autosize "fit" sizes the plot from the axis labels once, so without this a redraw kept
  // the label room of the selection shown before, and longer labels stuck out of the figure. (Laying out from the
  // full width, exactly as a view opened at the selection is, would cost a second dataflow pass per change.)
  if (changed) made.view.resize();
}

/** Hand a dataset its new rows, keeping the tuples the view holds: a row at the same place changes only its
 * tuple's differing fields, so its marks stay and the renderer rewrites only changed attributes (replacing the
 * tuples made every mark and SVG element anew). Each view gets its own copies: Vega tags a row as its tuple. */
function handOver(made, name, rows) {
  const held = made.tuples[name];
  if (!held) {
    made.tuples[name] = rows.map((row) => ({ ...row }));
    made.view.data(name, made.tuples[name]);
    return;
  }
  const change = made.view.changeset();
  const kept = Math.min(held.length, rows.length);
  for (let i = 0; i < kept; i += 1) {
    for (const field of Object.keys(rows[i])) {
      if (!Object.is(held[i][field], rows[i][field])) change.modify(held[i], field, rows[i][field]);
    }
  }
  const added = rows.slice(kept).map((row) => ({ ...row }));
  change.insert(added).remove(held.slice(kept));
  made.tuples[name] = held.slice(0, kept).concat(added);
  made.view.change(name, change);
}

/** Draw at the holder's width (text stays at its set size), but no wider than a printed page's measure
 * (about 680 CSS px), so a figure scaled to the paper keeps legible text whatever screen it was drawn on.
 * `measured` is the holder's width when the caller has read it already (one layout for all the figures).
 * True when the width changed (the view then needs a run). */
const printing = window.matchMedia("print");
let paper = false; // between beforeprint and afterprint

function fitWidth(made, measured) {
  const clientWidth = measured === undefined ? made.holder.clientWidth : measured;
  const width = paper || printing.matches ? 720 : Math.min(720, Math.max(260, Math.floor(clientWidth)));
  // Compared with the width asked for last: view.width() reads back the plot's width inside the axes (autosize
  // "fit"), which never equals it, so comparing with that redrew every view on every resize notification.
  if (!width || made.width === width) return false;
  made.width = width;
  made.view.width(width);
  return true;
}

/** After the first paint, in idle time: the static SVGs stay the first thing drawn. When the browser has painted
 * already (it often has by the time this module runs), the next task will do. */
function afterPaint() {
  if (performance.getEntriesByType("paint").length) return nextTask();
  return new Promise((resolve) => {
    requestAnimationFrame(() => setTimeout(() => {
      if (window.requestIdleCallback) requestIdleCallback(() => resolve(), { timeout: 300 });
      else resolve();
    }, 0));
  });
}

/** When the browser is idle, with time for work that took `cost` ms the last time before the next frame is due:
 * work out of sight never holds up a frame. Resolves to the idle period's deadline (more work fits while its
 * timeRemaining() allows), or to null when `wait` ms passed first (frames that never leave that much time, a
 * hidden tab) or the browser has no requestIdleCallback (then after the next paint). */
function whenIdle(cost, wait = 200) {
  if (!window.requestIdleCallback) {
    return new Promise((resolve) => {
      requestAnimationFrame(() => setTimeout(() => resolve(null), 0));
      setTimeout(() => resolve(null), wait);
    });
  }
  const start = performance.now();
  return new Promise((resolve) => {
    const check = (deadline) => {
      const left = wait - (performance.now() - start);
      if (deadline.didTimeout || left <= 0) resolve(null);
      else if (deadline.timeRemaining() >= cost) resolve(deadline);
      else requestIdleCallback(check, { timeout: left });
    };
    requestIdleCallback(check, { timeout: wait });
  });
}

/** End this task and go on in a new one soon (before idle time), so no single task blocks input for long. */
function nextTask() {
  if (window.scheduler && typeof window.scheduler.yield === "function") return window.scheduler.yield();
  return new Promise((resolve) => { setTimeout(resolve, 0); });
}

/** How far a figure is from the viewport, in CSS px (0 when any of it is in view). */
function distanceFromView(fig) {
  const box = document.getElementById(fig.id).getBoundingClientRect();
  return box.bottom < 0 ? -box.bottom : Math.max(0, box.top - window.innerHeight);
}

/** Figures nearest the viewport first: the one the reader sees goes live first. */
function byVisibility(figures) {
  const distance = new Map(figures.map((fig) => [fig, distanceFromView(fig)]));
  return [...figures].sort((a, b) => distance.get(a) - distance.get(b));
}

// A figure goes live when it comes within half a viewport of the screen: soon enough that the reader scrolls onto a
// live view, late enough that figures far down the page cost nothing at load.
const NEAR = 0.5;

/** True when sel is the plate's default: the static SVGs show exactly that, so its figures need no view yet. */
function isDefault(sel) {
  return ALL.every((k) => sel[k] === data.default[k]) && ownUrlEntries(sel).length === 0;
}

async function start() {
  let sel = selectionFromUrl();
  for (const k of ALL) if (selects[k]) selects[k].value = sel[k];
  sel = ownFromUrl(sel);
  // The page as built shows the default's texts (render.py writes them; tests/test_engine.py holds them equal to
  // this script's), so the default's facts wait until a view needs them.
  let shown = null;
  if (!isDefault(sel)) fillTexts((shown = factsOf(sel)));
  const current = () => (shown ||= factsOf(sel));
  const views = []; // the views made so far, in the figures' order
  const pending = new Map(); // figure id → the promise of its view, once asked for
  let queue = Promise.resolve(); // views are made one after another, one task each
  let widths = null; // the holders' widths from the one layout read at load, for the views made then

  // On <html>: data-drawn once the figures on screen show the selection, data-shown (and data-own-shown, the
  // reader's own values) once every figure does.
  const markDrawn = () => {
    const own = extraEntries(sel).map(([k, v]) => `${k}=${v}`).join("&");
    document.documentElement.dataset.drawn = `${KEYS.map((k) => sel[k]).join("|")}${own ? `&${own}` : ""}`;
  };
  const markShown = () => {
    markDrawn();
    // render.selection_key: the keys, then the real cluster's choices that are not DDP's defaults
    document.documentElement.dataset.shown = [KEYS.map((k) => sel[k]).join("|"),
      ...CLUSTER_KEYS.filter((k) => sel[k] !== data.default[k]).map((k) => `${k}=${sel[k]}`)].join("&");
    document.documentElement.dataset.ownShown = ownUrlEntries(sel).map(([k, v]) => `${k}=${v}`).join("&");
  };

  const refit = () => Promise.all(views.filter((made) => fitWidth(made))
    .map(({ view }) => view.runAsync())); // only views whose width changed redraw
  const resize = new ResizeObserver(refit);
  // Which views are on screen (a view not yet reported counts as on screen): a change redraws those first.
  const onScreen = new Map();
  const watch = new IntersectionObserver((entries) => {
    for (const entry of entries) {
      onScreen.set(entry.target, entry.isIntersecting);
      const made = views.find(({ holder }) => holder === entry.target);
      if (entry.isIntersecting && made && catchUp(made)) made.view.runAsync(); // scrolled to before its turn
    }
  });
  /** A view (and its figure's texts) given the selection shown, if it was behind; true when it was. */
  function catchUp(made) {
    if (!shown || made.fed === shown) return false;
    fillTexts(shown);
    feed(made, shown);
    return true;
  }
  const figureId = (made) => made.holder.parentElement.id;
  const order = (made) => data.figures.findIndex((fig) => fig.id === figureId(made));

  /** The figure's live view, made once (after the views asked for before it), following the selection. */
  function makeLive(figure) {
    if (!pending.has(figure.id)) {
      const first = pending.size === 0;
      queue = queue.then(async () => {
        if (!first) await nextTask(); // one task per view: input and paint get in between
        const made = await liveView(figure, current, widths ? widths.get(figure.id) : undefined);
        views.push(made);
        views.sort((a, b) => order(a) - order(b));
        window.plate.views = views.map(({ view }) => view);
        resize.observe(made.holder);
        watch.observe(made.holder);
        // The controls moved while the view was drawn: it catches up (the others already show the selection).
        if (made.fed !== current()) {
          feed(made, current());
          await made.view.runAsync();
        }
      });
      queue.catch(failed); // a view made after load (scrolled to) fails as one made at load does
      pending.set(figure.id, queue);
    }
    return pending.get(figure.id);
  }

  /** Every figure live, the nearest first: once the selection is not the default, no static SVG shows it. */
  async function liveAll() {
    const left = data.figures.filter((fig) => !pending.has(fig.id));
    // Ordered only while some are left: measuring where the figures are lays the page out, at every change.
    if (left.length) byVisibility(left).forEach(makeLive);
    await Promise.all(data.figures.map((fig) => pending.get(fig.id)));
    await Promise.all(views.map(({ view }) => view.runAsync()));
  }

  async function show(next, keepUrl = false) {
    sel = { ...data.default, ...next }; // a partial selection keeps the workshop's other choices
    const f = (shown = factsOf(sel));
    if (!keepUrl) selectionToUrl(sel);
    // The figures on screen first; those out of sight after, one at a time in idle time that has room for it:
    // the reader sees the change sooner, and a figure scrolled to has caught up long before it is reached.
    const later = views.filter((made) => onScreen.get(made.holder) === false);
    fillTexts(f, new Set(later.map(figureId)));
    const seen = views.filter((made) => !later.includes(made));
    for (const made of seen) feed(made, f);
    await Promise.all(seen.map(({ view }) => view.runAsync()));
    if (shown !== f) return; // a newer change took over, and says when it is drawn
    markDrawn();
    let idle = null; // the idle period in use: the next view goes on in it while it has room
    for (const made of later) {
      if (made.fed === f) continue; // scrolled into sight meanwhile, and drawn then
      const cost = made.cost || 0;
      if (!idle || idle.timeRemaining() < cost) idle = await whenIdle(cost);
      if (shown !== f) return;
      const begun = performance.now();
      catchUp(made);
      await made.view.runAsync();
      made.cost = performance.now() - begun;
    }
    // Every view, changed or not: runAsync waits for a draw still under way from an earlier change.
    await Promise.all([...views.map(({ view }) => view.runAsync()), liveAll()]);
    if (shown === f) markShown();
  }

  form.addEventListener("change", () => {
    const next = ownSelection(currentSelection()); // null while a free input that counts is not a good value
    if (next) show(next);
  });
  form.addEventListener("input", ownSliderShown);
  const saving = document.getElementById("download-selection");
  if (saving) {
    saving.addEventListener("click", () => downloadSelection(current()));
    saving.parentElement.hidden = false;
  }
  form.addEventListener("submit", (event) => event.preventDefault());
  // A reader reaching for a control is about to change the figures: make them now, not on the change.
  for (const intent of ["focusin", "pointerdown"]) form.addEventListener(intent, () => liveAll(), { once: true });
  window.addEventListener("hashchange", () => {
    // Links to terms and sources change the fragment too; only a selection in it changes the figures.
    const params = new URLSearchParams(location.hash.slice(1));
    if (!ALL.some((k) => params.has(k))) return;
    const next = selectionFromUrl();
    for (const k of ALL) if (selects[k]) selects[k].value = next[k];
    show(ownFromUrl(next));
  });
  window.plate = {
    views: [], show, live: liveAll, model, texts, factsOf, timelineRows, timelineFacts, gridRows, factsRows, ownCheck,
    selectionCsv,
    selection: () => ({ ...sel }),
  };
  // Paper: redraw at the page's measure before printing (a phone's narrow figure would print tall), back after.
  // Figures not yet live print their static SVG, which is exact: they are made at once for any other selection.
  window.addEventListener("beforeprint", () => {
    paper = true;
    // Figures out of sight still to catch up with a change do so now: Vega runs them in microtasks, before the
    // print is laid out.
    const behind = views.filter(catchUp);
    refit();
    for (const { view } of behind) view.runAsync();
  });
  window.addEventListener("afterprint", () => { paper = false; refit(); });

  // Which figures go live now: for the default, only those near the screen (the static SVGs show the default
  // exactly); for any other selection, all. Reading where they lie lays the page out, as its first paint must.
  const margin = NEAR * window.innerHeight;
  const now = isDefault(sel) ? data.figures.filter((fig) => distanceFromView(fig) <= margin) : data.figures;
  const near = new IntersectionObserver((entries) => {
    for (const entry of entries) {
      if (!entry.isIntersecting) continue;
      near.unobserve(entry.target);
      makeLive(data.figures.find((fig) => fig.id === entry.target.id));
    }
  }, { rootMargin: `${NEAR * 100}% 0px` });
  for (const fig of data.figures) if (!now.includes(fig)) near.observe(document.getElementById(fig.id));
  if (now.length) {
    await afterPaint(); // the static SVGs are painted first
    // One layout read for all the figures (they share the column's width); a resize later refits them.
    widths = new Map(now.map((fig) => [fig.id, document.querySelector(`#${fig.id} .chart`).clientWidth]));
    await Promise.all(byVisibility(now).map(makeLive));
    widths = null; // views made later measure their holder then
  }
  markShown();
  document.documentElement.dataset.ready = "true";
}

/** The static figures of the default selection stay; say why the controls did not appear. */
function failed(error) {
  if (document.documentElement.dataset.ready === "failed") return; // said once
  readout.append(Object.assign(document.createElement("p"), {
    textContent: `(The interactive figures could not start: ${error.message})`,
  }));
  document.documentElement.dataset.ready = "failed";
  form.hidden = true; // controls that cannot work
  const saving = document.querySelector(".download-selection");
  if (saving) saving.hidden = true;
}

termTips();
start().catch((error) => {
  failed(error);
  throw error;
});
