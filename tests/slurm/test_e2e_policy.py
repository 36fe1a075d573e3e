"""The rubick policy reconfigures examples/train.py on its own through rubickd's Slurm
engine (issue 22, item 4), on the emulated 4 x 8-GPU cluster of tests/slurm/run.sh.

Guaranteed sleep jobs fill the cluster but for 4 GPUs of one node. A best-effort
gpt2-shaped job (examples/train.py with 3 blocks, global batch 16) takes them with the
plan rubick's curve gives 4 GPUs (dp=4, ZeRO-1); a guaranteed 1-GPU job arrives and
rubick shrinks the first to 3 GPUs, where its curve is a 3-stage pipeline: the Slurm job
is requeued and released with the new plan and GPU count. The guaranteed job ends and the
first grows back on its node. No PUT names a plan. The job's loss follows a
never-reconfigured run of the same global batch and seed at every step (relative
difference <= 1e-4); the same pair on the local engine is tests/daemon/test_e2e_policy.py."""
import os
import sys
import time

HERE = os.path.abspath(os.path.dirname(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "daemon"))
from rkd import Daemon  # noqa: E402
import parity  # noqa: E402
from parity import check  # noqa: E402
from test_e2e_policy import shrink_and_grow  # noqa: E402


def main():
    if os.environ.get("RK_SLURM_NO_TORCH"):
        print("SKIP: the PyTorch phase is left to the plain build (RK_SLURM_NO_TORCH)")
        return 77
    if not parity.have_torch():
        print("SKIP: python3-torch not installed (scripts/install-deps.sh)")
        return 77
    d = Daemon(cluster="4x8:a800,cpus=16", extra=["--engine", "slurm", "--policy", "rubick",
                                                  "--policy-options", "restart_s=2"], grace_ms=5000)
    d.start()
    t0 = time.time()
    try:
        blockers = []
        for g in (8, 8, 8, 4):  # guaranteed, rigid: rubick never resizes or preempts them
            st, j = d.call("POST", "/v1/jobs", {"name": "block%d" % len(blockers), "model": "bert",
                                               "iterations": 100000, "gpus": g, "guaranteed": True,
                                               "global_batch": 32, "command": "sleep 600"})
            check(st == 201, j)
            blockers.append(j["id"])
        for b in blockers:
            d.wait_state(b, ["running"], timeout=60)
        worst = shrink_and_grow(d, "slurm-dp-pp", "gpt2", 60, newcomer_gpus=1, args="--layers 3",
                                want_families=[("tp", "pp", "zero", "gc")])
        for b in blockers:
            st, j = d.call("GET", "/v1/jobs/%d" % b)
            check(j["state"] == "running" and j["restarts"] == 0, "a blocker was disturbed: %s" % j)
        print("slurm e2e policy ok: dp<->pp %.2e in %.0f s" % (worst, time.time() - t0))
        return 0
    finally:
        d.cancel_all()
        d.stop()


if __name__ == "__main__":
    sys.exit(main())
