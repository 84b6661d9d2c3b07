"""XIV.4's words for one selection's facts (readout, descriptions, tables), in the Python the page runs compiled."""
# The build calls these on the default's facts as plain data (the page's shape); the page runs them compiled by
# generator/page/compiler.py, so the page as built and the live page say the same. W is what the words need besides the
# facts: the sharding options' labels, the workshop's sequence length and the plates this one refers to.
import math

from generator.api import data_size, fraction, gigabytes, num, percent, seconds, sig

from platelib.compute import blocking_gather_step_seconds, efficiency
from platelib.zero import STATE_FIGURES, forward_traffic, hiding_comm_seconds, smallest_fitting_replicas


def capital(text):
    """The text with its first letter a capital."""
    return text[0].upper() + text[1:]


# A share of one sequence in words, by the number of replicas that share it: 2 → "half a sequence".
SHARE_WORDS = [[2, "half a sequence"], [4, "a quarter of a sequence"], [8, "an eighth of a sequence"],
               [16, "a sixteenth of a sequence"], [32, "a thirty-second of a sequence"],
               [64, "a sixty-fourth of a sequence"]]


def sequences_text(share):
    """'half a sequence', 'one sequence per 128 replicas', '0.750 of a sequence', '2 sequences', '1.50 sequences':
    a share of one sequence in words where replicas split it evenly, a whole share a count, any other a measure."""
    if share < 1:
        split = 1 / share
        if split == math.floor(split):
            for k in range(len(SHARE_WORDS)):
                if SHARE_WORDS[k][0] == split:
                    return SHARE_WORDS[k][1]
            return "one sequence per " + num(split) + " replicas"
        return fraction(share) + " of a sequence"
    if share == 1:
        return "one sequence"
    return (num(share) if share == math.floor(share) else sig(share)) + " sequences"


def states_size(gb):
    """Model states per GPU, given in GB, to STATE_FIGURES significant figures (128.5 GB), as every plate's sentences
    write them (the data tables keep three)."""
    return gigabytes(gb, STATE_FIGURES)


def noun_of(f):
    """What communicates: the readout's and descriptions' noun (ZeRO's is a reduce-scatter and an all-gather, never an
    all-reduce)."""
    return "ZeRO-" + num(f["sharding_stage"]) + "'s traffic" if f["sharding_stage"] > 0 else "the all-reduce"


def gather_of(f):
    """What ZeRO's all-gather behind the forward pass carries: the weights for the forward pass (ZeRO-3), or the
    weights the last optimiser step updated (ZeRO-1/2)."""
    return "the forward all-gather" if f["sharding_stage"] == 3 else "the all-gather of the updated weights"


def pass_by_pass(f):
    """Whether communication hides pass by pass: behind the backward pass only, under a ZeRO stage (its all-gather
    behind the next forward pass, the rest behind the backward pass)."""
    return f["sharding_stage"] > 0 and f["backward_only"]


def schedule_text(f, at):
    """Under ZeRO-1/2 behind the backward pass only: the schedule the page models for the all-gather of the updated
    weights (prefetched, as FSDP's SHARD_GRAD_OP) and, at the same replica count, DeepSpeed's blocking one."""
    if f["sharding_stage"] == 0 or f["sharding_stage"] == 3 or not f["backward_only"] or at["replicas"] < 2:
        return ""
    x = f["inputs"]
    gather = float(forward_traffic(x["sharding"], x["bytes_per_grad"])) * at["allreduce_s"]
    blocking = float(blocking_gather_step_seconds(at["compute_s"], at["comm_s"], gather, True))
    return (" The updated weights exist only after the optimiser step: the page prefetches their all-gather behind " +
            "the next forward pass, as FSDP's SHARD_GRAD_OP does. Run after the step and waited for, as DeepSpeed's " +
            "stages 1 and 2 run it, it would leave " + percent(efficiency(at["compute_s"], blocking)) + " on " +
            num(at["replicas"]) + " replicas, not " + percent(at["efficiency"]) + ".")


def behind_of(f):
    """What communication hides behind."""
    return "the backward pass" if f["backward_only"] else "compute"


def point_at(f, replicas):
    """The facts' point at a replica count of the grid."""
    points = f["points"]
    for r in range(len(points)):
        if points[r]["replicas"] == replicas:
            return points[r]
    return None


def drawn_comm(f):
    """Figure 1's communication at each replica count, as its line draws it (the grid dataset's comm_s): what must
    hide behind the time drawn beside it."""
    x = f["inputs"]
    points = f["points"]
    drawn = []
    for r in range(len(points)):
        drawn.append(float(hiding_comm_seconds(points[r]["comm_s"], points[r]["allreduce_s"], x["sharding"],
                                               x["bytes_per_grad"], f["backward_only"])))
    return drawn


def plain_ddp(f):
    """The descriptions' note on the real cluster under a ZeRO stage, else nothing."""
    return " The real cluster is plain DDP: it does not follow the Sharding control." if f["sharding_stage"] > 0 else ""


def cluster_where(f):
    """Where the real cluster runs: 8-GPU nodes with a NIC per GPU, or, with the GPU's own link as the network,
    one domain of it, and where its line stops."""
    if f["cluster_domain"] == 0:
        return "on 8-GPU nodes with a NIC per GPU, at achieved bandwidths"
    link = f["gpu"]["interconnect"]
    text = ("inside one " + link + " domain of up to " + num(f["cluster_domain"]) + " GPUs, on " + link + "'s " +
            "steps and achieved bandwidth with no NIC")
    if f["cluster_reach"] < f["max_replicas"]:
        text += ", so it stops at " + num(f["cluster_reach"]) + " replicas, the domain's edge"
    return text


def no_cluster(f):
    """Why no real cluster is drawn, where not two replicas fit inside the GPU's own link's domain."""
    link = f["gpu"]["interconnect"]
    return (" No dash-dotted line: two replicas of " + num(f["inputs"]["gpus_per_replica"]) + " GPUs outgrow one " +
            link + " domain of " + num(f["cluster_domain"]) + " GPUs, the only place the real cluster is priced " +
            "over " + link + ".")


def priced_at(f):
    """The real cluster's last priced replica index (the grid's last, or the last inside the NVLink domain)."""
    last = 0
    for r in range(len(f["points"])):
        if f["cluster"]["step_s"][r] is not None:
            last = r
    return last


def see_plate(W, subject):
    """' (plate XIV.5)' when the content names the plate on that subject, else nothing."""
    plates = W["plates"]
    if plates and subject in plates and plates[subject]:
        return " (plate " + plates[subject] + ")"
    return ""


def readout(f, W):
    """One short paragraph per question a reader brings: hiding (led by the largest layout that runs), cost, memory."""
    return [runnable_text(f, W) + hiding_text(f), cost_text(f), memory_text(f, W)]


def runnable_text(f, W):
    """The largest replica count of the grid that still gives each replica a whole sequence, and its step: the
    layout a run could use, before the crossing (which may lie past it). Nothing when no count does."""
    points = f["points"]
    best = None
    for r in range(len(points)):
        if points[r]["sequences_per_replica"] >= 1:
            best = points[r]
    if best is None:
        return ""
    whole = "one " + num(W["seq_len"]) + "-token sequence" if best["sequences_per_replica"] == 1 else \
        sequences_text(best["sequences_per_replica"])
    count = num(best["replicas"]) + " replicas"
    g = f["inputs"]["gpus_per_replica"]
    if g > 1:  # a replica of several GPUs: say which layout, and how many GPUs it takes
        count += " of " + f["layout"]["name"] + " (" + num(best["replicas"] * g) + " GPUs"
        if f["layout"]["published"]:
            count += ", the layout " + f["model"]["name"] + " was trained with"
        count += ")"
    return (count + " are the most that still give each a whole sequence (" + whole +
            "): a step takes " + seconds(best["step_s"]) + ", efficiency " + percent(best["efficiency"]) + ". ")


def hiding_text(f):
    """Where communication outgrows the compute it hides behind: n*, and the first power of two past it."""
    noun = noun_of(f)
    behind = behind_of(f)
    star = num(f["continuous_crossing"])
    if f["crossing_replicas"] is None:
        text = (capital(noun) + " stays hidden behind " + behind + " all the way to " + num(f["max_replicas"]) +
                " replicas (the lines would meet at n* ≈ " + star + ").")
    else:
        at = point_at(f, f["crossing_replicas"])
        past = num(f["crossing_replicas"]) + " is the first power of two past it"
        if pass_by_pass(f):
            # Pass by pass (forward_comm_s is at the timeline's count, the crossing): the all-gather hides behind the
            # forward pass, the rest of the traffic behind the backward pass.
            text = (capital(noun) + " outgrows the passes it hides behind at n* ≈ " + star + " replicas; " + past +
                    ", where its backward-pass share takes " + seconds(at["comm_s"] - f["forward_comm_s"]) +
                    " against " + seconds(at["compute_s"] * 2 / 3) + " of backward pass, and " + gather_of(f) + " " +
                    seconds(f["forward_comm_s"]) + " against " + seconds(at["compute_s"] / 3) + " of forward pass.")
        else:
            hiding = at["compute_s"] * 2 / 3 if f["backward_only"] else at["compute_s"]  # what it can hide behind
            what = "backward pass" if f["backward_only"] else "compute"
            text = (capital(noun) + " outgrows " + behind + " at n* ≈ " + star + " replicas; " + past +
                    ", where it takes " + seconds(at["comm_s"]) + " against " + seconds(hiding) + " of " + what + ".")
    if f["hypothetical_from"] is not None:
        link = f["gpu"]["interconnect"]
        text += (" " + link + " joins at most " + num(f["gpu"]["nvlink_domain"]) + " " + f["gpu"]["name"] + " GPUs (" +
                 f["gpu"]["nvlink_domain_name"] + "): beyond that the figures shade the " + link +
                 " ring as hypothetical.")
    return text


def cost_text(f):
    """What one step then costs: the wait beyond compute alone, the efficiency, each replica's share."""
    last = f["points"][-1]
    if f["crossing_replicas"] is None:
        return ("A step costs its compute alone: " + seconds(last["step_s"]) + " on " + num(last["replicas"]) +
                " replicas, where communication takes " + seconds(last["comm_s"]) + "; efficiency still " +
                percent(last["efficiency"]) + "." + schedule_text(f, last))
    # The times of that crossing are the paragraph above's; what is new is the wait they make.
    at = point_at(f, f["crossing_replicas"])
    # Behind the backward pass the readout's wait is the bound of perfect overlap within each pass; DDP's buckets
    # (Figure 3, at the same replica count) wait longer.
    bound = ""
    if f["backward_only"]:
        bound = (" with perfect overlap within each pass (" + seconds(f["timeline_tail_s"]) +
                 " with DDP's buckets, Figure 3)")
    return ("Each step there waits " + seconds(at["exposed_s"]) + " for communication beyond compute" + bound +
            ": efficiency " + percent(at["efficiency"]) + ", and each replica processes " +
            num(at["tokens_per_replica"]) + " tokens per step (" + sequences_text(at["sequences_per_replica"]) +
            "); on " + num(last["replicas"]) + " replicas a step takes " + seconds(last["step_s"]) +
            ", efficiency " + percent(last["efficiency"]) + "." + schedule_text(f, at))


def first_stage_that_fits(f, W):
    """[the first sharding stage's label, the smallest replica count] at which the model states fit, or None."""
    x = f["inputs"]
    for k in range(1, len(W["sharding"])):
        n = smallest_fitting_replicas(x["params"] / x["gpus_per_replica"], k, x["memory_bytes"], x["bytes_per_grad"])
        if n == n:  # not NaN
            return [W["sharding"][k][1], n]
    return None


def memory_text(f, W):
    """Whether the model states fit on the chosen GPU (one unit: GB = 10⁹ B), and from how many replicas."""
    gpu = "one " + f["gpu"]["name"] + " GPU (" + num(f["gpu_memory_gb"]) + " GB)"  # the prose says once what GB means
    first = f["points"][0]
    last = f["points"][-1]
    if f["sharding_stage"] == 0:
        fits = "fit on" if first["fits"] else "do not fit on"
        text = "Model states: " + states_size(first["states_gb"]) + " per GPU, which " + fits + " " + gpu + "."
        other = None if first["fits"] else first_stage_that_fits(f, W)
        if other is not None:
            text += (" Sharded with " + other[0] + " they would fit from " + num(other[1]) + " replicas" +
                     see_plate(W, "sharding") + ".")
        return text
    text = ("With " + W["sharding"][f["sharding_stage"]][1] + ", model states per GPU fall from " +
            states_size(first["states_gb"]) + " on one replica to " + states_size(last["states_gb"]) + " on " +
            num(last["replicas"]) + "; ")
    n = f["smallest_fitting_replicas"]
    on_grid = f["smallest_fitting_on_grid"]
    if n is None:
        return text + "they never fit on " + gpu + "."
    if on_grid is None:
        return text + "they fit on " + gpu + " only from " + num(n) + " replicas, beyond the figures."
    grid = "" if on_grid == n else " (" + num(on_grid) + " on the figures' powers of two)"
    return text + "they fit on " + gpu + " from " + num(n) + " replicas" + grid + "."


def timeline_table(f):
    """The step timeline's phases, when each starts and ends."""
    p = point_at(f, f["timeline_replicas"])
    compute = p["compute_s"]
    tail = f["timeline_tail_s"]
    bound = f["timeline_bound_s"]
    forward = compute / 3
    rows = [["Forward pass", seconds(0), seconds(forward)],
            ["Backward pass: output head, " + num(f["model"]["layers"]) + " layers, input embedding", seconds(forward),
             seconds(compute)]]
    if p["comm_s"] > 0 and not f["backward_only"]:
        rows.append([capital(noun_of(f)) + " beside the whole step (the workshop's overlap)", seconds(0),
                     seconds(p["comm_s"])])
        rows.append(["Exposed tail", seconds(compute), seconds(compute + tail)])
        return rows
    if p["comm_s"] > 0:
        starts = f["bucket_schedule"][0]
        what = ("All-reduce of " if f["sharding_stage"] == 0 else
                "ZeRO-" + num(f["sharding_stage"]) + "'s " + carried_of(f) + ", drawn in DDP's ")
        rows.append([what + num(len(starts)) + " buckets of whole tensors", seconds(starts[0]),
                     seconds(compute + tail)])
    rows.append(["Exposed tail", seconds(compute), seconds(compute + tail)])
    rows.append(["Perfect overlap within the backward pass (bound)", seconds(compute), seconds(compute + bound)])
    return rows


def carried_of(f):
    """What the bars carry under a ZeRO stage: its reduce-scatter, and under ZeRO-3 its backward all-gather too."""
    return "reduce-scatter and backward all-gather" if f["sharding_stage"] == 3 else "reduce-scatter"


def one_micro_batch(f):
    """The timeline's note when the step has several micro-batches: it draws one; they move only the real cluster."""
    if f["selection"]["micro"] == "1":
        return ""
    return (" The timeline draws the step as one micro-batch, as the workshop does; the Micro-batches control moves " +
            "only the real cluster of Figures 1 and 2.")


def describe_timeline(f):
    """The step timeline in words."""
    p = point_at(f, f["timeline_replicas"])
    compute = p["compute_s"]
    tail = f["timeline_tail_s"]
    bound = f["timeline_bound_s"]
    text = ("One optimiser step on each of " + num(f["timeline_replicas"]) + " replicas. The forward pass takes " +
            seconds(compute / 3) + ", then the backward pass " + seconds(compute * 2 / 3) + ", from the output head " +
            "through " + num(f["model"]["layers"]) + " layers to the input embedding, so compute ends at " +
            seconds(compute) + " (grey rule). ")
    if p["comm_s"] == 0:
        return text + "With one replica there is nothing to reduce."
    if not f["backward_only"]:
        text += ("Below, " + noun_of(f) + " runs beside the whole step from its first instant, as the workshop " +
                 "assumes; " +
                 "a real step can send a gradient only once the backward pass has made it (choose \"backward pass " +
                 "only\" for the buckets). ")
        if tail <= 0:
            return text + "It ends at " + seconds(p["comm_s"]) + ", within compute: nothing is exposed." + \
                one_micro_batch(f)
        return (text + "It ends at " + seconds(p["comm_s"]) + ": an exposed tail of " + seconds(tail) +
                " after compute (bottom row)." + one_micro_batch(f))
    sizes = f["buckets"][0]
    # DDP's bucket_cap_mb left unset: 25 MiB, the first bucket 1 MiB
    limit = "25 MiB (the first at 1 MiB)" if f["bucket_cap_mb"] is None else num(f["bucket_cap_mb"]) + " MiB"
    sent = "all-reduced" if f["sharding_stage"] == 0 else "sent"
    text += ("Below, the gradients go in " + num(len(sizes)) + " buckets, each " + sent + " as soon as the backward " +
             "pass fills it, one after another on the link; bars are darker where the link is busier. DDP closes a " +
             "bucket once it holds " + limit + " and never splits a tensor, so they hold from " +
             data_size(min(sizes)) + " to " + data_size(max(sizes)) + ". ")
    if f["sharding_stage"] > 0:
        stage = "ZeRO-" + num(f["sharding_stage"])
        text += ("Under " + stage + " the bars stand for its " + carried_of(f) + ", drawn in plain DDP's buckets: the " +
                 "Sharding control sets how much time they carry, not their sizes; " + gather_of(f) + " runs in " +
                 ("the" if f["sharding_stage"] == 3 else "the next") + " forward pass. ")
    if tail <= 0:
        return text + "The link finishes with compute: nothing is exposed." + one_micro_batch(f)
    ahead = f["forward_exposed_s"]  # what the forward pass cannot hide of its all-gather (ZeRO)
    if ahead > 0:
        # the exposed time is the all-gather overrunning its forward pass, the buckets' share apart
        text += (capital(gather_of(f)) + " takes " + seconds(f["forward_comm_s"]) + " against " +
                 seconds(compute / 3) + " of forward pass, so " + seconds(ahead) + " of it is exposed; ")
        behind = tail - ahead
        text += ("the buckets finish with the backward pass. " if behind <= 0 else "the last bucket finishes " +
                 seconds(behind) + " after compute. ")
        return (text + "That is an exposed tail of " + seconds(tail) + " (bottom row). Perfect overlap within each " +
                "pass would leave " + seconds(bound) + " (dotted rule, the ideal); the buckets add " +
                seconds(tail - bound) + "." + one_micro_batch(f))
    return (text + "The last bucket finishes at " + seconds(compute + tail) + ": an exposed tail of " + seconds(tail) +
            " after compute (bottom row). Perfect overlap within the backward pass would leave " + seconds(bound) +
            " (dotted rule, the ideal); the buckets add " + seconds(tail - bound) + "." + one_micro_batch(f))


def memory_table_rows(f):
    """The memory figure's table: states per GPU at each replica count, and whether they fit."""
    points = f["points"]
    rows = []
    for r in range(len(points)):
        p = points[r]
        rows.append([num(p["replicas"]), gigabytes(p["states_gb"]), "yes" if p["fits"] else "no"])
    return rows


def describe_memory(f, W):
    """The memory figure in words: the states' line against the GPU's memory, and where it passes under."""
    first = f["points"][0]
    last = f["points"][-1]
    how = "without sharding" if f["sharding_stage"] == 0 else "with " + W["sharding"][f["sharding_stage"]][1]
    if f["sharding_stage"] == 0:
        shape = ("a flat line: every replica holds all of them, " + states_size(first["states_gb"]) +
                 " on each of 1 to " + num(last["replicas"]) + " replicas")
    elif f["sharding_stage"] == 3:
        shape = ("a straight line falling as 1/n, from " + states_size(first["states_gb"]) + " on one replica to " +
                 states_size(last["states_gb"]) + " on " + num(last["replicas"]))
    else:
        shape = ("a curve falling from " + states_size(first["states_gb"]) + " on one replica and levelling off at " +
                 "the part each replica keeps whole, " + states_size(last["states_gb"]) + " on " + num(last["replicas"]))
    text = ("On log–log axes against replicas from 1 to " + num(last["replicas"]) + ", model states per GPU (solid " +
            "blue line, circles) " + how + " make " + shape + ". The dashed black line is one " +
            f["gpu"]["name"] + "'s memory, " + num(f["gpu_memory_gb"]) + " GB.")
    on_grid = f["smallest_fitting_on_grid"]
    if on_grid is None:
        return text + " The states stay above it at every replica count drawn."
    if on_grid == 1:
        return text + " The states fit from one replica on."
    return text + " The states fit from " + num(on_grid) + " replicas on (solid rule)."


def title(f, figure_id, W):
    """A figure's point for one selection, the line above it: where its lines turn, or that they do not."""
    points = f["points"]
    first = points[0]
    last = points[-1]
    n_max = num(last["replicas"])
    if figure_id == "fig-timeline":
        on = "On one replica" if f["timeline_replicas"] == 1 else "On " + num(f["timeline_replicas"]) + " replicas"
        tail = f["timeline_tail_s"]
        if point_at(f, f["timeline_replicas"])["comm_s"] == 0:
            return on + " there is nothing to reduce"
        if tail <= 0:
            return on + ", communication ends within compute"
        return on + ", communication outlasts compute by " + seconds(tail)
    if figure_id == "fig-memory":
        gpu = "one " + f["gpu"]["name"] + "'s " + num(f["gpu_memory_gb"]) + " GB"
        on_grid = f["smallest_fitting_on_grid"]
        if on_grid is None:
            return "Model states stay above " + gpu + " up to " + n_max + " replicas"
        if on_grid == 1:
            return "Model states fit in " + gpu + " from one replica on"
        return "Model states fit in " + gpu + " from " + num(on_grid) + " replicas on"
    if figure_id == "fig-efficiency":
        if last["efficiency"] >= first["efficiency"] or f["crossing_replicas"] is None:
            return "Scaling efficiency stays at " + percent(last["efficiency"]) + " up to " + n_max + " replicas"
        at = point_at(f, f["crossing_replicas"])
        return ("Scaling efficiency falls to " + percent(at["efficiency"]) + " at " + num(f["crossing_replicas"]) +
                " replicas and " + percent(last["efficiency"]) + " at " + n_max)
    if f["crossing_replicas"] is None:
        return capital(noun_of(f)) + " stays hidden behind " + behind_of(f) + " up to " + n_max + " replicas"
    return (capital(noun_of(f)) + " stops hiding behind " + behind_of(f) + " at n* ≈ " +
            num(f["continuous_crossing"]) + " replicas")


def table_rows(f, figure_id):
    """A figure's data table for one selection, as text; the crossing's row says so."""
    if figure_id == "fig-timeline":
        return timeline_table(f)
    if figure_id == "fig-memory":
        return memory_table_rows(f)
    c = f["cluster"]
    drawn = drawn_comm(f)
    rows = []
    for r in range(len(f["points"])):
        p = f["points"][r]
        n = num(p["replicas"]) + (" (crossed)" if p["replicas"] == f["crossing_replicas"] else "")
        priced = c["step_s"][r] is not None  # beyond the NVLink domain the real cluster is not priced
        if figure_id == "fig-time":
            rows.append([n, seconds(p["compute_s"]), seconds(drawn[r]),
                         seconds(c["comm_s"][r]) if priced else "not priced"])
        else:
            rows.append([n, num(p["tokens_per_replica"]), percent(p["efficiency"]),
                         percent(c["efficiency"][r]) if priced else "not priced"])
    return rows


def describe(f, figure_id, W):
    """A figure in words for one selection: what is drawn, how it runs, where it turns."""
    if figure_id == "fig-timeline":
        return describe_timeline(f)
    if figure_id == "fig-memory":
        return describe_memory(f, W)
    points = f["points"]
    first = points[0]
    last = points[-1]
    n_max = num(last["replicas"])
    cross = f["crossing_replicas"]
    noun = noun_of(f)
    behind = behind_of(f)
    star = "n* ≈ " + num(f["continuous_crossing"])
    if figure_id == "fig-time":
        text = ("On log–log axes against replicas from 1 to " + n_max + ", compute per step (solid blue line, " +
                "circles) falls as 1/n, from " + seconds(first["compute_s"]) + " on one replica to " +
                seconds(last["compute_s"]) + " on " + n_max + ". ")
        # ZeRO, backward only: the line is the traffic of the backward pass alone (the grid dataset)
        zero3 = pass_by_pass(f)
        drawn = drawn_comm(f)
        if len(points) > 1:
            if zero3:
                carried = ("its backward all-gather and reduce-scatter" if f["sharding_stage"] == 3 else
                           "its reduce-scatter")
                # the line is whichever pass fills first, at the backward pass's scale (zero.hiding_comm_seconds)
                line = (noun + " at the backward pass's scale (dashed vermilion line, squares: whichever fills its " +
                        "pass first, " + carried + " or " + gather_of(f) + " doubled, since the " +
                        ("" if f["sharding_stage"] == 3 else "next ") + "forward pass that hides it is half as long)")
            else:
                line = noun + " (dashed vermilion line, squares)"
            text += ("With one replica there is nothing to reduce; " + line + " takes " + seconds(drawn[1]) +
                     " on 2 replicas and " + seconds(drawn[-1]) + " on " + n_max + ", levelling off as n grows. ")
        if f["backward_only"]:
            text += ("The dotted blue line is the backward pass, two thirds of compute: all " +
                     ("that traffic" if zero3 else "the all-reduce") + " can hide behind. ")
        what = "That traffic" if zero3 else capital(noun)
        if cross:
            text += (what + " outgrows " + behind + " at " + star + " (dotted rule, the ideal point) and first on " +
                     "the grid at " + num(cross) + " replicas (solid rule).")
        else:
            text += what + " stays below " + behind + " up to " + n_max + " replicas."
        if len(points) > 1 and f["cluster_reach"] < 2:
            text += no_cluster(f)
        elif len(points) > 1:
            comm = f["cluster"]["comm_s"]
            end = priced_at(f)
            text += (" The dash-dotted line is DDP on a real cluster: its " + num(len(f["buckets"][0])) +
                     " buckets' all-reduces, each by NCCL's cheaper of ring and tree (NVLS and NVLSTree left out) " +
                     cluster_where(f) + ", latency included: " + seconds(comm[1]) + " on 2 replicas and " +
                     seconds(comm[end]) + " on " + num(points[end]["replicas"]) + "." + plain_ddp(f))
    else:
        full = []
        for r in range(len(points)):
            if percent(points[r]["efficiency"]) == "100%":
                full.append(points[r]["replicas"])
        if cross is None:
            text = ("Scaling efficiency (solid blue line) stays at " + percent(last["efficiency"]) + " up to " +
                    n_max + " replicas.")
        elif len(full) > 0:
            at = point_at(f, cross)
            text = ("Scaling efficiency (solid blue line) is 100% up to " + num(max(full)) + " replicas, then " +
                    "falls: " + percent(at["efficiency"]) + " at " + num(cross) + " (solid rule; " + star +
                    ", dotted) and " + percent(last["efficiency"]) + " at " + n_max + ".")
        else:
            text = ("Scaling efficiency (solid blue line) is " + percent(first["efficiency"]) + " on one replica " +
                    "and " + percent(last["efficiency"]) + " at " + n_max + ".")
        efficiency = f["cluster"]["efficiency"]
        end = priced_at(f)
        if f["cluster_reach"] < 2:
            text += no_cluster(f)
        else:
            hiding = ("the backward pass hides the buckets" if f["selection"]["micro"] == "1" else
                      "only the last micro-batch's backward pass hides the buckets")
            text += (" The dash-dotted line is DDP on a real cluster (NCCL " + cluster_where(f) + "; " + hiding + "), " + percent(efficiency[end]) + " on " +
                     num(points[end]["replicas"]) + " replicas." + plain_ddp(f))
    seq_len = W["seq_len"]
    one_sequence = f["batch"]["tokens"] / seq_len
    if one_sequence < last["replicas"]:
        text += (" Shaded beyond " + num(one_sequence) + " replicas, where a replica gets less than one " +
                 num(seq_len) + "-token sequence per step.")
    if f["hypothetical_from"] is not None:
        link = f["gpu"]["interconnect"]
        g = f["inputs"]["gpus_per_replica"]
        beyond = num(f["hypothetical_from"]) + (" GPUs" if g == 1 else " replicas of " + num(g) + " GPUs, past the " +
                                                  num(f["gpu"]["nvlink_domain"]) + " GPUs")
        text += (" Shaded darker beyond " + beyond + ", the most one " + f["gpu"]["name"] + " " + link +
                 " domain holds: there the " + link + " ring is hypothetical.")
    return text
