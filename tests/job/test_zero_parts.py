"""python/rubick_job/zero.py's building blocks (issue 22): shard bounds cover a buffer
exactly once, and the emulated reduce-scatter gives each of 3 gloo ranks its shard of
the sum, and ShardedOptimizer (ZeRO-2/3) on 3 ranks matches plain Adam, ZeRO-3 holding
no full parameters between steps. About 10 s on one core."""
import os
import sys
import tempfile
import unittest

DEBIAN_PY = "/usr/bin/python3"

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
try:
    import torch
    import torch.distributed as dist
    import torch.multiprocessing as mp
    from rubick_job import zero
except ImportError:
    torch = None


def _worker(rank, world, init, n, q):
    dist.init_process_group("gloo", init_method=init, rank=rank, world_size=world)
    flat = torch.arange(n, dtype=torch.float64) * (rank + 1)
    shard = zero.reduce_scatter_flat(flat)
    q.put((rank, shard.tolist()))
    dist.destroy_process_group()


def _model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Linear(4, 2))


def _grads(model, rank, step):
    # rank r's share of a 3-rank batch: the mean over ranks is what DDP would give
    g = torch.Generator().manual_seed(100 * step + rank)
    x = torch.randn(5, 3, generator=g)
    model(x).square().sum().backward()


def _sharded_worker(rank, world, init, stage, q):
    dist.init_process_group("gloo", init_method=init, rank=rank, world_size=world)
    model = _model()
    opt = zero.ShardedOptimizer(list(model.parameters()), torch.optim.Adam(model.parameters(), lr=0.1), stage)
    opt.free_params()
    sizes = []
    for step in range(3):
        opt.zero_grad()
        opt.gather_params()
        _grads(model, rank, step)
        opt.step()
        sizes.append(sum(p.numel() for p in model.parameters()))
    opt.consolidate_state_dict()
    full = opt.state_dict()
    # plain lists: tensors through a queue are shared memory the exiting worker takes away
    state = {i: {k: (v.tolist() if torch.is_tensor(v) else v) for k, v in st.items()}
             for i, st in full["state"].items()}
    q.put((rank, sizes, [p.detach().tolist() for p in model.parameters()], state))
    dist.destroy_process_group()


class Zero(unittest.TestCase):
    def test_bounds_cover_once(self):
        for n in (0, 1, 5, 6, 7, 100):
            for w in (1, 2, 3, 4):
                spans = [zero.shard_bounds(n, w, r) for r in range(w)]
                self.assertEqual(spans[0][0], 0)
                self.assertEqual(spans[-1][1], n)
                for a, b in zip(spans, spans[1:]):
                    self.assertEqual(a[1], b[0])
                sizes = [hi - lo for lo, hi in spans]
                self.assertLessEqual(max(sizes) - min(sizes), 1)

    def test_bad_bounds(self):
        with self.assertRaisesRegex(ValueError, "rank=3"):
            zero.shard_bounds(10, 3, 3)

    def test_reduce_scatter(self):
        world, n = 3, 7
        with tempfile.TemporaryDirectory() as d:
            ctx = mp.get_context("spawn")
            q = ctx.Queue()
            ps = [ctx.Process(target=_worker, args=(r, world, "file://" + d + "/store", n, q))
                  for r in range(world)]
            for p in ps:
                p.start()
            got = dict(q.get(timeout=60) for _ in ps)
            for p in ps:
                p.join(60)
                self.assertEqual(p.exitcode, 0)
        total = [float(i * 6) for i in range(n)]  # ranks scale by 1, 2, 3
        for r in range(world):
            lo, hi = zero.shard_bounds(n, world, r)
            self.assertEqual(got[r], total[lo:hi])

    def test_sharded_optimizer_is_adam(self):
        """ZeRO-2 and 3 over 3 ranks give plain Adam's parameters and full state on the
        rank-mean gradient; ZeRO-3 holds no full parameters between steps."""
        ref = _model()
        ropt = torch.optim.Adam(ref.parameters(), lr=0.1)
        for step in range(3):
            ropt.zero_grad()
            for r in range(3):
                _grads(ref, r, step)
            for p in ref.parameters():
                p.grad /= 3
            ropt.step()
        want = ropt.state_dict()
        for stage in (2, 3):
            with tempfile.TemporaryDirectory() as d:
                ctx = mp.get_context("spawn")
                q = ctx.Queue()
                ps = [ctx.Process(target=_sharded_worker, args=(r, 3, "file://" + d + "/store", stage, q))
                      for r in range(3)]
                for p in ps:
                    p.start()
                got = dict((r, rest) for r, *rest in (q.get(timeout=60) for _ in ps))
                for p in ps:
                    p.join(60)
                    self.assertEqual(p.exitcode, 0)
            n = sum(p.numel() for p in ref.parameters())
            for r in range(3):
                sizes, params, full = got[r]
                self.assertEqual(sizes, [0] * 3 if stage == 3 else [n] * 3)
                for a, b in zip(params, ref.parameters()):
                    torch.testing.assert_close(torch.tensor(a), b.detach(), rtol=1e-5, atol=1e-6)
                for i, st in want["state"].items():
                    for k in ("exp_avg", "exp_avg_sq"):
                        torch.testing.assert_close(torch.tensor(full[i][k]), st[k], rtol=1e-5, atol=1e-7)
                    self.assertEqual(float(full[i]["step"]), float(st["step"]))


if __name__ == "__main__":
    # meson's python3 may lack torch: the job side runs on Debian's (python/README.md)
    if torch is None and os.path.realpath(sys.executable) != os.path.realpath(DEBIAN_PY) \
            and os.path.exists(DEBIAN_PY):
        os.execv(DEBIAN_PY, [DEBIAN_PY] + sys.argv)
    if torch is None:
        print("skip: no torch")
        sys.exit(77)
    unittest.main()
