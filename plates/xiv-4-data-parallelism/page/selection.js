// What the plate says about one selection (generator/facts.py Facts), and the figures' rows (generator/charts.py).
import { bucket_caps, bucket_schedule, bucketed_tail_seconds, buckets, cluster, evaluate, forward_traffic, hiding_comm_seconds, inputs, step_seconds, tensor_params } from "./model.js";
import { GB, given, num, percent, seconds } from "./notation.js";
import { OWN, P, REPLICAS, data } from "./data.js";

// --- facts of a selection (generator/facts.py Facts) ---------------------------------------------------

/** What the plate says about one selection: the model's run and what is read off it. */
export function factsOf(sel) {
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
  f.buckets = f.cluster_buckets = bucketsOf(m, x.bytes_per_grad, f.bucket_cap_mb);
  f.bucket_schedule = bucket_schedule(t.compute_s, f.timeline_comm_s, ...f.buckets);
  f.cluster = cluster(run.compute_s, ...f.cluster_buckets, x.link_bytes_per_s, x.nvlink_bytes_per_s, REPLICAS,
    Number(sel.micro || 1));
  f.bucketed_tail_s = f.forward_exposed_s + bucketed_tail_seconds(t.compute_s, f.timeline_comm_s, ...f.buckets);
  f.backward_bound_s = step_seconds(t.compute_s, t.comm_s, true, f.forward_comm_s) - t.compute_s;
  f.timeline_tail_s = f.backward_only ? f.bucketed_tail_s : t.exposed_s;
  f.timeline_bound_s = f.backward_only ? f.backward_bound_s : f.timeline_tail_s;
  return f;
}

/** DDP's buckets of a model at a gradient precision and bucket_cap_mb: made once for each, as lists no one changes
 * (a change of network, GPU or batch keeps them; the model's 162 buckets came from its 291 tensors every time). */
const bucketMemo = new Map();
function bucketsOf(m, bytes, cap) {
  const key = JSON.stringify([m.params, m.layers, m.d_model, m.ffn, m.vocab, bytes, cap]);
  if (!bucketMemo.has(key)) {
    if (bucketMemo.size >= 64) bucketMemo.clear(); // a reader's own models, typed one after another
    bucketMemo.set(key, buckets(tensor_params(m.params, m.layers, m.d_model, m.ffn, m.vocab), bytes,
      ...bucket_caps(cap)));
  }
  return bucketMemo.get(key);
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

export function gridRows(f) {
  const x = f.inputs;
  return f.points.map((p, r) => ({
    replicas: p.replicas, compute_s: p.compute_s,
    comm_s: hiding_comm_seconds(p.comm_s, p.allreduce_s, x.sharding, x.bytes_per_grad, f.backward_only),
    window_s: f.backward_only ? p.compute_s * 2 / 3 : null, efficiency: p.efficiency,
    cluster_s: f.cluster.comm_s[r], cluster_efficiency: f.cluster.efficiency[r],
  }));
}

export function factsRows(f) {
  return [{
    label: f.caption, crossing: f.crossing_replicas, n_star: f.continuous_crossing,
    n_star_text: `n* ≈ ${num(f.continuous_crossing)}`, one_sequence: f.batch.tokens / P.workshop.seq_len,
    max_replicas: f.max_replicas, hypothetical_from: f.hypothetical_from,
  }];
}

/** charts.timeline_rows: one step at the timeline's replica count, as bars. */
export function timelineRows(f) {
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
export function timelineFacts(f) {
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

// --- the memory figure's rows (issue 10; generator/charts.py memory_rows) ---------------------------------

/** charts.memory_rows: model states per GPU at each replica count, and the GPU's memory. */
export function memoryRows(f) {
  return f.points.map((p) => ({
    replicas: p.replicas, states_gb: p.states_gb, memory_gb: f.gpu_memory_gb,
    first_fit: p.replicas === f.smallest_fitting_on_grid,
    gpu_label: `${f.gpu.name} memory: ${num(f.gpu_memory_gb)} GB`,
  }));
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

/** Each dataset's rows for a selection, by its key in the page data's `data` (the names the figures' specs read). */
export const DATASETS = {
  grid: gridRows, facts: factsRows, timeline: timelineRows, timeline_facts: timelineFacts, memory: memoryRows,
};
