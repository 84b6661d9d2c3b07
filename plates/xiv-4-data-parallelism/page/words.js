// The plate's words, written once: the readout, each figure's description and data table. The live page calls
// them on its facts (factsOf); the build runs this same file under node on the default's facts
// (generator/texts.py), so the page as built (no JavaScript) and the live page say the same. No DOM here.
// W is what the words need besides the facts: the sharding options' labels, the workshop's sequence length and
// the plates this one refers to (content: plate.md's [plates]).
import { hiding_comm_seconds, smallest_fitting_replicas } from "./model.js";
import { data_size, fraction, gigabytes, num, percent, seconds, sig } from "./notation.js";

const capital = (text) => text[0].toUpperCase() + text.slice(1);

/** '0.500 of a sequence', '2 sequences', '1.50 sequences': a whole share is a count, any other a measure. */
function sequencesText(share) {
  if (share < 1) return `${fraction(share)} of a sequence`;
  if (share === 1) return "one sequence";
  return `${Number.isInteger(share) ? num(share) : sig(share)} sequences`;
}

/** (what communicates, what it hides behind): the nouns of the readout and descriptions. */
function against(f) {
  return [f.sharding_stage === 3 ? "ZeRO-3's traffic" : "the all-reduce", f.backward_only ? "the backward pass" : "compute"];
}

/** Figure 1's communication at each replica count, as its line draws it (selection.js gridRows): what must hide
 * behind the time drawn beside it. */
const drawnComm = (f) => f.points.map((p) => hiding_comm_seconds(p.comm_s, p.allreduce_s, f.inputs.sharding,
  f.inputs.bytes_per_grad, f.backward_only));

/** The descriptions' note on the real cluster under a ZeRO stage, else nothing. */
const plainDdp = (f) => (f.sharding_stage > 0 ? " The real cluster is plain DDP: it does not follow the Sharding control." : "");

/** ' (plate XIV.5)' when the content names the plate on that subject, else nothing. */
const seePlate = (W, subject) => (W.plates && W.plates[subject] ? ` (plate ${W.plates[subject]})` : "");

/** One short paragraph per question a reader brings: hiding, cost, memory. */
export function readoutParagraphs(f, W) {
  return [hidingText(f), costText(f), memoryText(f, W)];
}

/** Where communication outgrows the compute it hides behind: n*, and the first power of two past it. */
function hidingText(f) {
  const [noun, behind] = against(f);
  const star = num(f.continuous_crossing);
  let text;
  if (f.crossing_replicas === null) {
    text = `${capital(noun)} stays hidden behind ${behind} all the way to ${num(f.max_replicas)} replicas ` +
      `(the lines would meet at n* ≈ ${star}).`;
  } else {
    const at = f.points.find((p) => p.replicas === f.crossing_replicas);
    const past = `${num(f.crossing_replicas)} is the first power of two past it`;
    if (f.sharding_stage === 3 && f.backward_only) {
      // Pass by pass (f.forward_comm_s is at the timeline's count, the crossing): the forward all-gather hides
      // behind the forward pass, the rest of the traffic behind the backward pass.
      text = `${capital(noun)} outgrows the passes it hides behind at n* ≈ ${star} replicas; ${past}, where ` +
        `its backward-pass share takes ${seconds(at.comm_s - f.forward_comm_s)} against ` +
        `${seconds(at.compute_s * 2 / 3)} of backward pass, and the forward all-gather ` +
        `${seconds(f.forward_comm_s)} against ${seconds(at.compute_s / 3)} of forward pass.`;
    } else {
      const hiding = f.backward_only ? at.compute_s * 2 / 3 : at.compute_s; // the time it can hide behind
      text = `${capital(noun)} outgrows ${behind} at n* ≈ ${star} replicas; ${past}, where it takes ` +
        `${seconds(at.comm_s)} against ${seconds(hiding)} of ${behind.replace("the ", "")}.`;
    }
  }
  if (f.hypothetical_from !== null) {
    const link = f.gpu.interconnect;
    text += ` ${link} joins at most ${num(f.hypothetical_from)} ${f.gpu.name} GPUs (${f.gpu.nvlink_domain_name}): ` +
      `beyond that the figures shade the ${link} ring as hypothetical.`;
  }
  return text;
}

/** What one step then costs: the wait beyond compute alone, the efficiency, each replica's share. */
function costText(f) {
  const last = f.points[f.points.length - 1];
  if (f.crossing_replicas === null) {
    return `A step costs its compute alone: ${seconds(last.step_s)} on ${num(last.replicas)} replicas, ` +
      `where communication takes ${seconds(last.comm_s)}; efficiency still ${percent(last.efficiency)}.`;
  }
  // The times of that crossing are the paragraph above's; what is new is the wait they make.
  const at = f.points.find((p) => p.replicas === f.crossing_replicas);
  // Behind the backward pass the readout's wait is the bound of perfect overlap within each pass; DDP's buckets
  // (Figure 3, at the same replica count) wait longer.
  const bound = f.backward_only
    ? ` with perfect overlap within each pass (${seconds(f.timeline_tail_s)} with DDP's buckets, Figure 3)` : "";
  return `Each step there waits ${seconds(at.exposed_s)} for communication beyond compute${bound}: ` +
    `efficiency ${percent(at.efficiency)}, and each replica processes ${num(at.tokens_per_replica)} tokens ` +
    `per step (${sequencesText(at.sequences_per_replica)}); on ${num(last.replicas)} replicas a step takes ` +
    `${seconds(last.step_s)}, efficiency ${percent(last.efficiency)}.`;
}

/** [the first sharding stage's label, the smallest replica count] at which the model states fit, or null. */
function firstStageThatFits(f, W) {
  const x = f.inputs;
  for (let k = 1; k < W.sharding.length; k += 1) {
    const n = smallest_fitting_replicas(x.params, k, x.memory_bytes, x.state_bytes);
    if (!Number.isNaN(n)) return [W.sharding[k][1], n];
  }
  return null;
}

/** Whether the model states fit on the chosen GPU (one unit: GB = 10⁹ B), and from how many replicas. */
function memoryText(f, W) {
  const gpu = `one ${f.gpu.name} GPU (${num(f.gpu_memory_gb)} GB)`; // the prose says once what GB means
  const first = f.points[0];
  const last = f.points[f.points.length - 1];
  if (f.sharding_stage === 0) {
    const fits = first.fits ? "fit on" : "do not fit on";
    let text = `Model states: ${gigabytes(first.states_gb)} per GPU, which ${fits} ${gpu}.`;
    const other = first.fits ? null : firstStageThatFits(f, W);
    if (other !== null) {
      text += ` Sharded with ${other[0]} they would fit from ${num(other[1])} replicas${seePlate(W, "sharding")}.`;
    }
    return text;
  }
  const text = `With ${W.sharding[f.sharding_stage][1]}, model states per GPU fall from ` +
    `${gigabytes(first.states_gb)} on one replica to ${gigabytes(last.states_gb)} on ${num(last.replicas)}; `;
  const n = f.smallest_fitting_replicas;
  const onGrid = f.smallest_fitting_on_grid;
  if (n === null) return `${text}they never fit on ${gpu}.`;
  if (onGrid === null) return `${text}they fit on ${gpu} only from ${num(n)} replicas, beyond the figures.`;
  const grid = onGrid === n ? "" : ` (${num(onGrid)} on the figures' powers of two)`;
  return `${text}they fit on ${gpu} from ${num(n)} replicas${grid}.`;
}

/** The step timeline's phases, when each starts and ends. */
function timelineTable(f) {
  const p = f.points.find((q) => q.replicas === f.timeline_replicas);
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

/** The step timeline in words. */
function describeTimeline(f) {
  const p = f.points.find((q) => q.replicas === f.timeline_replicas);
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
  // DDP's bucket_cap_mb left unset: 25 MiB, the first bucket 1 MiB
  const limit = f.bucket_cap_mb === null ? "25 MiB (the first at 1 MiB)" : `${num(f.bucket_cap_mb)} MiB`;
  text += `Below, the gradients go in ${num(sizes.length)} buckets, each all-reduced as soon as the backward pass ` +
    "fills it, one after another on the link; bars are darker where the link is busier. DDP closes a bucket once " +
    `it holds ${limit} and never splits a tensor, so they hold from ` +
    `${data_size(sizes.reduce((a, b) => Math.min(a, b)))} to ${data_size(sizes.reduce((a, b) => Math.max(a, b)))}. `;
  if (f.sharding_stage > 0) {
    text += "The buckets are plain DDP's all-reduce buckets: the Sharding control sets how much time they carry, " +
      "not their sizes. ";
  }
  if (tail <= 0) return `${text}The link finishes with compute: nothing is exposed.`;
  return `${text}The last bucket finishes at ${seconds(compute + tail)}: an exposed tail of ${seconds(tail)} after ` +
    `compute (bottom row). Perfect overlap within the backward pass would leave ${seconds(bound)} ` +
    `(dotted rule, the ideal); the buckets add ${seconds(tail - bound)}.`;
}

/** The memory figure's table: states per GPU at each replica count, and whether they fit. */
function memoryTableRows(f) {
  return f.points.map((p) => [num(p.replicas), gigabytes(p.states_gb), p.fits ? "yes" : "no"]);
}

/** The memory figure in words: the states' line against the GPU's memory, and where it passes under. */
function describeMemory(f, W) {
  const first = f.points[0];
  const last = f.points[f.points.length - 1];
  const how = f.sharding_stage === 0 ? "without sharding" : `with ${W.sharding[f.sharding_stage][1]}`;
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

/** A figure's data table for one selection, as text; the crossing's row says so. */
export function tableRows(f, figureId) {
  if (figureId === "fig-timeline") return timelineTable(f);
  if (figureId === "fig-memory") return memoryTableRows(f);
  const c = f.cluster;
  const drawn = drawnComm(f);
  return f.points.map((p, r) => {
    const n = num(p.replicas) + (p.replicas === f.crossing_replicas ? " (crossed)" : "");
    return figureId === "fig-time"
      ? [n, seconds(p.compute_s), seconds(drawn[r]), seconds(c.comm_s[r])]
      : [n, num(p.tokens_per_replica), percent(p.efficiency), percent(c.efficiency[r])];
  });
}

/** A figure in words for one selection: what is drawn, how it runs, where it turns. */
export function describe(f, figureId, W) {
  if (figureId === "fig-timeline") return describeTimeline(f);
  if (figureId === "fig-memory") return describeMemory(f, W);
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
    // ZeRO-3, backward only: the line is the traffic of the backward pass alone (charts.grid_rows)
    const zero3 = f.sharding_stage === 3 && f.backward_only;
    const drawn = drawnComm(f);
    if (points.length > 1) {
      const line = zero3
        ? "ZeRO-3's traffic during the backward pass (dashed vermilion line, squares: its backward all-gather and " +
          "reduce-scatter; the forward all-gather hides behind the forward pass)"
        : `${noun} (dashed vermilion line, squares)`;
      text += `With one replica there is nothing to reduce; ${line} takes ` +
        `${seconds(drawn[1])} on 2 replicas and ${seconds(drawn[drawn.length - 1])} on ${nMax}, levelling off as n grows. `;
    }
    if (f.backward_only) {
      text += `The dotted blue line is the backward pass, two thirds of compute: all ${zero3 ? "that traffic" : "the all-reduce"} can hide behind. `;
    }
    text += cross
      ? `${zero3 ? "That traffic" : capital(noun)} outgrows ${behind} at ${star} (dotted rule, the ideal point) and first on the grid at ${num(cross)} ` +
        "replicas (solid rule)."
      : `${zero3 ? "That traffic" : capital(noun)} stays below ${behind} up to ${nMax} replicas.`;
    if (points.length > 1) {
      const comm = f.cluster.comm_s;
      text += ` The dash-dotted line is DDP on a real cluster: its ${num(f.cluster_buckets[0].length)} ` +
        "buckets' all-reduces, each by NCCL's cheaper of ring and tree on 8-GPU nodes with a NIC per GPU, " +
        `latency included: ${seconds(comm[1])} on 2 replicas and ${seconds(comm[comm.length - 1])} on ${nMax}.` +
        plainDdp(f);
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
    const efficiency = f.cluster.efficiency;
    text += " The dash-dotted line is DDP on a real cluster (NCCL on 8-GPU nodes, only the last " +
      `micro-batch's backward pass hiding the buckets), ${percent(efficiency[efficiency.length - 1])} on ${nMax} replicas.` +
      plainDdp(f);
  }
  const seqLen = W.seq_len;
  const oneSequence = f.batch.tokens / seqLen;
  if (oneSequence < last.replicas) {
    text += ` Shaded beyond ${num(oneSequence)} replicas, where a replica gets less than one ${num(seqLen)}-token ` +
      "sequence per step.";
  }
  if (f.hypothetical_from !== null) {
    const link = f.gpu.interconnect;
    text += ` Shaded darker beyond ${num(f.hypothetical_from)} GPUs, the most one ${f.gpu.name} ${link} domain ` +
      `holds: there the ${link} ring is hypothetical.`;
  }
  return text;
}

/** Every word of one selection's facts: the readout's paragraphs, and each figure's description and table. */
export function words(f, W, figureIds) {
  return {
    readout: readoutParagraphs(f, W),
    describe: Object.fromEntries(figureIds.map((id) => [id, describe(f, id, W)])),
    tables: Object.fromEntries(figureIds.map((id) => [id, tableRows(f, id)])),
  };
}
