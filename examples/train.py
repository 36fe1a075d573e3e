#!/usr/bin/python3
"""A reconfigurable PyTorch training job for rubickd (docs/rubickd.8, JOB PROTOCOL;
docs/slurm.md): a small transformer language model on a generated corpus.

It reads its plan (RUBICK_PLAN_FILE, else RUBICK_PLAN, else --plan): dp = data-parallel
processes on this machine (torch.distributed, gloo), mb = micro-batch, ga = gradient
accumulation steps, gc = gradient checkpointing, zero = 1 for ZeRO-1
(ZeroRedundancyOptimizer). The global batch dp*mb*ga is fixed by the job
(RUBICK_GLOBAL_BATCH); every step consumes the same samples in the same order whatever
the plan, and the loss is the mean over the global batch, so runs under different
plans follow the same trajectory up to floating-point summation order.

SIGUSR1 or SIGTERM: finish the current step, checkpoint (model, full optimizer state,
step) to RUBICK_CKPT_DIR and exit 75; the next run resumes there with its own plan.
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
    if plan["tp"] != 1 or plan["pp"] != 1:
        raise SystemExit("%s: tp=%d pp=%d: this job only does data parallelism (tp=pp=1)"
                         % (where, plan["tp"], plan["pp"]))
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


def worker(rank, a, plan, stop_flag):
    torch.set_num_threads(max(1, a.threads // plan["dp"]))
    dp = plan["dp"]
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % a.port, rank=rank, world_size=dp)
    torch.manual_seed(0)
    if a.dtype == "float64":
        torch.set_default_dtype(torch.float64)
    model = TinyLM(gc=bool(plan["gc"]))
    ddp = nn.parallel.DistributedDataParallel(model) if dp > 1 else model
    opt_kw = dict(lr=a.lr, weight_decay=0.01)
    if plan["zero"] and dp > 1:
        from torch.distributed.optim import ZeroRedundancyOptimizer
        opt = ZeroRedundancyOptimizer(model.parameters(), optimizer_class=torch.optim.AdamW, **opt_kw)
    else:
        opt = torch.optim.AdamW(model.parameters(), **opt_kw)
    ck_path = os.path.join(a.ckpt_dir, "ckpt.pt")
    step = 0
    if os.path.exists(ck_path):
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
        print("run %s resumes at %d with dp=%d mb=%d ga=%d gc=%d zero=%d" % (
            a.run, step, dp, mb, ga, plan["gc"], plan["zero"]), flush=True)
    log = open(os.path.join(a.ckpt_dir, "loss.log"), "a") if rank == 0 else None
    t_last, steps_since = time.time(), 0
    stop = torch.zeros(1)
    while step < a.iters:
        idx = batch_indices(step, G)
        mine = idx[rank * mb * ga:(rank + 1) * mb * ga]
        opt.zero_grad(set_to_none=True)
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
        if dp > 1:
            dist.all_reduce(total)
        if log:
            log.write("%d %.9g %s %d %d\n" % (step, total.item() / G, a.run, dp, ga))
            log.flush()
        steps_since += 1
        if rank == 0 and (step % a.report_every == 0 or step == a.iters):
            now = time.time()
            iter_s = (now - t_last) / steps_since
            report(a.url, a.job, a.token, {"iters_done": step, "throughput_sps": G / iter_s, "run": int(a.run)})
            t_last, steps_since = now, 0
        # every rank stops after the same step: rank 0's view of the flag, broadcast
        stop[0] = 1.0 if (stop_flag.value or (a.stop_after and step == a.stop_after)) else 0.0
        if dp > 1:
            dist.broadcast(stop, 0)
        if stop[0] > 0 and step < a.iters:
            if plan["zero"] and dp > 1:
                opt.consolidate_state_dict(to=0)
            if rank == 0:
                tmp = ck_path + ".tmp"
                torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": step}, tmp)
                os.replace(tmp, ck_path)
                print("checkpointed at %d" % step, flush=True)
            dist.barrier()
            dist.destroy_process_group()
            sys.stdout.flush()
            os._exit(EXIT_CHECKPOINTED) if dp > 1 else sys.exit(EXIT_CHECKPOINTED)
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
    os.makedirs(a.ckpt_dir, exist_ok=True)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        a.port = s.getsockname()[1]
    # fork, not spawn: the workers inherit the imported torch instead of importing it again
    ctx_mp = mp.get_context("fork")
    stop_flag = ctx_mp.Value("i", 0)

    def on_signal(signum, frame):
        stop_flag.value = 1

    if plan["dp"] == 1:  # one process: no launcher in between
        signal.signal(signal.SIGUSR1, on_signal)
        signal.signal(signal.SIGTERM, on_signal)
        worker(0, a, plan, stop_flag)
        return
    # workers ignore the signals: the launcher turns them into a flag all ranks agree on
    signal.signal(signal.SIGUSR1, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    procs = [ctx_mp.Process(target=worker, args=(r, a, plan, stop_flag)) for r in range(plan["dp"])]
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
