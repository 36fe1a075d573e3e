"""ZeRO-3 under tp and pp (issue 22), library level: dp x tp x pp = 2 x 2 x 2 over 8 gloo
processes (dist.Groups3D), a 4-block model (LayerNorm, tp attention and MLP; hidden 32,
4 heads) in the GPipe pipeline, AdamW through zero3.Zero3Optimizer over each (stage,
tp_rank)'s dp group; the last block recomputes in backward (gc), so ZeRO-3's gather
inside a recompute runs too. Checked:
- shapes: each rank's shard of a parameter is its shard_bounds slice of the tp slice,
  and the gathered parameter has the tp slice's shape;
- memory: while a layer runs its forward, the rank holds the full parameters of that
  layer only (the others' storage is freed); between steps it holds none, only shards;
- numbers: 4 steps follow plain AdamW on one process (relative loss difference <= 1e-4),
  and after them every rank's consolidated optimizer state equals that process's.
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
    from torch.utils.checkpoint import checkpoint
    from rubick_job import tp as rtp
    from rubick_job import pipeline as rpp
    from rubick_job import parallel
    from rubick_job.dist import Groups3D
    from rubick_job.zero import shard_bounds
    from rubick_job.zero3 import Zero3Optimizer
except ImportError:
    torch = None

HIDDEN, HEADS, FFN, LAYERS, BATCH, STEPS = 32, 4, 64, 4, 4, 4


class Block(nn.Module if torch else object):
    def __init__(self, group, gen, gc):
        super().__init__()
        self.ln = nn.LayerNorm(HIDDEN)
        self.attn = rtp.ParallelSelfAttention(HIDDEN, HEADS, group, gen)
        self.mlp = rtp.ParallelMLP(HIDDEN, FFN, group, gen)
        self.gc = gc

    def body(self, x):
        x = x + self.attn(self.ln(x))
        return x + self.mlp(x)

    def forward(self, x):
        return checkpoint(self.body, x, use_reentrant=False) if self.gc else self.body(x)


def batches():
    g = torch.Generator().manual_seed(5)
    return [(torch.randn(BATCH, 6, HIDDEN, generator=g), torch.randn(BATCH, 6, HIDDEN, generator=g))
            for _ in range(STEPS)]


def build(tp_group, pp, stage, pipe):
    torch.manual_seed(3)  # LayerNorm: the same on every rank
    gen = torch.Generator().manual_seed(7)  # tp layers: the same full weights whatever the plan
    return rpp.Pipeline([Block(tp_group, gen, gc=i == LAYERS - 1) for i in range(LAYERS)], pp, stage, pipe)


def full_state(model, opt, tp_group):
    """Full weights and AdamW state of this stage, tp slices gathered."""
    return rtp.full_state(model.module), parallel.full_opt_state(model.module, opt, tp_group)


def reference():
    model = build(None, 1, 0, [0])
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    losses = []
    for x, y in batches():
        opt.zero_grad()
        xs, ys = [x[i:i + 1] for i in range(BATCH)], [y[i:i + 1] for i in range(BATCH)]
        losses.append(model.step(xs, ys, lambda o, t: ((o - t) ** 2).sum()).item())
        opt.step()
    return losses, model, opt


def worker(rank, init, out):
    dp, tp, pp = 2, 2, 2
    dist.init_process_group("gloo", init_method=init, rank=rank, world_size=dp * tp * pp)
    torch.set_num_threads(1)
    g = Groups3D(rank, dp, tp, pp)
    model = build(g.tp_group, pp, g.stage, g.pipe)
    params = list(model.parameters())
    slices = [p.detach().clone() for p in params]
    opt = Zero3Optimizer(model.module, params, params, torch.optim.AdamW(params, lr=1e-2), g.dp_group)
    errors = []
    for j, i in enumerate(opt.mine):  # shapes of the shards
        lo, hi = shard_bounds(slices[i].numel(), dp, g.replica)
        if not torch.equal(opt.shards[j].detach(), slices[i].reshape(-1)[lo:hi]):
            errors.append("rank %d: shard of parameter %d is not elements %d..%d of its tp slice" % (rank, i, lo, hi))
    opt.free_params()
    # probed in forward only: a recompute (the gc block) runs inside backward
    layers = [m for b in model.module if not b.gc for m in b.modules() if list(m.parameters(recurse=False))]
    seen = []
    where = {id(p): i for i, p in enumerate(params)}

    def probe(m, inputs):  # runs after ZeRO-3's pre-hook: this layer gathered, no other
        own = sum(p.numel() for p in m.parameters(recurse=False))
        if opt.held_numel() != own and torch.is_grad_enabled() and not seen:
            seen.append("rank %d: %d elements of full parameters held while a layer of %d runs"
                        % (rank, opt.held_numel(), own))
        for p in m.parameters(recurse=False):
            s = slices[where[id(p)]]
            if p.shape != s.shape:
                seen.append("rank %d: gathered %s, the tp slice is %s" % (rank, tuple(p.shape), tuple(s.shape)))
    for m in layers:
        m.register_forward_pre_hook(probe)
    per = BATCH // dp
    losses = []
    for x, y in batches():
        opt.zero_grad()
        opt.gather_params()
        rows = range(g.replica * per, (g.replica + 1) * per)
        tot = model.step([x[i:i + 1] for i in rows], [y[i:i + 1] for i in rows],
                         lambda o, t: ((o - t) ** 2).sum() * dp)  # DDP-like: opt averages over dp
        opt.step()
        if opt.held_numel():
            errors.append("rank %d: %d elements of full parameters held between steps" % (rank, opt.held_numel()))
        tot = torch.zeros(1) if tot is None or g.tp_rank else tot.reshape(1) / dp
        dist.all_reduce(tot)
        losses.append(tot.item())
    errors += seen[:2]
    opt.consolidate_state_dict()
    model_sd, opt_sd = full_state(model, opt, g.tp_group)
    torch.save({"losses": losses, "errors": errors, "model": model_sd, "opt": opt_sd, "stage": g.stage},
               "%s.%d" % (out, rank))
    dist.destroy_process_group()


def main():
    if torch is None:
        print("SKIP: python3-torch not installed (scripts/install-deps.sh)")
        return 77
    want, ref_model, ref_opt = reference()
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "r")
        mp.spawn(worker, args=("file://" + os.path.join(d, "rdzv"), out), nprocs=8)
        res = [torch.load("%s.%d" % (out, r)) for r in range(8)]
    bad = [e for r in res for e in r["errors"]]
    got = res[0]["losses"]
    worst = max(abs(a - b) / abs(b) for a, b in zip(got, want))
    print("1 process, AdamW  ", ["%.6f" % v for v in want])
    print("dp2 tp2 pp2 ZeRO-3", ["%.6f" % v for v in got])
    print("largest relative loss difference %.3g over %d steps" % (worst, STEPS))
    if len(got) != STEPS or not worst <= 1e-4:
        bad.append("dp2 tp2 pp2 ZeRO-3 does not follow one process")
    if abs(want[-1] - want[0]) < 1e-3:
        bad.append("loss did not change over %d steps" % STEPS)
    # the optimizer state, gathered from the shards, is plain AdamW's (stage 1's rank 7)
    ref_state = ref_opt.state_dict()["state"]
    names = [n for n, _ in ref_model.module.named_parameters()]
    lo, _ = rpp.split_layers(LAYERS, 2)[1]
    n_stage0 = sum(1 for n in names if int(n.split(".")[0]) < lo)
    for r in (0, 7):
        part = res[r]
        for i, st in part["opt"]["state"].items():
            ri = i + (n_stage0 if part["stage"] else 0)
            for k in ("exp_avg", "exp_avg_sq"):
                diff = (st[k] - ref_state[ri][k]).abs().max().item()
                scale = ref_state[ri][k].abs().max().item() or 1.0
                if diff > 1e-4 * scale + 1e-6:  # + 1e-6: a key bias has ~0 gradient (softmax)
                    bad.append("rank %d: %s of %s differs from plain AdamW by %.3g" % (r, k, names[ri], diff))
    for e in bad[:8]:
        print("FAIL:", e)
    return 1 if bad else 0


if __name__ == "__main__":
    # meson's python3 may be another interpreter than Debian's, which has python3-torch
    if torch is None and os.path.realpath(sys.executable) != os.path.realpath("/usr/bin/python3") \
            and os.path.exists("/usr/bin/python3"):
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    sys.exit(main())
