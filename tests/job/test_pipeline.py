"""GPipe pipeline (python/rubick_job/pipeline.py, issue 22): a 4-layer model (hidden 32)
trained 4 SGD steps of 4 micro-batches at pp=2 and pp=4 over gloo follows pp=1 step for
step (relative loss difference <= 1e-4; the largest is printed), and pp not dividing
the layers is refused naming pp. 2 + 4 processes, ~5 s on CPU."""
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

try:
    import torch
    import torch.distributed as dist
    import torch.multiprocessing as mp
    import torch.nn as nn
    from rubick_job import pipeline as rpp
except ImportError:
    torch = None

HIDDEN, LAYERS, MICRO, STEPS = 32, 4, 4, 4


def layers():
    torch.manual_seed(11)
    return [nn.Sequential(nn.Linear(HIDDEN, HIDDEN), nn.Tanh()) for _ in range(LAYERS)]


def batches():
    g = torch.Generator().manual_seed(4)
    return [([torch.randn(2, HIDDEN, generator=g) for _ in range(MICRO)],
             [torch.randn(2, HIDDEN, generator=g) for _ in range(MICRO)]) for _ in range(STEPS)]


def train(pp, stage, ranks):
    pipe = rpp.Pipeline(layers(), pp, stage, ranks)
    opt = torch.optim.SGD(pipe.parameters(), lr=0.2)
    losses = []
    loss_fn = lambda out, y: ((out - y) ** 2).sum()
    for xs, ys in batches():
        opt.zero_grad()
        tot = pipe.step(xs, ys, loss_fn)
        opt.step()
        if tot is not None:
            losses.append(tot.item())
    return losses


def worker(rank, pp, init, out):
    dist.init_process_group("gloo", init_method=init, rank=rank, world_size=pp)
    losses = train(pp, rank, list(range(pp)))
    if rank == pp - 1:
        torch.save(losses, out)
    dist.destroy_process_group()


def main():
    if torch is None:
        print("SKIP: python3-torch not installed (scripts/install-deps.sh)")
        return 77
    want = train(1, 0, [0])
    print("pp1 losses", ["%.6f" % v for v in want])
    bad = 0
    for pp in (2, 4):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "losses.pt")
            mp.spawn(worker, args=(pp, "file://" + os.path.join(d, "rdzv"), out), nprocs=pp)
            got = torch.load(out)
        worst = max(abs(a - b) / abs(b) for a, b in zip(got, want))
        print("pp%d losses" % pp, ["%.6f" % v for v in got])
        print("pp1 vs pp%d: largest relative loss difference %.3g over %d steps" % (pp, worst, STEPS))
        if len(got) != STEPS or worst > 1e-4:
            print("FAIL: pp=%d does not follow pp=1" % pp)
            bad = 1
    if abs(want[-1] - want[0]) < 1e-3:
        print("FAIL: loss did not change over %d steps" % STEPS)
        bad = 1
    try:
        rpp.split_layers(LAYERS, 3)
        print("FAIL: pp=3 over 4 layers accepted")
        bad = 1
    except ValueError as e:
        if "pp=3" not in str(e):
            print("FAIL: refusal does not name pp: %s" % e)
            bad = 1
    return bad


if __name__ == "__main__":
    # meson's python3 may be another interpreter than Debian's, which has python3-torch
    if torch is None and os.path.realpath(sys.executable) != os.path.realpath("/usr/bin/python3") \
            and os.path.exists("/usr/bin/python3"):
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    sys.exit(main())
