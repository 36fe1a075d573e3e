"""python/rubick_job/zero.py's building blocks (issue 22): shard bounds cover a buffer
exactly once, and the emulated reduce-scatter gives each of 3 gloo ranks its shard of
the sum. About 3 s on one core."""
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


if __name__ == "__main__":
    # meson's python3 may lack torch: the job side runs on Debian's (python/README.md)
    if torch is None and os.path.realpath(sys.executable) != os.path.realpath(DEBIAN_PY) \
            and os.path.exists(DEBIAN_PY):
        os.execv(DEBIAN_PY, [DEBIAN_PY] + sys.argv)
    if torch is None:
        print("skip: no torch")
        sys.exit(77)
    unittest.main()
