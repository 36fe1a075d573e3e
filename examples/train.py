#!/usr/bin/python3
"""A reconfigurable PyTorch training job for rubickd (docs/rubickd.8, JOB PROTOCOL;
docs/slurm.md): a small transformer language model on a generated corpus.

It reads its plan (RUBICK_PLAN_FILE, else RUBICK_PLAN, else --plan): dp = data-parallel
processes (torch.distributed, gloo; on one machine, or across the nodes of a multi-node
allocation from MASTER_ADDR/MASTER_PORT, WORLD_SIZE, RUBICK_RANK_BASE and
LOCAL_WORLD_SIZE, which rubickd's Slurm engine sets per node), mb = micro-batch, ga = gradient
accumulation steps, gc = gradient checkpointing, zero = 1 for ZeRO-1
(ZeroRedundancyOptimizer). The global batch dp*mb*ga is fixed by the job
(RUBICK_GLOBAL_BATCH); every step consumes the same samples in the same order whatever
the plan, and the loss is the mean over the global batch, so runs under different
plans follow the same trajectory up to floating-point summation order.

SIGUSR1 or SIGTERM: finish the current step, checkpoint (model, full optimizer state,
step) to RUBICK_CKPT_DIR and exit 75; the next run resumes there with its own plan.
Checkpoints are per run and published atomically: run N writes RUBICK_CKPT_DIR/run-N/ckpt.pt,
then renames a `latest` file naming run-N into place; a run resumes from what `latest` names.
Fencing (rubickd's Slurm engine): RUBICK_FENCE_FILE holds the job's current run number; a
run that finds a newer one there (a stale copy left on a lost node) stops before its next
step and never publishes, so two copies never interleave steps or overwrite a newer
checkpoint. --ckpt-every N also publishes a checkpoint every N steps (what a run resumes
from after its node is lost).
Every completed step appends "step loss run dp ga" to RUBICK_CKPT_DIR/loss.log, and the
measured iteration time is reported to RUBICK_URL/v1/jobs/ID/report.
"""
import argparse
import json
import math
import os
import signal
import socket
import sys
import time
import urllib.request

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

EXIT_CHECKPOINTED = 75
VOCAB, SEQ, N_SAMPLES = 64, 32, 8192


def parse_plan(text, where):
    plan = {"dp": 1, "tp": 1, "pp": 1, "mb": 1, "ga": 1, "gc": 0, "zero": 0, "offload": 0}
    for item in text.strip().split(","):
        if not item:
            continue
        key, sep, val = item.partition("=")
        if not sep or key not in plan:
            raise SystemExit("%s: plan item '%s': expected one of %s as KEY=N" % (where, item, ",".join(plan)))
        try:
            plan[key] = int(val)
        except ValueError:
            raise SystemExit("%s: plan item '%s': not an integer" % (where, item))
        if plan[key] < 0 or (key in ("dp", "mb", "ga", "tp", "pp") and plan[key] < 1):
            raise SystemExit("%s: plan item '%s': out of range" % (where, item))
    if plan["tp"] != 1 or plan["pp"] > 2:
        raise SystemExit("%s: tp=%d pp=%d: this job does data and 2-stage pipeline parallelism"
                         " only (tp=1, pp<=2)" % (where, plan["tp"], plan["pp"]))
    if plan["pp"] > 1 and plan["zero"]:
        raise SystemExit("%s: zero=%d with pp=%d: ZeRO is for data parallelism only here"
                         % (where, plan["zero"], plan["pp"]))
    return plan


def corpus(seed=1234):
    """A fixed synthetic language: a sparse random bigram chain, so there is something to learn."""
    g = torch.Generator().manual_seed(seed)
    nxt = torch.randint(0, VOCAB, (VOCAB, 4), generator=g)
    start = torch.randint(0, VOCAB, (N_SAMPLES,), generator=g)
    choice = torch.randint(0, 4, (N_SAMPLES, SEQ), generator=g)
    data = torch.empty(N_SAMPLES, SEQ + 1, dtype=torch.long)
    data[:, 0] = start
    for t in range(SEQ):
        data[:, t + 1] = nxt[data[:, t], choice[:, t]]
    return data


def batch_indices(step, global_batch):
    """Sample ids of a step: epoch-seeded permutations, independent of the plan."""
    per_epoch = N_SAMPLES // global_batch
    epoch, k = divmod(step, per_epoch)
    perm = torch.randperm(N_SAMPLES, generator=torch.Generator().manual_seed(10007 + epoch))
    return perm[k * global_batch:(k + 1) * global_batch]


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x, mask):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


class TinyLM(nn.Module):
    def __init__(self, d=64, heads=4, layers=2, gc=False):
        super().__init__()
        self.emb, self.pos = nn.Embedding(VOCAB, d), nn.Parameter(torch.zeros(SEQ, d))
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.head = nn.Linear(d, VOCAB)
        self.gc = gc
        self.register_buffer("mask", torch.triu(torch.full((SEQ, SEQ), float("-inf")), 1))

    def forward(self, x):
        h = self.emb(x) + self.pos
        for b in self.blocks:
            h = checkpoint(b, h, self.mask, use_reentrant=False) if self.gc and self.training else b(h, self.mask)
        return self.head(h)


def report(url, job, token, body):
    if not url or not job:
        return
    req = urllib.request.Request("%s/v1/jobs/%s/report" % (url, job), data=json.dumps(body).encode(),
                                 method="POST", headers={"Content-Type": "application/json",
                                                         "Authorization": "Bearer " + token})
    try:
        urllib.request.urlopen(req, timeout=2).read()
    except Exception as e:  # the daemon may be restarting: training goes on
        print("report failed: %s" % e, file=sys.stderr, flush=True)


class Pipeline:
    """Stage `stage` of `pp` of TinyLM (algorithms: GPipe): contiguous blocks per stage, the
    embedding on the first, the head on the last. Every rank holds the whole model (same seed,
    same checkpoint) but computes, updates and checkpoints only its stage's parameters. Within
    a stage the dp replicas average their gradients (group `group`); activations go forward
    and their gradients backward by send/recv to the same replica of the next/previous stage."""

    def __init__(self, model, stage, pp, dp, rank, group):
        n = len(model.blocks)
        cut = [n * s // pp for s in range(pp + 1)]
        self.model, self.stage, self.pp, self.dp, self.rank, self.group = model, stage, pp, dp, rank, group
        self.blocks = list(model.blocks)[cut[stage]:cut[stage + 1]]
        self.first, self.last = stage == 0, stage == pp - 1

        def owner(name):
            if name.startswith(("emb.", "pos")):
                return 0
            if name.startswith("head."):
                return pp - 1
            i = int(name.split(".")[1])
            return max(s for s in range(pp) if cut[s] <= i)
        # the stage of each parameter, in the optimizer's (model.parameters()) order
        self.owner = [owner(name) for name, _ in model.named_parameters()]
        self.mine = [p for p, o in zip(model.parameters(), self.owner) if o == stage]

    def forward(self, h):
        m = self.model
        if self.first:
            h = m.emb(h) + m.pos
        for b in self.blocks:
            h = checkpoint(b, h, m.mask, use_reentrant=False) if m.gc else b(h, m.mask)
        return m.head(h) if self.last else h

    def step(self, batches, dp, G):
        """One iteration, GPipe schedule: all micro-batches forward, then all backward.
        Returns the summed per-sample losses (last stage; 0 elsewhere)."""
        prev, nxt = self.rank - self.dp, self.rank + self.dp
        d = self.model.emb.embedding_dim
        total, pending, saved = torch.zeros(1), [], []
        for sl in batches:
            if self.first:
                inp = sl[:, :-1]
            else:
                inp = torch.empty(sl.shape[0], SEQ, d)
                dist.recv(inp, prev)
                inp.requires_grad_()
            out = self.forward(inp)
            if self.last:
                per = F.cross_entropy(out.reshape(-1, VOCAB), sl[:, 1:].reshape(-1),
                                      reduction="none").view(sl.shape[0], SEQ).mean(1).sum()
                total += per.detach().to(total.dtype)
                (per * dp / G).backward()  # the same scaling as the data-parallel plan
                if not self.first:
                    pending.append(dist.isend(inp.grad.contiguous(), prev))
            else:
                send = out.detach().contiguous()
                pending.append(dist.isend(send, nxt))
                saved.append((inp, out, send))
        for inp, out, _ in saved:  # backward in the same order as the next stage sends
            g = torch.empty_like(out)
            dist.recv(g, nxt)
            out.backward(g)
            if not self.first:
                pending.append(dist.isend(inp.grad.contiguous(), prev))
        for w in pending:
            w.wait()
        if self.dp > 1:  # what DDP does for the data-parallel plan: average over replicas
            for p in self.mine:
                if p.grad is not None:
                    dist.all_reduce(p.grad, group=self.group)
                    p.grad /= self.dp
        return total

    def save_part(self, opt, path):
        """This stage's part of the checkpoint (its replica 0 writes it)."""
        torch.save({"model": self.model.state_dict(), "opt": opt.state_dict()}, path)

    def merge(self, parts):
        """The full checkpoint from the stages' parts: each parameter and its optimizer state
        from the stage that owns it, so that any plan can resume from it."""
        names = [n for n, _ in self.model.named_parameters()]
        model = dict(parts[0]["model"])
        opt = {"param_groups": parts[0]["opt"]["param_groups"], "state": {}}
        for i, (name, o) in enumerate(zip(names, self.owner)):
            model[name] = parts[o]["model"][name]
            if i in parts[o]["opt"]["state"]:
                opt["state"][i] = parts[o]["opt"]["state"][i]
        return model, opt


def fenced(a):
    """Whether a newer run of this job exists (RUBICK_FENCE_FILE, written by rubickd)."""
    if not a.fence:
        return False
    try:
        with open(a.fence) as f:
            return int(f.read().strip() or 0) > int(a.run)
    except (OSError, ValueError):
        return False  # not written yet (an older rubickd): nothing to compare with


def latest_ckpt(ckpt_dir):
    """The published checkpoint: what `latest` names, else a plain ckpt.pt (older layout)."""
    try:
        with open(os.path.join(ckpt_dir, "latest")) as f:
            name = f.read().strip()
        path = os.path.join(ckpt_dir, name, "ckpt.pt")
        if name.startswith("run-") and os.path.exists(path):
            return path
    except OSError:
        pass
    old = os.path.join(ckpt_dir, "ckpt.pt")
    return old if os.path.exists(old) else None


def publish(a, state):
    """Write this run's checkpoint in its own folder, then point `latest` at it by an atomic
    rename, unless a newer run exists (fenced) or `latest` already names a newer run."""
    if fenced(a):
        return False
    mine = os.path.join(a.ckpt_dir, "run-%s" % a.run)
    os.makedirs(mine, exist_ok=True)
    tmp = os.path.join(mine, "ckpt.pt.tmp")
    torch.save(state, tmp)
    os.replace(tmp, os.path.join(mine, "ckpt.pt"))
    try:
        cur = open(os.path.join(a.ckpt_dir, "latest")).read().strip()
        if cur.startswith("run-") and int(cur[4:]) > int(a.run):
            return False
    except (OSError, ValueError):
        pass
    if fenced(a):
        return False
    ptr = os.path.join(a.ckpt_dir, "latest.tmp-%s" % a.run)
    with open(ptr, "w") as f:
        f.write("run-%s\n" % a.run)
        f.flush()
        os.fsync(f.fileno())
    os.replace(ptr, os.path.join(a.ckpt_dir, "latest"))
    return True


def worker(rank, a, plan, stop_flag):
    torch.set_num_threads(max(1, a.threads // a.local))
    dp, pp = plan["dp"], plan["pp"]
    world = dp * pp
    dist.init_process_group("gloo", init_method=a.init, rank=rank, world_size=world)
    if a.nnodes > 1:
        print("rank %d/%d on node %s" % (rank, world, a.node), flush=True)
    torch.manual_seed(0)
    if a.dtype == "float64":
        torch.set_default_dtype(torch.float64)
    model = TinyLM(gc=bool(plan["gc"]))
    # rank = stage * dp + replica: a stage's replicas are consecutive ranks
    stage, rep = divmod(rank, dp)
    pipe = None
    if pp > 1:
        groups = [dist.new_group(list(range(s * dp, (s + 1) * dp))) if dp > 1 else None for s in range(pp)]
        pipe = Pipeline(model, stage, pp, dp, rank, groups[stage])
    ddp = nn.parallel.DistributedDataParallel(model) if dp > 1 and pp == 1 else model
    opt_kw = dict(lr=a.lr, weight_decay=0.01)
    if plan["zero"] and dp > 1:
        from torch.distributed.optim import ZeroRedundancyOptimizer
        opt = ZeroRedundancyOptimizer(model.parameters(), optimizer_class=torch.optim.AdamW, **opt_kw)
    else:
        # every parameter, also under pp: parameters without a gradient (other stages') are
        # skipped by AdamW, and the state indexes stay the full model's (see Pipeline.merge)
        opt = torch.optim.AdamW(model.parameters(), **opt_kw)
    ck_path = latest_ckpt(a.ckpt_dir)
    step = 0
    if ck_path:
        ck = torch.load(ck_path)
        model.load_state_dict(ck["model"])
        opt.load_state_dict(ck["opt"])  # a full state: ZeRO re-partitions it for this dp
        step = ck["step"]
    data = corpus()
    G = a.global_batch
    mb, ga = plan["mb"], plan["ga"]
    if mb * ga * dp != G:
        raise SystemExit("plan mb=%d ga=%d dp=%d does not make the global batch %d" % (mb, ga, dp, G))
    if rank == 0:
        print("run %s resumes at %d with dp=%d pp=%d mb=%d ga=%d gc=%d zero=%d" % (
            a.run, step, dp, pp, mb, ga, plan["gc"], plan["zero"]), flush=True)
    log = open(os.path.join(a.ckpt_dir, "loss.log"), "a") if rank == 0 else None
    t_last, steps_since = time.time(), 0
    stop = torch.zeros(1)
    while step < a.iters:
        if fenced(a):  # a newer run exists: this copy is stale (its node was lost)
            print("run %s rank %d fenced at step %d: a newer run exists" % (a.run, rank, step), flush=True)
            os._exit(EXIT_CHECKPOINTED)
        idx = batch_indices(step, G)
        mine = idx[rep * mb * ga:(rep + 1) * mb * ga]
        opt.zero_grad(set_to_none=True)
        if pipe:
            total = pipe.step([data[mine[m * mb:(m + 1) * mb]] for m in range(ga)], dp, G)
        else:
            total = torch.zeros(1)
            for m in range(ga):
                sl = data[mine[m * mb:(m + 1) * mb]]
                logits = ddp(sl[:, :-1])
                # sum of per-sample mean token losses, scaled so that DDP's average over dp
                # ranks yields the mean over the global batch
                per = F.cross_entropy(logits.reshape(-1, VOCAB), sl[:, 1:].reshape(-1),
                                      reduction="none").view(mb, SEQ).mean(1).sum()
                total += per.detach().to(total.dtype)
                loss = per * dp / G
                if dp > 1 and m < ga - 1:
                    with ddp.no_sync():
                        loss.backward()
                else:
                    loss.backward()
        opt.step()
        step += 1
        if world > 1:
            dist.all_reduce(total)  # under pp only the last stage's ranks hold losses
        if log and not fenced(a):
            log.write("%d %.9g %s %d %d %d\n" % (step, total.item() / G, a.run, dp, ga, pp))
            log.flush()
        steps_since += 1
        if rank == 0 and (step % a.report_every == 0 or step == a.iters):
            now = time.time()
            iter_s = (now - t_last) / steps_since
            report(a.url, a.job, a.token, {"iters_done": step, "throughput_sps": G / iter_s, "run": int(a.run)})
            t_last, steps_since = now, 0
        # every rank stops after the same step: rank 0's view of the flag, broadcast
        stop[0] = 1.0 if (stop_flag.value or (a.stop_after and step == a.stop_after)) else 0.0
        if world > 1:
            dist.broadcast(stop, 0)
        if a.ckpt_every and step % a.ckpt_every == 0 and step < a.iters and not pipe and stop[0] == 0:
            if plan["zero"] and dp > 1:  # collective: every rank decides alike (after the broadcast)
                opt.consolidate_state_dict(to=0)
            if rank == 0 and publish(a, {"model": model.state_dict(), "opt": opt.state_dict(), "step": step}):
                print("published checkpoint at %d" % step, flush=True)
        if stop[0] > 0 and step < a.iters:
            if plan["zero"] and dp > 1:
                opt.consolidate_state_dict(to=0)
            part = lambda s: os.path.join(a.ckpt_dir, "stage-%d.pt" % s)  # noqa: E731
            if pipe and rep == 0:
                pipe.save_part(opt, part(stage))
            if pipe:
                dist.barrier()  # every stage's part is written
            if rank == 0:
                if pipe:
                    parts = [torch.load(part(s)) for s in range(pp)]
                    state = dict(zip(("model", "opt"), pipe.merge(parts)))
                else:
                    state = {"model": model.state_dict(), "opt": opt.state_dict()}
                state["step"] = step
                ok = publish(a, state)
                for s in range(pp if pipe else 0):
                    os.unlink(part(s))
                print("checkpointed at %d" % step if ok else "fenced at %d: not published" % step,
                      flush=True)
            dist.barrier()
            dist.destroy_process_group()
            sys.stdout.flush()
            os._exit(EXIT_CHECKPOINTED) if a.local > 1 else sys.exit(EXIT_CHECKPOINTED)
    if rank == 0:
        print("finished %d iterations" % step, flush=True)
    dist.destroy_process_group()


def main():
    env = os.environ
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--plan", default=None, help="plan text when RUBICK_PLAN(_FILE) is unset")
    p.add_argument("--iters", type=int, default=int(float(env.get("RUBICK_ITERS", "100"))))
    p.add_argument("--global-batch", type=int, default=int(env.get("RUBICK_GLOBAL_BATCH", "0") or 0))
    p.add_argument("--ckpt-dir", default=env.get("RUBICK_CKPT_DIR", "ckpt"))
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--dtype", choices=("float32", "float64"), default="float32")
    p.add_argument("--report-every", type=int, default=5)
    p.add_argument("--ckpt-every", type=int, default=0,
                   help="also publish a checkpoint every N steps (0: only when asked to stop)")
    p.add_argument("--stop-after", type=int, default=0,
                   help="checkpoint and exit 75 after this step, as on SIGUSR1 (tests)")
    p.add_argument("--threads", type=int, default=int(env.get("RUBICK_CPUS", "0") or 0) or os.cpu_count())
    a = p.parse_args()
    if env.get("RUBICK_PLAN_FILE") and os.path.exists(env["RUBICK_PLAN_FILE"]):
        where = env["RUBICK_PLAN_FILE"]
        text = open(where).read()
    elif env.get("RUBICK_PLAN"):
        where, text = "RUBICK_PLAN", env["RUBICK_PLAN"]
    else:
        where, text = "--plan", a.plan or "dp=1"
    plan = parse_plan(text, where)
    if a.global_batch <= 0:
        a.global_batch = plan["dp"] * plan["mb"] * plan["ga"]
    if a.iters < 1 or a.global_batch > N_SAMPLES:
        raise SystemExit("--iters must be >= 1 and --global-batch <= %d" % N_SAMPLES)
    a.url, a.job, a.token = env.get("RUBICK_URL"), env.get("RUBICK_JOB_ID"), env.get("RUBICK_JOB_TOKEN", "")
    a.run = env.get("RUBICK_RUN", "1")
    a.fence = env.get("RUBICK_FENCE_FILE")
    os.makedirs(a.ckpt_dir, exist_ok=True)
    # Several nodes (rubickd's Slurm engine starts this once per node, docs/slurm.md): the
    # ranks RUBICK_RANK_BASE .. + LOCAL_WORLD_SIZE - 1 of WORLD_SIZE run here and meet at
    # MASTER_ADDR:MASTER_PORT (node 0). One node: all dp ranks here, meeting through a file store.
    a.nnodes = int(env.get("RUBICK_NNODES", "1") or 1)
    if a.nnodes > 1:
        world, base, a.local = (int(env[k]) for k in ("WORLD_SIZE", "RUBICK_RANK_BASE", "LOCAL_WORLD_SIZE"))
        a.init = "tcp://%s:%s" % (env["MASTER_ADDR"], env["MASTER_PORT"])
        a.node = "%s %s" % (env.get("NODE_RANK", "?"), env.get("SLURMD_NODENAME", socket.gethostname()))
        if world != plan["dp"] * plan["pp"]:
            raise SystemExit("%s: dp*pp=%d, but the allocation runs %d ranks (WORLD_SIZE)"
                             % (where, plan["dp"] * plan["pp"], world))
    else:
        base, a.local = 0, plan["dp"] * plan["pp"]
        # The ranks meet through a file store, not a TCP port: a free port found by
        # binding port 0 can be taken before rank 0 listens on it (seen in CI: "Address
        # already in use", and the run hung). One file per launch: a killed run's stays.
        rdzv = os.path.join(a.ckpt_dir, ".rdzv-run-%s-%d" % (a.run, os.getpid()))
        if os.path.exists(rdzv):
            os.unlink(rdzv)
        a.init = "file://" + rdzv
    # fork, not spawn: the workers inherit the imported torch instead of importing it again
    ctx_mp = mp.get_context("fork")
    stop_flag = ctx_mp.Value("i", 0)

    def on_signal(signum, frame):
        stop_flag.value = 1

    if a.local == 1:  # one process here: no launcher in between
        signal.signal(signal.SIGUSR1, on_signal)
        signal.signal(signal.SIGTERM, on_signal)
        worker(base, a, plan, stop_flag)
        return
    # workers ignore the signals: the launcher turns them into a flag all ranks agree on
    signal.signal(signal.SIGUSR1, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    procs = [ctx_mp.Process(target=worker, args=(base + r, a, plan, stop_flag)) for r in range(a.local)]
    for p in procs:
        p.start()
    signal.signal(signal.SIGUSR1, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    codes = []
    for p in procs:
        while p.is_alive():
            p.join(0.2)
        codes.append(p.exitcode)
    if all(c == 0 for c in codes):
        return
    sys.exit(EXIT_CHECKPOINTED if all(c == EXIT_CHECKPOINTED for c in codes) else 1)

if __name__ == "__main__":
    main()
