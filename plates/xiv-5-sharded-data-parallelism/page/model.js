// Plate XIV.5's model in the page: plate/model.py function by function, under the same names, with the same
// operations in the same order (so both give the same doubles; tests/plates/xiv5/test_xiv5_js.py holds them
// equal). Scalars, not arrays: a caller maps over replica counts. The formulas plate/model.py takes from XIV.4's
// plate/model.py are written here too (private), since each plate's page modules are bundled alone with the
// engine's.

export const GIB = 2 ** 30;
export const WEIGHT_BYTES = 2;
export const GRADIENT_BYTES = 2;
export const OPTIMISER_BYTES = 12;
export const STATE_BYTES = WEIGHT_BYTES + GRADIENT_BYTES + OPTIMISER_BYTES;
export const STAGES = [0, 1, 2, 3];
export const GATHERS = [0, 1, 1, 2];
const RING_FACTOR = 2;

// --- XIV.4's formulas (its plate/model.py) that plate/model.py reuses ------------------------------

/** XIV.4's replica_counts: powers of two from 1 to max_replicas inclusive. */
export function replica_counts(max_replicas) {
  const out = [];
  for (let n = 1; n <= max_replicas; n *= 2) out.push(n);
  return out;
}

/** XIV.4's ring_seconds. */
function ring_seconds(buffer_bytes, link_bytes_per_s, replicas) {
  return RING_FACTOR * (replicas - 1) / replicas * buffer_bytes / link_bytes_per_s;
}

/** XIV.4's traffic_factor. */
function traffic_factor(sharding, bytes_per_grad) {
  const gathers = sharding === 3 ? 2 : sharding === 0 ? 0 : 1;
  return sharding === 0 ? 1.0 : (gathers * WEIGHT_BYTES + bytes_per_grad) / (2 * bytes_per_grad);
}

/** XIV.4's comm_seconds. */
function comm_seconds(allreduce, sharding, bytes_per_grad) {
  return traffic_factor(sharding, bytes_per_grad) * allreduce;
}

/** XIV.4's kept_bytes_per_param. */
function kept_bytes_per_param(sharding, state_bytes) {
  if (sharding === 0) return state_bytes;
  return sharding === 1 ? WEIGHT_BYTES + GRADIENT_BYTES : sharding === 2 ? WEIGHT_BYTES : 0;
}

/** XIV.4's state_bytes_per_param. */
function state_bytes_per_param(sharding, replicas, state_bytes = 16) {
  const kept = kept_bytes_per_param(sharding, state_bytes);
  return kept + (state_bytes - kept) / replicas;
}

/** XIV.4's smallest_fitting_replicas. */
function smallest_fitting_replicas(params, sharding, memory_bytes, state_bytes = 16) {
  const kept = kept_bytes_per_param(sharding, state_bytes) * params;
  const sharded = (state_bytes - kept_bytes_per_param(sharding, state_bytes)) * params;
  const room = memory_bytes - kept;
  if (sharded === 0) return kept <= memory_bytes ? 1.0 : NaN;
  return room > 0 ? Math.max(1, Math.ceil(sharded / room)) : NaN;
}

// --- plate/model.py ---------------------------------------------------------------------------------------

export function ring_share(replicas) {
  const n = replicas;
  return (n - 1) / n;
}

export function state_bytes(params, stage, replicas, per_param = STATE_BYTES) {
  return state_bytes_per_param(stage, replicas, per_param) * params;
}

export function kept_bytes(params, stage, per_param = STATE_BYTES) {
  return kept_bytes_per_param(stage, per_param) * params;
}

export function smallest_replicas(params, stage, memory_bytes, per_param = STATE_BYTES) {
  return smallest_fitting_replicas(params, stage, memory_bytes, per_param);
}

export function reduce_scatter_bytes(params, grad_bytes, replicas) {
  return grad_bytes * params * ring_share(replicas);
}

export function all_gather_bytes(params, replicas) {
  return WEIGHT_BYTES * params * ring_share(replicas);
}

export function weight_gathers(stage) {
  return GATHERS[stage];
}

export function allreduce_bytes(params, grad_bytes, replicas) {
  return RING_FACTOR * grad_bytes * params * ring_share(replicas);
}

export function traffic_ratio(stage, grad_bytes) {
  return traffic_factor(stage, grad_bytes);
}

export function traffic_bytes(params, stage, grad_bytes, replicas) {
  return traffic_ratio(stage, grad_bytes) * allreduce_bytes(params, grad_bytes, replicas);
}

export function traffic_limit_bytes(params, stage, grad_bytes) {
  return traffic_ratio(stage, grad_bytes) * RING_FACTOR * grad_bytes * params;
}

export function traffic_seconds(params, stage, grad_bytes, link_bytes_per_s, replicas) {
  return comm_seconds(ring_seconds(grad_bytes * params, link_bytes_per_s, replicas), stage, grad_bytes);
}


/** The model as window.plate.model (the engine's main.js exposes it). */
export const model = {
  replica_counts, ring_share, state_bytes, kept_bytes, smallest_replicas, reduce_scatter_bytes, all_gather_bytes,
  weight_gathers, allreduce_bytes, traffic_ratio, traffic_bytes, traffic_limit_bytes, traffic_seconds,
};
