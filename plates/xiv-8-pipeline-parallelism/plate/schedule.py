"""Pipeline schedules placed in time: every forward (F), backward (B, or for Zero Bubble the input gradient B and
the weight gradient W) of every micro-batch on every stage, each started as soon as its stage is free and the
operations it needs are done. The closed forms of the bubble are tests of this, not its source. The page runs this
module compiled (generator/compiler.py), so it keeps to the Python the page runs.

Notation: p stages (GPUs), m micro-batches per step, v model chunks per GPU (interleaving; chunk c of stage s is
virtual stage c·p + s), f, b, w one micro-batch's forward, backward and (Zero Bubble) weight-gradient time on one
stage, all its chunks together; under Zero Bubble the input gradient takes b − w."""

GPIPE = "gpipe"
ONE_F_ONE_B = "1f1b"
INTERLEAVED = "interleaved"
ZB_H1 = "zb-h1"


def gpipe_order(p, m, s):
    """GPipe on stage s: every forward, then every backward (arXiv:1811.06965)."""
    order = []
    for j in range(m):
        order.append([0, j, 0])
    for j in range(m):
        order.append([1, j, 0])
    return order


def one_f_one_b_order(p, m, s):
    """1F1B (PipeDream-Flush) on stage s: p − s − 1 forwards to warm up, then one forward and one backward in turn,
    then the backwards left (Megatron-LM's non-interleaved schedule)."""
    warm = min(p - s - 1, m)
    order = []
    for j in range(warm):
        order.append([0, j, 0])
    for i in range(m - warm):
        order.append([0, warm + i, 0])
        order.append([1, i, 0])
    for i in range(m - warm, m):
        order.append([1, i, 0])
    return order


def chunk_of(k, p, v, forward):
    """The chunk of stage-local operation k under interleaving: groups of p micro-batches per chunk in turn
    (Megatron-LM's get_model_chunk_id), the backward's from the last chunk."""
    c = (k // p) % v
    return c if forward else v - 1 - c


def micro_of(k, p, v):
    """The micro-batch of stage-local operation k under interleaving (groups of p)."""
    return (k // (p * v)) * p + k % p


def interleaved_order(p, m, v, s):
    """Interleaved 1F1B on stage s (arXiv:2104.04473 §2.2.2; Megatron-LM): m·v forwards and backwards of chunks,
    (p − s − 1)·2 + (v − 1)·p forwards to warm up, then one forward and one backward in turn; m a multiple of
    p."""
    total = m * v
    warm = min((p - s - 1) * 2 + (v - 1) * p, total)
    order = []
    for k in range(warm):
        order.append([0, micro_of(k, p, v), chunk_of(k, p, v, True)])
    for i in range(total - warm):
        k = warm + i
        order.append([0, micro_of(k, p, v), chunk_of(k, p, v, True)])
        order.append([1, micro_of(i, p, v), chunk_of(i, p, v, False)])
    for i in range(total - warm, total):
        order.append([1, micro_of(i, p, v), chunk_of(i, p, v, False)])
    return order


def zb_h1_order(p, m, s):
    """ZB-H1 on stage s (arXiv:2401.10241 §3.1), in an order written here: 1F1B's forwards and input gradients,
    with the weight gradients W deferred: stage s holds back min(s, m) of them, runs one after each input gradient
    once it holds that many, and the rest at the end, where they fill the drain. It gives the paper's bubble,
    (p − 1)(T_F + T_B − T_W) from m = p on while T_W ≤ T_B, and its peak of p micro-batches held (tests)."""
    warm = min(p - s - 1, m)
    deferred = min(s, m)
    order = []
    for j in range(warm):
        order.append([0, j, 0])
    done = 0
    for i in range(m - warm):
        order.append([0, warm + i, 0])
        order.append([1, i, 0])
        if i >= deferred:
            order.append([2, done, 0])
            done += 1
    for i in range(m - warm, m):
        order.append([1, i, 0])
        if i >= deferred:
            order.append([2, done, 0])
            done += 1
    for j in range(done, m):
        order.append([2, j, 0])
    return order


def stage_order(schedule, p, m, v, s):
    """Stage s's operations in the order the schedule runs them: [kind (0 F, 1 B, 2 W), micro-batch, chunk]."""
    if schedule == GPIPE:
        return gpipe_order(p, m, s)
    if schedule == INTERLEAVED:
        return interleaved_order(p, m, v, s)
    if schedule == ZB_H1:
        return zb_h1_order(p, m, s)
    return one_f_one_b_order(p, m, s)


def simulate(schedule, p, m, v, f, b, w, keep=True):
    """Every operation of one step placed in time: {"ops": [[stage, kind, micro-batch, chunk, start, end]] (empty
    unless keep), "end": the step's time, "busy": one stage's compute, "held": the most micro-batches each stage holds
    in flight, chunks counted as 1/v each, until the last pass that reads them, "first" and "last": when each stage
    starts and ends its work, "complete": every operation placed}.
    Each operation starts when its stage is free and what it needs is done: a forward the same chunk's forward one
    virtual stage earlier, a backward the one a virtual stage later (the last its own forward), W its own B."""
    chunks = int(v) if schedule == INTERLEAVED else 1
    virtual = int(p) * chunks
    split = schedule == ZB_H1
    durations = [float(f) / chunks, float(b - w if split else b) / chunks, float(w) / chunks]
    share = 1.0 / chunks  # a chunk holds this much of a micro-batch's activations on its stage
    freed = 2 if split else 1  # activations stay until the last pass that reads them: W under Zero Bubble, else B
    size = int(m) * virtual
    done = [[-1.0] * size, [-1.0] * size, [-1.0] * size]
    orders = []
    at = []
    free = []
    first = []
    held = []
    alive = []
    for s in range(p):
        orders.append(stage_order(schedule, p, m, chunks, s))
        at.append(0)
        free.append(0.0)
        first.append(-1.0)
        held.append(0.0)
        alive.append(0.0)
    ops = []
    left = 0
    for s in range(p):
        left += len(orders[s])
    while left > 0:
        moved = 0
        for s in range(p):
            order = orders[s]
            placed = int(at[s])
            clock = float(free[s])
            while placed < len(order):
                op = order[placed]
                kind = int(op[0])
                here = int(op[1]) * virtual + int(op[2]) * p + s  # micro-batch j at virtual stage k: j·(p·v) + k
                if kind == 0:
                    need = done[0][here - 1] if here % virtual > 0 else 0.0
                elif kind == 1:
                    need = done[1][here + 1] if here % virtual < virtual - 1 else done[0][here]
                else:
                    need = done[1][here]
                if need < 0:
                    break
                start = float(max(clock, need))
                if first[s] < 0:
                    first[s] = start
                clock = start + durations[kind]
                done[kind][here] = clock
                if keep:
                    ops.append([s, kind, op[1], op[2], start, clock])
                if kind == 0:
                    alive[s] += share
                    held[s] = max(held[s], alive[s])
                if kind == freed:
                    alive[s] -= share
                placed += 1
                moved += 1
                left -= 1
            at[s] = placed
            free[s] = clock
        if moved == 0:
            break  # an order that waits on itself: never for the schedules above
    last = 0.0
    for s in range(p):
        last = max(last, free[s])
    return {"ops": ops, "end": last, "busy": m * (f + b), "held": held, "first": first, "last": free,
            "complete": left == 0}
