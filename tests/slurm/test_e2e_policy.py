"""The rubick policy reconfigures examples/train.py on its own through rubickd's Slurm
engine (issue 22, item 4), on the emulated 4 x 8-GPU cluster of tests/slurm/run.sh.

Guaranteed sleep jobs fill the cluster but for 4 GPUs of one node. A best-effort
gpt2-shaped job (examples/train.py with 3 blocks, global batch 16) takes them with the
plan rubick's curve gives 4 GPUs (dp=4, ZeRO-1); a guaranteed 1-GPU job arrives and
rubick shrinks the first to 3 GPUs, where its curve is a 3-stage pipeline: the Slurm job
is requeued and released with the new plan and GPU count. The guaranteed job ends and the
first grows back on its node. No PUT names a plan. The job's loss follows a
never-reconfigured run of the same global batch and seed at every step (relative
difference <= 1e-4); the same pair on the local engine is tests/daemon/test_e2e_policy.py.

Then a node is lost (its slurmd killed, Slurm marks it down, as in test_engine.py) under a
second such job running dp=4 on it, with only 3 GPUs free elsewhere: rubick relaunches
the job there from its last published checkpoint as a 3-stage pipeline, and the node
comes back. A Slurm drain would not do: a drained node keeps its running jobs
(docs/slurm.md)."""
import os
import subprocess
import sys
import time

HERE = os.path.abspath(os.path.dirname(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "daemon"))
from rkd import Daemon  # noqa: E402
import parity  # noqa: E402
from parity import check  # noqa: E402
from test_e2e_policy import shrink_and_grow  # noqa: E402


def node_names():
    out = subprocess.run(["sinfo", "-h", "-N", "-o", "%N"], capture_output=True, text=True, timeout=10).stdout
    return sorted(set(out.split()), key=lambda n: (len(n), n))


def node_lost(d, blockers):
    """A node fails under the job (its slurmd killed, Slurm marks it down): the only room
    left is 3 GPUs of another node, and rubick relaunches the job there from its last
    published checkpoint (--ckpt-every 5) with the plan its curve gives 3 GPUs."""
    names = node_names()
    taken = [d.call("GET", "/v1/jobs/%d" % b)[1]["alloc"][0]["node"] for b in blockers]
    st, j = d.call("POST", "/v1/jobs", {"name": "lost", "model": "gpt2", "iterations": 40, "gpus": 4,
                                       "min_gpus": 2, "max_gpus": 4, "global_batch": parity_gb(),
                                       "command": parity.train_command("--layers 3 --ckpt-every 5")})
    check(st == 201, j)
    jid = j["id"]
    j = d.wait_state(jid, ["running"], timeout=60)
    first, node = j["plan"], j["alloc"][0]["node"]
    check(node not in taken, "placed on a blocker's node %s: %s" % (taken, j))
    parity.wait_steps(d, jid, 12)
    name = names[node]
    lab = os.environ["RK_SLURM_LAB"]
    os.kill(int(open(os.path.join(lab, "run", "slurmd-%s.pid" % name)).read()), 9)
    subprocess.run(["scontrol", "update", "nodename=" + name, "state=down", "reason=rubick-e2e"],
                   check=True, timeout=10)
    j = parity.wait_plan_change(d, jid, first, timeout=90)
    check(all(a["node"] != node for a in j["alloc"]), "relaunched on the lost node: %s" % j)
    # the node returns (a new slurmd also ends the lost run's orphaned step)
    subprocess.Popen(["setsid", "slurmd", "-D", "-N", name], stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    end = time.time() + 30
    while time.time() < end:
        subprocess.run(["scontrol", "update", "nodename=" + name, "state=resume"], capture_output=True, timeout=10)
        st, nodes = d.call("GET", "/v1/nodes")
        if [n for n in nodes["nodes"] if n["id"] == node][0]["up"]:
            break
        time.sleep(0.5)
    d.wait_state(jid, ["done", "failed"], timeout=240)
    return parity.compare("slurm-node-lost", d, jid, 40, parity_gb(), ["--layers", "3"])


def parity_gb():
    return 16


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
        t1 = time.time()
        # two nodes left to the test: a 5-GPU blocker on one, so that the node-loss phase
        # finds a whole node for its job and only 3 GPUs once that node is lost
        for b in blockers[2:]:
            d.call("DELETE", "/v1/jobs/%d" % b)
            d.wait_state(b, ["cancelled"], timeout=60)
        st, j = d.call("POST", "/v1/jobs", {"name": "block5", "model": "bert", "iterations": 100000,
                                           "gpus": 5, "guaranteed": True, "global_batch": 40,
                                           "command": "sleep 600"})
        check(st == 201, j)
        d.wait_state(j["id"], ["running"], timeout=60)
        lost = node_lost(d, blockers[:2] + [j["id"]])
        print("slurm e2e policy ok: dp<->pp %.2e in %.0f s, node lost %.2e in %.0f s"
              % (worst, t1 - t0, lost, time.time() - t1))
        return 0
    finally:
        d.cancel_all()
        d.stop()


if __name__ == "__main__":
    sys.exit(main())
