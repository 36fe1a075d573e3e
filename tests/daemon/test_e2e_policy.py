"""End to end through rubickd's local engine with the rubick policy deciding every plan
(issue 22, item 4): examples/train.py is never told a plan by a PUT; the policy gives it
one when it starts and a new one when capacity changes, and the job's loss follows a
never-reconfigured run of the same global batch and seed at every step (relative
difference <= 1e-4).

(a) shrink and grow back: a best-effort bert-shaped job alone on 1 x 4 GPUs starts on
    all four; a guaranteed job of 2 GPUs arrives, rubick shrinks the first to 2 GPUs
    with the plan its curve gives there; the second finishes and the first grows back.
(c) a plan-family change: a gpt2-shaped job (examples/train.py with 3 blocks) on 4 GPUs
    runs dp=4 with ZeRO-1; a guaranteed 1-GPU job arrives and rubick's curve for 3 GPUs
    is a 3-stage pipeline (dp=1,pp=3,ga=16: a global batch of 16 has no 3-way data-parallel
    split, and pipelining beats 1 GPU), so the job moves from data to pipeline
    parallelism, and back to dp=4 when the guaranteed job ends.

restart_s=2: the restart delay rubick plans with is this machine's (a checkpoint and a
relaunch of the tiny job take ~2 s), not the 260 s of a large model on a real cluster;
with 260 s no reconfiguration of a job this short would pay.
The guaranteed newcomer is tests/daemon/job.sh (a shell job), so that only one
PyTorch job runs at a time on CI's two cores."""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from rkd import Daemon  # noqa: E402
import parity  # noqa: E402
from parity import check  # noqa: E402

HERE = os.path.abspath(os.path.dirname(__file__))
GB = 16


def shrink_and_grow(d, name, model, iters, newcomer_gpus=2, args="", want_families=None):
    """One pair: the policy's plan for the job alone, its plan once a guaranteed job
    takes half the GPUs, and its plan once they are back."""
    st, j = d.call("POST", "/v1/jobs", {"name": name, "model": model, "iterations": iters, "gpus": 4,
                                       "min_gpus": 2, "max_gpus": 4, "global_batch": GB,
                                       "command": parity.train_command(args)})
    check(st == 201, j)
    jid = j["id"]
    j = d.wait_state(jid, ["running"], timeout=30)
    first = j["plan"]
    parity.wait_steps(d, jid, 8)
    st, g = d.call("POST", "/v1/jobs", {"name": name + "-guaranteed", "model": model, "iterations": 150,
                                       "gpus": newcomer_gpus, "guaranteed": True, "global_batch": GB,
                                       "command": "sh " + os.path.join(HERE, "job.sh")})
    check(st == 201, g)
    j = parity.wait_plan_change(d, jid, first)
    shrunk = j["plan"]
    check(sum(a["gpus"] for a in j["alloc"]) < 4, "%s: not shrunk for the guaranteed job: %s" % (name, j))
    d.wait_state(g["id"], ["done"], timeout=60)
    j = d.wait_state(jid, ["done", "failed"], timeout=240)
    plans = [p for _, _, p in parity.plans_run(d, jid)]
    check(len(plans) >= 3 and plans[-1] != shrunk,
          "%s: never grew back once the guaranteed job ended: %s" % (name, plans))
    if want_families:
        fam = [tuple(kv for kv in p.split(",") if kv.split("=")[0] in want_families[0]) for p in plans]
        check(len(set(fam)) >= 2, "%s: the plan family (%s) never changed: %s" % (name, want_families[0], plans))
    return parity.compare(name, d, jid, iters, GB, args.split())


def main():
    if not parity.have_torch():
        print("SKIP: python3-torch not installed (scripts/install-deps.sh)")
        return 77
    d = Daemon(cluster="1x4", extra=["--policy", "rubick", "--policy-options", "restart_s=2"],
               grace_ms=5000).start()
    t0 = time.time()
    try:
        a = shrink_and_grow(d, "shrink-grow", "bert", 90)
        ta = time.time() - t0
        c = shrink_and_grow(d, "dp-pp", "gpt2", 60, newcomer_gpus=1, args="--layers 3",
                            want_families=[("tp", "pp", "zero", "gc")])
        print("e2e policy ok: shrink/grow %.2e (%.0f s), dp<->pp %.2e (%.0f s)"
              % (a, ta, c, time.time() - t0 - ta))
        return 0
    finally:
        d.cancel_all()
        d.stop()


if __name__ == "__main__":
    sys.exit(main())
