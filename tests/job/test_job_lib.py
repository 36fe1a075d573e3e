"""The pure parts of python/rubick_job (issue 22): plan parsing and its errors, which name
the input; the plans a job refuses, naming the dimension; rubickd's plan precedence; the
global-batch check; a sample order that does not depend on the plan; publishing, fencing
and merging checkpoints. No process group is started."""
import argparse
import contextlib
import io
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

DEBIAN_PY = "/usr/bin/python3"
try:
    import torch
    import rubick_job as rj
except ImportError:
    torch = None


class Plans(unittest.TestCase):
    def test_defaults_and_values(self):
        p = rj.parse_plan("dp=2,mb=4,ga=3,gc=1,zero=1\n", "f")
        self.assertEqual((p.dp, p.mb, p.ga, p.gc, p.zero, p.tp, p.pp, p.offload), (2, 4, 3, 1, 1, 1, 1, 0))
        self.assertEqual(rj.parse_plan("", "f").world, 1)
        self.assertEqual(rj.parse_plan("dp=2,,pp=2", "f").world, 4)

    def errs(self, text, where="/run/plan"):
        with self.assertRaises(rj.PlanError) as cm:
            rj.parse_plan(text, where)
        return str(cm.exception)

    def test_errors_name_the_input_and_item(self):
        self.assertEqual(self.errs("dp=2,dq=1"),
                         "/run/plan: plan item 'dq=1': expected one of dp,tp,pp,mb,ga,gc,zero,offload as KEY=N")
        self.assertIn("/run/plan: plan item 'dp': expected", self.errs("dp"))
        self.assertEqual(self.errs("mb=x", "RUBICK_PLAN"), "RUBICK_PLAN: plan item 'mb=x': not an integer")
        self.assertEqual(self.errs("dp=0", "--plan"), "--plan: plan item 'dp=0': out of range")
        self.assertEqual(self.errs("gc=-1"), "/run/plan: plan item 'gc=-1': out of range")
        self.assertIsInstance(rj.PlanError("x"), ValueError)

    def refused(self, text, max_pp=1):
        with self.assertRaises(rj.PlanError) as cm:
            rj.check_supported(rj.parse_plan(text, "P"), "P", max_pp)
        return str(cm.exception)

    def test_unsupported_dimensions_are_refused_by_name(self):
        self.assertIn("P: tp=2 pp=1:", self.refused("tp=2"))
        self.assertIn("tp=1 pp=3: this job does data and 2-stage pipeline parallelism only", self.refused("pp=3", 2))
        self.assertIn("pp=2: this job does data parallelism only", self.refused("pp=2"))
        rj.check_supported(rj.parse_plan("pp=2,zero=1", "P"), "P", 2)  # ZeRO-1/2 run with pp
        rj.check_supported(rj.parse_plan("dp=2,pp=2,zero=2", "P"), "P", 2)
        self.assertIn("zero=4: ZeRO has stages 1 to 3", self.refused("zero=4"))
        rj.check_supported(rj.parse_plan("dp=2,pp=2,zero=3", "P"), "P", 2)  # ZeRO-3 with pp
        rj.check_supported(rj.parse_plan("dp=2,offload=1", "P"), "P")
        for z in (1, 2, 3):  # offload with every ZeRO stage, also under tp and pp
            rj.check_supported(rj.parse_plan("dp=2,tp=2,pp=2,zero=%d,offload=1" % z, "P"), "P", 2, 2)
        self.assertIn("offload=2: offload is 0 or 1", self.refused("offload=2"))
        rj.check_supported(rj.parse_plan("dp=4,ga=2,gc=1,zero=1", "P"), "P")
        rj.check_supported(rj.parse_plan("dp=2,zero=2", "P"), "P")
        rj.check_supported(rj.parse_plan("dp=4,ga=2,gc=1,zero=3", "P"), "P")
        rj.check_supported(rj.parse_plan("dp=2,pp=2", "P"), "P", 2)
        # tp and pp up to what the script declares (examples/train.py: max_tp=4, max_pp=8)
        rj.check_supported(rj.parse_plan("dp=2,tp=2,pp=4", "P"), "P", 4, 2)
        with self.assertRaises(rj.PlanError) as cm:
            rj.check_supported(rj.parse_plan("tp=4,pp=2", "P"), "P", 4, 2)
        self.assertIn("P: tp=4 pp=2: this job does data parallelism, 2-way tensor parallelism and "
                      "4-stage pipeline parallelism only (tp<=2, pp<=4)", str(cm.exception))
        rj.check_supported(rj.parse_plan("dp=2,tp=2,pp=2,zero=1", "P"), "P", 2, 2)
        rj.check_supported(rj.parse_plan("dp=2,tp=2,zero=3", "P"), "P", 1, 2)
        # every refusal is a PlanRefused (exit 78), a parse error a plain PlanError (exit 1)
        with self.assertRaises(rj.PlanRefused) as cm:
            rj.check_supported(rj.parse_plan("tp=2", "P"), "P")
        self.assertEqual(cm.exception.exit_code, 78)
        with self.assertRaises(rj.PlanError) as cm:
            rj.parse_plan("dp=x", "P")
        self.assertNotIsInstance(cm.exception, rj.PlanRefused)
        self.assertEqual(cm.exception.exit_code, 1)

    def test_precedence(self):
        with tempfile.TemporaryDirectory() as d:
            f = os.path.join(d, "plan")
            with open(f, "w") as fh:
                fh.write("dp=4\n")
            self.assertEqual(rj.read_plan({"RUBICK_PLAN_FILE": f, "RUBICK_PLAN": "dp=2"}, "dp=3"), ("dp=4\n", f))
            gone = os.path.join(d, "none")
            self.assertEqual(rj.read_plan({"RUBICK_PLAN_FILE": gone, "RUBICK_PLAN": "dp=2"}, "dp=3"),
                             ("dp=2", "RUBICK_PLAN"))
            self.assertEqual(rj.read_plan({}, "dp=3"), ("dp=3", "--plan"))
            self.assertEqual(rj.read_plan({}, None), ("dp=1", "--plan"))

    def test_global_batch(self):
        p = rj.parse_plan("dp=2,mb=4,ga=2", "P")
        self.assertEqual(rj.global_batch(p, 0), 16)
        self.assertEqual(rj.global_batch(p, 16), 16)
        with self.assertRaises(rj.PlanError) as cm:
            rj.global_batch(p, 8)
        self.assertEqual(str(cm.exception), "plan mb=4 ga=2 dp=2 does not make the global batch 8")

    def test_job_exits_naming_a_bad_plan(self):
        """A refused plan exits 78 (EX_CONFIG), a plan that does not add up exits 1; both
        print a message naming the input on stderr."""
        with tempfile.TemporaryDirectory() as d:
            for env, code, msg in (({"RUBICK_PLAN": "dp=2,tp=2"}, 78, "RUBICK_PLAN: tp=2 pp=1"),
                                   ({"RUBICK_PLAN": "dp=2,zero=5"}, 78, "RUBICK_PLAN: zero=5: ZeRO has stages"),
                                   ({"RUBICK_PLAN": "dp=2,mb=2", "RUBICK_GLOBAL_BATCH": "8"}, 1,
                                    "does not make the global batch 8"),
                                   ({"RUBICK_PLAN": "dp=2,tq=2"}, 1, "RUBICK_PLAN: plan item 'tq=2'")):
                err = io.StringIO()
                with self.assertRaises(SystemExit) as cm, contextlib.redirect_stderr(err):
                    rj.Job.from_env(argparse.ArgumentParser(), argv=[], env=dict(env, RUBICK_CKPT_DIR=d))
                self.assertEqual(cm.exception.code, code, env)
                self.assertIn(msg, err.getvalue())


class Order(unittest.TestCase):
    def test_same_samples_whatever_the_plan(self):
        n, G = 96, 8
        for step in (0, 5, 11, 12, 30):  # 12 steps an epoch: crosses epochs
            idx = rj.batch_indices(step, G, n)
            self.assertEqual(len(idx), G)
            for dp, mb, ga in ((1, 8, 1), (2, 4, 1), (1, 2, 4), (4, 1, 2), (8, 1, 1)):
                got = torch.cat([i for r in range(dp) for i in rj.micro_batches(idx, r, mb, ga)])
                self.assertTrue(torch.equal(got, idx), (step, dp, mb, ga))
                self.assertTrue(all(len(i) == mb for r in range(dp) for i in rj.micro_batches(idx, r, mb, ga)))

    def test_an_epoch_visits_each_sample_once(self):
        seen = torch.cat([rj.batch_indices(s, 8, 96) for s in range(12)])
        self.assertEqual(sorted(seen.tolist()), list(range(96)))
        self.assertFalse(torch.equal(rj.batch_indices(0, 8, 96), rj.batch_indices(12, 8, 96)))

    def test_batch_larger_than_the_data(self):
        with self.assertRaises(ValueError):
            rj.batch_indices(0, 16, 8)


class Checkpoints(unittest.TestCase):
    def test_publish_latest_fence(self):
        with tempfile.TemporaryDirectory() as d:
            fence = os.path.join(d, "fence")
            self.assertIsNone(rj.latest(d))
            self.assertTrue(rj.publish(d, "2", fence, {"step": 4}))
            self.assertEqual(rj.latest(d), os.path.join(d, "run-2", "ckpt.pt"))
            with open(fence, "w") as f:
                f.write("3\n")
            self.assertTrue(rj.fenced(fence, "2") and not rj.fenced(fence, "3"))
            self.assertFalse(rj.publish(d, "2", fence, {"step": 8}))  # stale copy: not published
            self.assertEqual(torch.load(rj.latest(d))["step"], 4)
            self.assertTrue(rj.publish(d, "5", None, {"step": 9}))
            self.assertFalse(rj.publish(d, "4", None, {"step": 6}))  # latest names a newer run
            self.assertEqual(torch.load(rj.latest(d))["step"], 9)
            self.assertFalse(rj.fenced(None, "1") or rj.fenced(os.path.join(d, "none"), "1"))

    def test_merge_parts(self):
        parts = [{"model": {"a": 1, "b": 0, "buf": 7}, "opt": {"param_groups": ["g"], "state": {0: "sa"}}},
                 {"model": {"a": 0, "b": 2, "buf": 0}, "opt": {"param_groups": ["g"], "state": {1: "sb"}}}]
        model, opt = rj.merge_parts(["a", "b"], [0, 1], parts)
        self.assertEqual(model, {"a": 1, "b": 2, "buf": 7})
        self.assertEqual(opt, {"param_groups": ["g"], "state": {0: "sa", 1: "sb"}})


class ModelFits(unittest.TestCase):
    def test_tp_and_pp_must_divide_the_model(self):
        ok = rj.parse_plan("tp=2,pp=4", "f")
        rj.check_model_fits(ok, "f", layers=4, heads=4, hidden=32, ffn=64)
        rj.check_model_fits(rj.parse_plan("tp=3", "f"), "f")  # no sizes: nothing checked
        for text, kw, msg in (
                ("tp=3", {"heads": 4}, "/p: tp=3 does not divide the model's 4 attention heads"),
                ("tp=4", {"heads": 4, "hidden": 30}, "/p: tp=4 does not divide the model's 30 hidden size"),
                ("tp=4", {"ffn": 6}, "/p: tp=4 does not divide the model's 6 MLP width"),
                ("pp=3", {"layers": 4}, "/p: pp=3 does not divide the model's 4 layers"),
                ("tp=3", {"groups": 4}, "/p: tp=3 does not divide the model's 4 channel groups (GroupNorm)")):
            with self.assertRaises(rj.PlanRefused) as cm:  # exit 78
                rj.check_model_fits(rj.parse_plan(text, "f"), "/p", **kw)
            self.assertEqual(str(cm.exception), msg)


class Layout(unittest.TestCase):
    """The 3D rank layout rank = (stage*dp + replica)*tp + tp_rank (tp innermost)."""

    def test_coords_and_groups(self):
        from rubick_job.dist import coords, layout
        dp, tp, pp = 2, 2, 2
        self.assertEqual([coords(r, dp, tp, pp) for r in range(8)],
                         [(0, 0, 0), (0, 0, 1), (0, 1, 0), (0, 1, 1),
                          (1, 0, 0), (1, 0, 1), (1, 1, 0), (1, 1, 1)])
        tp_groups, dp_groups, pipes = layout(dp, tp, pp)
        self.assertEqual(tp_groups, [[0, 1], [2, 3], [4, 5], [6, 7]])
        self.assertEqual(dp_groups, [[0, 2], [1, 3], [4, 6], [5, 7]])
        self.assertEqual(pipes, [[0, 4], [1, 5], [2, 6], [3, 7]])
        # tp = 1 is the 2D layout stage*dp + replica the trainer uses today
        self.assertEqual([coords(r, 3, 1, 2)[:2] for r in range(6)], [divmod(r, 3) for r in range(6)])
        # every kind of group partitions the ranks
        for dp, tp, pp in ((1, 1, 1), (3, 2, 1), (1, 2, 4), (2, 4, 2)):
            for groups in layout(dp, tp, pp):
                self.assertEqual(sorted(r for g in groups for r in g), list(range(dp * tp * pp)))
        with self.assertRaises(rj.PlanError) as cm:
            coords(8, 2, 2, 2)
        self.assertIn("rank 8 outside dp*tp*pp=8", str(cm.exception))


if __name__ == "__main__":
    # meson's python3 may be another interpreter than Debian's, which has python3-torch
    if torch is None and os.path.realpath(sys.executable) != os.path.realpath(DEBIAN_PY) \
            and os.path.exists(DEBIAN_PY):
        os.execv(DEBIAN_PY, [DEBIAN_PY] + sys.argv)
    if torch is None:
        print("SKIP: python3-torch not installed (scripts/install-deps.sh)")
        sys.exit(77)
    unittest.main()
