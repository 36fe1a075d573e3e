"""Reconfiguration parity for tp, pp and 3D (issue 22, item 4), at library level: a run
under plan A stops after 2 steps and publishes a plan-independent checkpoint (tp
weights gathered, pipeline stages merged); a run under plan B loads it, slices it for
its own plan and runs 2 more steps. Every step's loss is compared with a
never-reconfigured one-process run: relative difference <= 1e-4, the largest printed
per pair. Optimizer: plain SGD, which has no state to re-shard. Model: 4 blocks of tp
attention + MLP, hidden 32, 4 heads. Up to 8 processes; total time printed."""
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import parity_util as pu  # noqa: E402

try:
    import torch
    import torch.distributed as dist
    import torch.multiprocessing as mp
    import torch.nn as nn
    from rubick_job import tp as rtp
    from rubick_job import pipeline as rpp
    from rubick_job.dist import Groups3D
except ImportError:
    torch = None

HIDDEN, HEADS, FFN, LAYERS, BATCH, STEPS, STOP = 32, 4, 64, 4, 12, 4, 2

# (A, B) as (dp, tp, pp): dp2->tp2, tp2->pp2, pp2->pp4, tp2->dp3 (2 GPUs to 3),
# 3D->dp2, pp4->tp2 pp2
PAIRS = [((2, 1, 1), (1, 2, 1)), ((1, 2, 1), (1, 1, 2)), ((1, 1, 2), (1, 1, 4)),
         ((1, 2, 1), (3, 1, 1)), ((2, 2, 2), (2, 1, 1)), ((1, 1, 4), (1, 2, 2))]


class Block(nn.Module if torch else object):
    def __init__(self, group, gen):
        super().__init__()
        self.attn = rtp.ParallelSelfAttention(HIDDEN, HEADS, group, gen)
        self.mlp = rtp.ParallelMLP(HIDDEN, FFN, group, gen)

    def forward(self, x):
        x = x + self.attn(x)
        return x + self.mlp(x)


def batches():
    g = torch.Generator().manual_seed(5)
    return [(torch.randn(BATCH, 6, HIDDEN, generator=g), torch.randn(BATCH, 6, HIDDEN, generator=g))
            for _ in range(STEPS)]


def train(dp, replica, tp_group, dp_group, pp, stage, pipe, steps, load=None, save=None, tp_rank=0):
    gen = torch.Generator().manual_seed(7)
    model = rpp.Pipeline([Block(tp_group, gen) for _ in range(LAYERS)], pp, stage, pipe)
    lo = rpp.split_layers(LAYERS, pp)[stage][0]
    if load is not None:  # the full model's state: take this stage's layers, renumbered
        full = torch.load(load)
        mine = {}
        for k, v in full.items():
            i, rest = k.split(".", 1)
            if lo <= int(i) < lo + len(model.module):
                mine["%d.%s" % (int(i) - lo, rest)] = v
        rtp.load_full(model.module, mine)
    opt = torch.optim.SGD(model.parameters(), lr=1e-4)
    per = BATCH // dp
    losses = []
    for step, (x, y) in enumerate(batches()):
        if step not in steps:
            continue
        xs = [x[i:i + 2] for i in range(replica * per, (replica + 1) * per, 2)]
        ys = [y[i:i + 2] for i in range(replica * per, (replica + 1) * per, 2)]
        opt.zero_grad()
        tot = model.step(xs, ys, lambda o, t: ((o - t) ** 2).sum())
        if dp_group is not None:
            for p in model.parameters():
                dist.all_reduce(p.grad, group=dp_group)
            if tot is not None:
                dist.all_reduce(tot, group=dp_group)
        opt.step()
        if tot is not None:
            losses.append(tot.item())
    if save is not None:
        part = rtp.full_state(model.module)  # collective over the tp group
        if replica == 0 and tp_rank == 0:
            torch.save({"%d.%s" % (lo + int(k.split(".", 1)[0]), k.split(".", 1)[1]): v
                        for k, v in part.items()}, "%s.stage%d" % (save, stage))
    return losses


def worker(rank, plan, init, steps, load, save, out):
    dp, tp, pp = plan
    dist.init_process_group("gloo", init_method=init, rank=rank, world_size=dp * tp * pp)
    torch.set_num_threads(1)
    g = Groups3D(rank, dp, tp, pp)
    losses = train(dp, g.replica, g.tp_group, g.dp_group, pp, g.stage, g.pipe, steps, load, save, g.tp_rank)
    if rank == dp * tp * pp - 1:
        torch.save(losses, out)
    dist.destroy_process_group()


def launch(d, tag, plan, steps, load, save):
    out = os.path.join(d, tag + ".losses")
    mp.spawn(worker, args=(plan, "file://" + os.path.join(d, tag + ".rdzv"), steps, load, save, out),
             nprocs=plan[0] * plan[1] * plan[2])
    return torch.load(out)


def name(p):
    return ",".join("%s%d" % (k, v) for k, v in zip(("dp", "tp", "pp"), p) if v > 1) or "dp1"


def main():
    if torch is None:
        print("SKIP: python3-torch not installed (scripts/install-deps.sh)")
        return 77
    t0 = time.time()
    want = train(1, 0, None, None, 1, 0, [0], range(STEPS))
    if not all(torch.isfinite(torch.tensor(want))) or abs(want[-1] - want[0]) < 1e-3:
        print("FAIL: reference losses do not move or are not finite: %s" % want)
        return 1
    bad = 0
    for n, (a, b) in enumerate(PAIRS):
        with tempfile.TemporaryDirectory() as d:
            ck = os.path.join(d, "ckpt")
            first = launch(d, "a", a, range(STOP), None, ck)
            full = {}
            for s in range(a[2]):
                full.update(torch.load("%s.stage%d" % (ck, s)))
            torch.save(full, ck)
            second = launch(d, "b", b, range(STOP, STEPS), ck, None)
        got = first + second
        worst = pu.worst_rel(got, want)
        print("%-12s -> %-12s largest relative loss difference %.3g over %d steps"
              % (name(a), name(b), worst, STEPS))
        if len(got) != STEPS or not worst <= 1e-4:
            print("FAIL: %s -> %s does not follow the never-reconfigured run: %s vs %s"
                  % (name(a), name(b), got, want))
            bad = 1
    print("%d pairs in %.1f s" % (len(PAIRS), time.time() - t0))
    return bad


if __name__ == "__main__":
    pu.reexec_with_debian_python(torch is not None)
    sys.exit(main())
