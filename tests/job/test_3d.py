"""3D parallelism (issue 22): dp x tp x pp = 2 x 2 x 2 over 8 gloo processes, laid out
by dist.Groups3D (rank = (stage*dp + replica)*tp + tp_rank), a 4-block transformer-ish
model (hidden 32, 4 heads) built from rubick_job.tp layers and run by the GPipe
rubick_job.pipeline, gradients summed over the dp group: 4 SGD steps follow the same
model on one process (relative loss difference <= 1e-4; the largest is printed).
~10 s on 2 cores."""
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

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

HIDDEN, HEADS, FFN, LAYERS, BATCH, STEPS = 32, 4, 64, 4, 4, 4


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


def train(dp, replica, tp_group, dp_group, pp, stage, pipe):
    gen = torch.Generator().manual_seed(7)  # same full weights whatever the plan
    model = rpp.Pipeline([Block(tp_group, gen) for _ in range(LAYERS)], pp, stage, pipe)
    opt = torch.optim.SGD(model.parameters(), lr=1e-4)
    per = BATCH // dp
    losses = []
    for x, y in batches():
        xs = [x[i:i + 1] for i in range(replica * per, (replica + 1) * per)]  # 1-sample micro-batches
        ys = [y[i:i + 1] for i in range(replica * per, (replica + 1) * per)]
        opt.zero_grad()
        tot = model.step(xs, ys, lambda o, t: ((o - t) ** 2).sum())
        if dp_group is not None:
            for p in model.parameters():
                dist.all_reduce(p.grad, group=dp_group)  # summed loss: sum the replicas' grads
            if tot is not None:
                dist.all_reduce(tot, group=dp_group)
        opt.step()
        if tot is not None:
            losses.append(tot.item())
    return losses


def worker(rank, plan, init, out):
    dp, tp, pp = plan
    dist.init_process_group("gloo", init_method=init, rank=rank, world_size=dp * tp * pp)
    torch.set_num_threads(1)
    g = Groups3D(rank, dp, tp, pp)
    losses = train(dp, g.replica, g.tp_group, g.dp_group, pp, g.stage, g.pipe)
    if rank == dp * tp * pp - 1:
        torch.save(losses, out)
    dist.destroy_process_group()


def main():
    if torch is None:
        print("SKIP: python3-torch not installed (scripts/install-deps.sh)")
        return 77
    want = train(1, 0, None, None, 1, 0, [0])
    plan = (2, 2, 2)
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "losses.pt")
        mp.spawn(worker, args=(plan, "file://" + os.path.join(d, "rdzv"), out), nprocs=8)
        got = torch.load(out)
    worst = max(abs(a - b) / abs(b) for a, b in zip(got, want))
    print("1 process losses ", ["%.6f" % v for v in want])
    print("dp2 tp2 pp2 losses", ["%.6f" % v for v in got])
    print("1 process vs dp2 tp2 pp2: largest relative loss difference %.3g over %d steps" % (worst, STEPS))
    if not all(torch.isfinite(torch.tensor(want + got))):
        print("FAIL: a loss is not finite")
        return 1
    if len(got) != STEPS or worst > 1e-4:
        print("FAIL: dp2 tp2 pp2 does not follow one process")
        return 1
    if abs(want[-1] - want[0]) < 1e-3:
        print("FAIL: loss did not change over %d steps" % STEPS)
        return 1
    return 0


if __name__ == "__main__":
    # meson's python3 may be another interpreter than Debian's, which has python3-torch
    if torch is None and os.path.realpath(sys.executable) != os.path.realpath("/usr/bin/python3") \
            and os.path.exists("/usr/bin/python3"):
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    sys.exit(main())
