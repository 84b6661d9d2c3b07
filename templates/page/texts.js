// The words of a selection: readout, descriptions and data tables (generator/render.py writes the default's).
import { data_size, fraction, gigabytes, num, percent, seconds, sig, smallest_fitting_replicas } from "./model.js";
import { P, REPLICAS, data, readout } from "./data.js";
import { factsOf } from "./selection.js";

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
export function texts(sel) {
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

let holders = null; // the elements written here, found once (a search of the whole page cost ~0.5 ms a change)

/** `wordsAway`: figures whose description and table wait (those away, unless said otherwise). */
export function fillTexts(f, away = new Set(), wordsAway = away) {
  fillReadout(f);
  holders ||= {
    captions: [...document.querySelectorAll("[data-selection]")].map((el) => [el, el.closest(".figure")?.id]),
    describes: [...document.querySelectorAll("[data-describe]")],
    tables: [...document.querySelectorAll("[data-table]")],
  };
  for (const [el, id] of holders.captions) if (!away.has(id)) setText(el, f.caption);
  for (const el of holders.describes) {
    if (!wordsAway.has(el.dataset.describe)) setText(el, describe(f, el.dataset.describe));
  }
  for (const table of holders.tables) {
    if (wordsAway.has(table.dataset.table)) continue;
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
