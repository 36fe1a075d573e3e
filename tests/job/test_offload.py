"""python/rubick_job/zero3d.py in one process (issue 22): owners() splits parameters
evenly and alike on every call; Offloaded (offload=1) steps an fp32 master copy apart
from the parameters and gives plain AdamW's numbers on fp32 parameters, leaves bf16
parameters equal to their fp32 master rounded, and loads a plain optimizer's state. The CUDA
case (parameters on the GPU, master and state on the CPU) runs only where a GPU exists
and is skipped with a message otherwise. Under a second on one core."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
try:
    import torch
    from rubick_job import zero3d
except ImportError:
    torch = None


def _pair(dtype=torch.float32 if torch else None, device="cpu"):
    torch.manual_seed(0)
    a = torch.nn.Linear(6, 3).to(device, dtype)
    b = torch.nn.Linear(6, 3).to(device, dtype)
    b.load_state_dict(a.state_dict())
    return a, b


def _steps(model, opt, n=4, device="cpu"):
    g = torch.Generator().manual_seed(1)
    for _ in range(n):
        x = torch.randn(5, 6, generator=g).to(device, next(model.parameters()).dtype)
        opt.zero_grad()
        model(x).pow(2).sum().backward()
        opt.step()


@unittest.skipIf(torch is None, "python3-torch not installed")
class OffloadTest(unittest.TestCase):
    def test_owners_balanced_and_deterministic(self):
        sizes = [100, 1, 50, 50, 3, 0]
        own = zero3d.owners(sizes, 2)
        self.assertEqual(own, zero3d.owners(sizes, 2))
        load = [sum(s for s, o in zip(sizes, own) if o == r) for r in range(2)]
        self.assertEqual(sorted(load), [101, 103])
        self.assertEqual(zero3d.owners(sizes, 1), [0] * len(sizes))

    def test_fp32_matches_plain_adamw(self):
        a, b = _pair()
        plain = torch.optim.AdamW(a.parameters(), lr=1e-2, weight_decay=0.01)
        off = zero3d.Offloaded(list(b.parameters()),
                               torch.optim.AdamW(b.parameters(), lr=1e-2, weight_decay=0.01))
        _steps(a, plain)
        _steps(b, off)
        for p, q, m in zip(a.parameters(), b.parameters(), off.masters):
            self.assertTrue(torch.equal(p, q))
            self.assertNotEqual(q.data_ptr(), m.data_ptr())  # a copy, not the parameter
        self.assertEqual(len(off.state_dict()["state"]), 2)
        self.assertFalse(any(plain.state[p] == {} for p in a.parameters()))

    def test_bf16_parameters_keep_fp32_master(self):
        _, b = _pair(torch.bfloat16)
        off = zero3d.Offloaded(list(b.parameters()), torch.optim.SGD(b.parameters(), lr=1e-4))
        _steps(b, off, n=3)
        for q, m in zip(b.parameters(), off.masters):
            self.assertEqual((q.dtype, m.dtype), (torch.bfloat16, torch.float32))
            self.assertTrue(torch.equal(q, m.to(torch.bfloat16)))

    def test_loads_plain_state(self):
        a, b = _pair()
        plain = torch.optim.AdamW(a.parameters(), lr=1e-2)
        _steps(a, plain, n=2)
        b.load_state_dict(a.state_dict())
        off = zero3d.Offloaded(list(b.parameters()), torch.optim.AdamW(b.parameters(), lr=1e-2))
        off.load_state_dict(plain.state_dict())
        _steps(a, plain, n=2)
        _steps(b, off, n=2)
        for p, q in zip(a.parameters(), b.parameters()):
            self.assertTrue(torch.allclose(p, q, rtol=0, atol=1e-6))

    def test_cuda_state_on_host(self):
        if not torch.cuda.is_available():
            self.skipTest("no CUDA device: offload's GPU path (parameters on the GPU, state on the CPU) not run")
        a, b = _pair(device="cuda")
        plain = torch.optim.AdamW(a.parameters(), lr=1e-2)
        off = zero3d.Offloaded(list(b.parameters()), torch.optim.AdamW(b.parameters(), lr=1e-2))
        _steps(a, plain, device="cuda")
        _steps(b, off, device="cuda")
        for p, q in zip(a.parameters(), b.parameters()):
            self.assertEqual(q.device.type, "cuda")
            self.assertTrue(torch.allclose(p, q, rtol=1e-5, atol=1e-6))
        for st in off.state_dict()["state"].values():
            self.assertTrue(all(v.device.type == "cpu" for v in st.values() if torch.is_tensor(v)))


DEBIAN_PY = "/usr/bin/python3"

if __name__ == "__main__":
    if torch is None and os.path.realpath(sys.executable) != os.path.realpath(DEBIAN_PY) \
            and os.path.exists(DEBIAN_PY):
        os.execv(DEBIAN_PY, [DEBIAN_PY] + sys.argv)  # meson's python3 may lack torch
    if torch is None:
        print("SKIP: python3-torch not installed (scripts/install-deps.sh)")
        sys.exit(77)
    unittest.main()
