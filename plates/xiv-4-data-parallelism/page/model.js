// The scaling model in the page: generator/model.py function by function, under the same names, with the
// same operations in the same order (so both give the same doubles; tests/test_engine.py holds them equal),
// with the number formatter of notation.js. Exposed as window.plate.model; the other modules draw with it.
import { GB, about, data_size, fraction, given, gigabytes, num, percent, power, seconds, sig } from "./notation.js";
const FLOPS_PER_PARAM_TOKEN = 6;
const RING_FACTOR = 2;
const NODE_GPUS = 8;
const WEIGHT_BYTES = 2;
const GRADIENT_BYTES = 2;
const FP32_BYTES = 4;

export function replica_counts(max_replicas) {
  const out = [];
  for (let n = 1; n <= max_replicas; n *= 2) out.push(n);
  return out;
}

function compute_seconds(params, batch_tokens, replicas, peak_flops, mfu) {
  return FLOPS_PER_PARAM_TOKEN * params * batch_tokens / (replicas * peak_flops * mfu);
}

function ring_seconds(buffer_bytes, link_bytes_per_s, replicas) {
  return RING_FACTOR * (replicas - 1) / replicas * buffer_bytes / link_bytes_per_s;
}

function allreduce_seconds(params, bytes_per_grad, link_bytes_per_s, nvlink_bytes_per_s, replicas, hierarchical,
  node_gpus = NODE_GPUS) {
  const buffer = bytes_per_grad * params;
  const flat = ring_seconds(buffer, link_bytes_per_s, replicas);
  const inside = ring_seconds(buffer, nvlink_bytes_per_s, Math.min(replicas, node_gpus));
  const across = ring_seconds(buffer / node_gpus, link_bytes_per_s, Math.max(replicas / node_gpus, 1));
  return hierarchical ? inside + across : flat;
}

export function forward_traffic(sharding, bytes_per_grad) {
  return sharding === 3 ? WEIGHT_BYTES / (2 * bytes_per_grad) : 0.0;
}

function traffic_factor(sharding, bytes_per_grad) {
  const gathers = sharding === 3 ? 2 : sharding === 0 ? 0 : 1;
  return sharding === 0 ? 1.0 : (gathers * WEIGHT_BYTES + bytes_per_grad) / (2 * bytes_per_grad);
}

function comm_seconds(allreduce, sharding, bytes_per_grad) {
  return traffic_factor(sharding, bytes_per_grad) * allreduce;
}

export function hiding_comm_seconds(comm, allreduce, sharding, bytes_per_grad, backward_only) {
  return comm - (backward_only ? forward_traffic(sharding, bytes_per_grad) : 0.0) * allreduce;
}

function hidden_window(compute, backward_only) {
  return backward_only ? compute * 2 / 3 : compute;
}

export function step_seconds(compute, comm, backward_only, forward_comm = 0.0) {
  const forward = backward_only ? forward_comm : 0.0;
  const late = Math.max(compute, compute - hidden_window(compute, backward_only) + (comm - forward));
  return late + Math.max(0.0, forward - compute / 3);
}

function efficiency(compute, step) {
  return compute / step;
}

function kept_bytes_per_param(sharding, state_bytes) {
  return sharding === 0 ? state_bytes : sharding === 1 ? WEIGHT_BYTES + GRADIENT_BYTES : sharding === 2 ? WEIGHT_BYTES : 0;
}

function state_bytes_per_param(sharding, replicas, state_bytes = 16) {
  const kept = kept_bytes_per_param(sharding, state_bytes);
  return kept + (state_bytes - kept) / replicas;
}

export function smallest_fitting_replicas(params, sharding, memory_bytes, state_bytes = 16) {
  const kept = kept_bytes_per_param(sharding, state_bytes) * params;
  const sharded = (state_bytes - kept_bytes_per_param(sharding, state_bytes)) * params;
  const room = memory_bytes - kept;
  if (sharded === 0) return kept <= memory_bytes ? 1.0 : NaN;
  return room > 0 ? Math.max(1, Math.ceil(sharded / room)) : NaN;
}

function continuous_crossing(batch_tokens, peak_flops, mfu, bytes_per_grad, link_bytes_per_s, nvlink_bytes_per_s,
  hierarchical, backward_only, sharding, node_gpus = NODE_GPUS) {
  const work = FLOPS_PER_PARAM_TOKEN * batch_tokens / (peak_flops * mfu * bytes_per_grad);
  const forward = backward_only ? forward_traffic(sharding, bytes_per_grad) : 0.0;
  const late = hidden_window(work, backward_only) / (traffic_factor(sharding, bytes_per_grad) - forward);
  const window = forward > 0 ? Math.min(late, work / 3 / forward) : late;
  const flat = 1 + window * link_bytes_per_s / RING_FACTOR;
  const inside = 1 + window * nvlink_bytes_per_s / RING_FACTOR;
  const beyond = (window + RING_FACTOR / link_bytes_per_s) / (
    RING_FACTOR * (node_gpus - 1) / node_gpus / nvlink_bytes_per_s + RING_FACTOR / (node_gpus * link_bytes_per_s));
  return hierarchical ? (inside <= node_gpus ? inside : beyond) : flat;
}

const MIB = 2 ** 20;
const BUCKET_BYTES = 25 * MIB;
const FIRST_BUCKET_BYTES = MIB;
const PIECE = MIB;
const PIECES = 4096;
const MAX_LAYERS = 10000;

export function tensor_params(params, layers, d_model, ffn, vocab) {
  if (layers <= 0 || d_model <= 0 || layers > MAX_LAYERS) {
    const count = Math.min(Math.ceil(params / PIECE), PIECES);
    return Array(count).fill(params / count);
  }
  const d = d_model;
  const embedding = vocab * d;
  const rest = params - 2 * embedding;
  const norm = Math.min(d, rest);
  const layer = (rest - norm) / layers;
  const attention = layer - 3 * d * ffn - 2 * d;
  const kv = (attention - 2 * d * d) / (2 * d);
  let q = 0;
  let k = 0;
  if (0 < kv && kv <= d) {
    q = d * d;
    k = d * kv;
  } else if (attention > 0) {
    q = attention / 4;
    k = attention / 4;
  }
  const mlp = attention > 0 ? d * ffn : layer / 3;
  const norms = attention > 0 ? d : 0;
  const one = [mlp, mlp, mlp, norms, q, k, k, q, norms];
  const out = [embedding, norm];
  for (let i = 0; i < layers; i += 1) out.push(...one);
  out.push(embedding);
  return out.filter((t) => t > 0);
}

function sum(values) {
  let total = 0;
  for (const v of values) total += v;
  return total;
}

export function buckets(tensors, bytes_per_element, cap_bytes = BUCKET_BYTES, first_bytes = FIRST_BUCKET_BYTES) {
  const total = sum(tensors);
  const sizes = [];
  const ready = [];
  let size = 0.0;
  let done = 0.0;
  let limit = first_bytes;
  for (const tensor of tensors) {
    size += tensor * bytes_per_element;
    done += tensor;
    if (size >= limit) {
      sizes.push(size);
      ready.push(done / total);
      size = 0.0;
      limit = cap_bytes;
    }
  }
  if (size > 0) {
    sizes.push(size);
    ready.push(done / total);
  }
  return [sizes, ready];
}

export function bucket_schedule(compute, comm, sizes, ready) {
  const total = sum(sizes);
  const starts = [];
  const ends = [];
  let free = 0.0;
  for (let i = 0; i < sizes.length; i += 1) {
    const start = Math.max(compute / 3 + compute * 2 / 3 * ready[i], free);
    free = start + comm * sizes[i] / total;
    starts.push(start);
    ends.push(free);
  }
  return [starts, ends];
}

export function bucketed_tail_seconds(compute, comm, sizes, ready) {
  if (comm <= 0 || !sizes.length) return 0.0;
  const ends = bucket_schedule(compute, comm, sizes, ready)[1];
  return Math.max(ends[ends.length - 1], compute) - compute;
}

// A real cluster: DDP's buckets on NCCL (model.py says which of NCCL 2.30's refinements it keeps).
const NCCL_BASE_US = 8.4;
const RING_NVLINK_US = 3.4;
const TREE_NVLINK_US = 4.0;
const NET_US = 14.0;
const RING_PLATEAU = 1.4;
const NCCL_CHANNELS = 32;
const TREE_BUS = 0.92 * 0.5;
const TREE_CORRECTION = [.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9];
const CLUSTER_FIELDS = ["step_s", "comm_s", "latency_s", "bandwidth_s", "tree_calls", "ring_latency_s", "ring_bandwidth_s"];

const nodes = (replicas, node_gpus = NODE_GPUS) => Math.max(1, Math.floor(replicas / node_gpus));

function ring_latency_us(replicas, node_gpus = NODE_GPUS) {
  const across = 2 * (nodes(replicas, node_gpus) - 1);
  return NCCL_BASE_US + (2 * (replicas - 1) - across) * RING_NVLINK_US + across * NET_US;
}

function tree_latency_us(replicas, node_gpus = NODE_GPUS) {
  const m = nodes(replicas, node_gpus);
  return NCCL_BASE_US + 2 * ((Math.floor(replicas / m) - 1) * TREE_NVLINK_US + (31 - Math.clz32(m)) * NET_US);
}

const ring_plateau = (buffer_bytes, replicas, node_gpus = NODE_GPUS) =>
  (nodes(replicas, node_gpus) > 1 && buffer_bytes / (NCCL_CHANNELS * replicas) >= 64 ? RING_PLATEAU : 1.0);

function tree_correction(buffer_bytes) {
  let size = -1;
  for (let q = Math.floor(buffer_bytes / 64); q >= 1; q = Math.floor(q / 2)) size += 1;
  return size >= 0 && size < TREE_CORRECTION.length ? TREE_CORRECTION[size] : 1.0;
}

const bus_bytes_per_s = (link_bytes_per_s, nvlink_bytes_per_s, replicas, node_gpus = NODE_GPUS) =>
  (nodes(replicas, node_gpus) === 1 ? nvlink_bytes_per_s : Math.min(node_gpus * link_bytes_per_s, nvlink_bytes_per_s));

function nccl_allreduce(buffer_bytes, link_bytes_per_s, nvlink_bytes_per_s, replicas, node_gpus = NODE_GPUS) {
  if (replicas <= 1) return [0.0, 0.0, 0.0, 0.0];
  const bus = bus_bytes_per_s(link_bytes_per_s, nvlink_bytes_per_s, replicas, node_gpus);
  return [ring_latency_us(replicas, node_gpus) * ring_plateau(buffer_bytes, replicas, node_gpus) * 1e-6,
    buffer_bytes / (bus * replicas / (2 * (replicas - 1))),
    tree_latency_us(replicas, node_gpus) * 1e-6,
    buffer_bytes / (bus * TREE_BUS * tree_correction(buffer_bytes))];
}

// model.py's rule: NCCL walks tree before ring and takes the ring only when strictly cheaper; one GPU (all zero): ring
const nccl_choice = (c) => (c.some((x) => x !== 0) && c[2] + c[3] <= c[0] + c[1] ? 1 : 0);

export const bucket_caps = (cap_mb) => (cap_mb === null ? [BUCKET_BYTES, FIRST_BUCKET_BYTES] : [cap_mb * MIB, cap_mb * MIB]);

function cluster_point(compute, sizes, ready, link_bytes_per_s, nvlink_bytes_per_s, replicas, micro_batches,
  node_gpus = NODE_GPUS) {
  const priced = new Map(); // a model's buckets come in a few sizes: each priced once (the same numbers)
  const took = [];
  let comm = 0;
  let latency = 0;
  let bandwidth = 0;
  let trees = 0;
  let ring_latency = 0;
  let ring_bandwidth = 0;
  for (const size of sizes) { // one pass: each sum adds the buckets in their order, as summing each list does
    let c = priced.get(size);
    if (c === undefined) {
      c = nccl_allreduce(size, link_bytes_per_s, nvlink_bytes_per_s, replicas, node_gpus);
      priced.set(size, c);
    }
    const tree = nccl_choice(c);
    const t = tree ? c[2] + c[3] : c[0] + c[1];
    took.push(t);
    comm += t;
    latency += tree ? c[2] : c[0];
    bandwidth += tree ? c[3] : c[1];
    trees += tree;
    ring_latency += c[0];
    ring_bandwidth += c[1];
  }
  const step = compute + bucketed_tail_seconds(compute / micro_batches, comm, took, ready);
  return [step, comm, latency, bandwidth, trees, ring_latency, ring_bandwidth];
}

export function cluster(compute, sizes, ready, link_bytes_per_s, nvlink_bytes_per_s, replicas, micro_batches,
  node_gpus = NODE_GPUS) {
  const points = compute.map((c, r) => cluster_point(c, sizes, ready, link_bytes_per_s, nvlink_bytes_per_s,
    replicas[r], micro_batches, node_gpus));
  const out = Object.fromEntries(CLUSTER_FIELDS.map((name, i) => [name, points.map((p) => p[i])]));
  out.efficiency = compute.map((c, r) => efficiency(c, out.step_s[r]));
  return out;
}

/** model.evaluate for one run: arrays over the replica counts, and the run's facts. */
export function evaluate(x, replicas) {
  const run = {
    replicas, compute_s: [], allreduce_s: [], comm_s: [], step_s: [], exposed_s: [], efficiency: [],
    tokens_per_replica: [], sequences_per_replica: [], states_bytes: [], fits: [],
  };
  const hierarchical = x.hierarchical !== 0 && x.hierarchical !== false;
  const backward = x.backward_only !== 0 && x.backward_only !== false;
  for (const n of replicas) {
    const compute = compute_seconds(x.params, x.batch_tokens, n, x.peak_flops, x.mfu);
    const allreduce = allreduce_seconds(x.params, x.bytes_per_grad, x.link_bytes_per_s, x.nvlink_bytes_per_s, n,
      hierarchical);
    const comm = comm_seconds(allreduce, x.sharding, x.bytes_per_grad);
    const step = step_seconds(compute, comm, backward, forward_traffic(x.sharding, x.bytes_per_grad) * allreduce);
    const tokens = x.batch_tokens / n;
    const states = state_bytes_per_param(x.sharding, n, x.state_bytes) * x.params;
    run.compute_s.push(compute);
    run.allreduce_s.push(allreduce);
    run.comm_s.push(comm);
    run.step_s.push(step);
    run.exposed_s.push(step - compute);
    run.efficiency.push(efficiency(compute, step));
    run.tokens_per_replica.push(tokens);
    run.sequences_per_replica.push(tokens / x.seq_len);
    run.states_bytes.push(states);
    run.fits.push(states <= x.memory_bytes);
  }
  run.crossing_index = run.step_s.findIndex((step, i) => step > run.compute_s[i]);
  run.continuous_crossing = continuous_crossing(x.batch_tokens, x.peak_flops, x.mfu, x.bytes_per_grad,
    x.link_bytes_per_s, x.nvlink_bytes_per_s, hierarchical, backward, x.sharding);
  run.smallest_fitting = smallest_fitting_replicas(x.params, x.sharding, x.memory_bytes, x.state_bytes);
  run.smallest_fitting_index = run.fits.indexOf(true);
  return run;
}

/** facts.inputs: the model's inputs for a selection of preset ids, in SI units (options: facts.OPTIONS as
 * [id, label] lists, in order). */
export function inputs(presets, options, sel) {
  const m = presets.models[sel.model];
  const b = presets.batches[sel.batch];
  const net = presets.networks[sel.network];
  const gpu = presets.gpus[sel.gpu || presets.workshop.gpu];
  const w = presets.workshop;
  return {
    params: m.params, batch_tokens: b.tokens,
    link_bytes_per_s: (net.nvlink ? gpu.nvlink_gbytes_per_s : net.link_gbytes_per_s) * 1e9,
    nvlink_bytes_per_s: gpu.nvlink_gbytes_per_s * GB, peak_flops: gpu.peak_tflops * 1e12,
    memory_bytes: gpu.memory_gb * GB, mfu: w.mfu,
    bytes_per_grad: sel.precision === "fp32" ? FP32_BYTES : w.bytes_per_grad,
    hierarchical: sel.topology === "nodes", backward_only: sel.overlap === "backward",
    sharding: options.sharding.findIndex(([id]) => id === sel.sharding), seq_len: w.seq_len,
    state_bytes: w.bytes_per_param_states,
  };
}

export const model = {
  replica_counts, compute_seconds, ring_seconds, allreduce_seconds, forward_traffic, traffic_factor, comm_seconds,
  hiding_comm_seconds, hidden_window,
  step_seconds, efficiency, kept_bytes_per_param, state_bytes_per_param, smallest_fitting_replicas,
  continuous_crossing, tensor_params, buckets, bucket_schedule, bucketed_tail_seconds, nodes, ring_latency_us,
  tree_latency_us, ring_plateau, tree_correction, bus_bytes_per_s, nccl_allreduce, nccl_choice, bucket_caps,
  cluster_point, cluster, evaluate, inputs, num, sig, seconds,
  percent, fraction, data_size, gigabytes, power, given, about,
};
