"""Issue 13: a submission's own Slurm options against its tenant's allow-lists and time
limit (src/daemon/sched/sched_slurm_opts.c), checked at submission on both submit paths (the fast
one, and the scheduler thread's for a tenant with a quota), with the local engine: no Slurm
needed. tests/slurm/test_faults.py checks that the accepted ones reach sbatch."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rkd import Daemon  # noqa: E402

DAVE = "dave-token-0123456789abcdefgh"
ERIN = "erin-token-0123456789abcdefgh"


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def main():
    d = Daemon()
    for name, tok in (("dave", DAVE), ("erin", ERIN)):
        p = os.path.join(d.dir, name + ".token")
        with open(p, "w") as f:
            f.write(tok + "\n")
        os.chmod(p, 0o600)
    with open(d.conf, "a") as f:
        # dave: the fast submit path (no quota); erin: the scheduler thread's (a quota)
        f.write("[tenant dave]\ntoken_file = %s/dave.token\nslurm_account = research\nslurm_time_limit = 30\n"
                "slurm_allowed_accounts = research, physics\nslurm_allowed_partitions = gpu,long\n"
                "[tenant erin]\ntoken_file = %s/erin.token\ngpu_quota = 4\nslurm_allowed_qos = normal\n"
                % (d.dir, d.dir))
    d.start()
    try:
        base = {"name": "o", "model": "bert", "iterations": 10, "gpus": 1, "command": "true"}
        for tok, extra, status, field in (
                (DAVE, {"slurm_account": "physics", "slurm_partition": "long", "slurm_time_limit": 30}, 201, None),
                (DAVE, {"slurm_account": "research"}, 201, None),  # the tenant's default
                (DAVE, {"slurm_qos": "anything"}, 201, None),      # no QOS list: Slurm decides
                (DAVE, {"slurm_account": "evil"}, 403, "slurm_account"),
                (DAVE, {"slurm_partition": "debug"}, 403, "slurm_partition"),
                (DAVE, {"slurm_time_limit": 31}, 403, "slurm_time_limit"),
                (DAVE, {"slurm_account": "a b"}, 400, "slurm_account"),
                (ERIN, {"slurm_qos": "normal", "slurm_time_limit": 999}, 201, None),  # no tenant limit
                (ERIN, {"slurm_qos": "high"}, 403, "slurm_qos")):
            body = dict(base, **extra)
            st, r = d.call("POST", "/v1/jobs", body, token=tok)
            check(st == status, "%s: %s %s" % (extra, st, r))
            if field:
                check(field in str(r) and ("may not use" in str(r) or "exceeds" in str(r) or st == 400),
                      "%s: the error must name the field and why: %s" % (extra, r))
            else:
                for k, v in extra.items():
                    check(r["spec"][k] == v, "%s: stored spec %s" % (extra, r["spec"]))
        print("slurm options: allow-lists and time limit ok")
        return 0
    finally:
        d.stop()


if __name__ == "__main__":
    sys.exit(main())
