"""rubickd --engine slurm on the emulated cluster (tests/slurm/run.sh), issue 12: as
root with two throwaway users, a tenant's job is submitted with its user's uid and
gid (Slurm's USER column), runs as that user, cannot read the admin token, the
config, the database or another tenant's folder, sees none of rubickd's
environment (only what Slurm and env.sh set); the database holds no plaintext
token; a tenant without user is refused. The probes are tests/daemon/test_security.py's."""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.abspath(os.path.dirname(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "daemon"))
import test_security as sec  # noqa: E402
from rkd import Daemon  # noqa: E402
from secusers import Users  # noqa: E402

# What slurmd adds (SLURM_*, the GPU plugin's device lists, ENVIRONMENT=BATCH) and env.sh (torchrun's).
ENV_SLURM = sec.ENV_LOCAL + (r"|SLURM_\w+|SLURMD_NODENAME|GPU_DEVICE_ORDINAL|ROCR_VISIBLE_DEVICES|"
                             r"ZE_AFFINITY_MASK|ENVIRONMENT|TMPDIR|MASTER_ADDR|MASTER_PORT|WORLD_SIZE|"
                             r"NODE_RANK|GROUP_RANK|LOCAL_WORLD_SIZE|HOSTNAME")


def main():
    users = Users(["a", "b"])
    work = tempfile.mkdtemp(prefix="rkd-slurm-sec-")
    d = None
    try:
        os.chmod(work, 0o711)  # the jobs' users reach their folders under it, list nothing
        d = Daemon(workdir=work, cluster="4x8:a800,cpus=16", extra=["--engine", "slurm"], grace_ms=5000)
        sec.write_conf(d, users)
        os.environ["RKD_TEST_MARKER"] = sec.MARKER
        os.environ["PATH"] = "/" + sec.MARKER + ":" + os.environ.get("PATH", "/usr/bin:/bin")
        d.start()

        def slurm_user(job):
            sid = int(open(os.path.join(work, "state.db.jobs", "job-%d" % job["id"], "slurm_id")).read())
            out = subprocess.run(["squeue", "-h", "-t", "all", "-j", str(sid), "-o", "%u %U"],
                                 capture_output=True, text=True, timeout=10).stdout.split()
            a = users.pw("a")
            sec.check(out == [a.pw_name, str(a.pw_uid)], "Slurm's USER of job %d: %s" % (sid, out))

        token, jid = sec.tenants_and_files(d, users, env_allowed=ENV_SLURM, on_job=slurm_user)
        sec.no_plaintext_tokens(d, token, jid)
        st, j = sec.submit(d, sec.CAROL, "true", "carol")
        sec.check(st == 403 and "carol" in str(j), "carol (no user, as root): %s %s" % (st, j))
        print("slurm security ok: jobs submitted and run as their tenants' users, read none of"
              " rubickd's or other tenants' files, get a clean environment; tokens only hashed")
        return 0
    finally:
        if d:
            d.stop()
        users.remove()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
