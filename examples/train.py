#!/usr/bin/python3
"""A reconfigurable PyTorch training job for rubickd (docs/rubickd.8, JOB PROTOCOL;
docs/slurm.md): a small transformer language model on a generated corpus.

The protocol is python/rubick_job (docs/job-library.md): it reads the plan
(RUBICK_PLAN_FILE, else RUBICK_PLAN, else --plan), keeps the global batch dp*mb*ga fixed
(RUBICK_GLOBAL_BATCH), gives every step the same samples in the same order whatever the
plan, runs dp (torch.distributed, gloo; on one machine, or across the nodes of a
multi-node allocation from MASTER_ADDR/MASTER_PORT, WORLD_SIZE, RUBICK_RANK_BASE and
LOCAL_WORLD_SIZE), ga, gc and ZeRO-1, checkpoints on SIGUSR1 or SIGTERM after a step all
ranks agree on and exits 75, fences stale runs (RUBICK_FENCE_FILE), publishes
RUBICK_CKPT_DIR/run-N/ckpt.pt through an atomic `latest`, appends "step loss run dp ga pp"
to RUBICK_CKPT_DIR/loss.log and reports throughput to RUBICK_URL.

This file holds the model, the data, and pp=2: a 2-stage GPipe pipeline of this model's
blocks (the library builds the stage groups and merges the stages' checkpoints).
--ckpt-every N also publishes a checkpoint every N steps (what a run resumes from after
its node is lost).
"""
import argparse
import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import rubick_job  # noqa: E402  (found through the line above, without installing)

VOCAB, SEQ, N_SAMPLES = 64, 32, 8192


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
    def __init__(self, d=64, heads=4, layers=2):
        super().__init__()
        self.emb, self.pos = nn.Embedding(VOCAB, d), nn.Parameter(torch.zeros(SEQ, d))
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.head = nn.Linear(d, VOCAB)
        self.register_buffer("mask", torch.triu(torch.full((SEQ, SEQ), float("-inf")), 1))

    def forward(self, x):
        h = self.emb(x) + self.pos
        for b in self.blocks:
            h = b(h, self.mask)
        return self.head(h)


def loss_sum(logits, sl):
    """Sum over the micro-batch of each sample's mean token loss."""
    return F.cross_entropy(logits.reshape(-1, VOCAB), sl[:, 1:].reshape(-1),
                           reduction="none").view(sl.shape[0], SEQ).mean(1).sum()


class Pipeline:
    """Stage `stage` of `pp` of TinyLM (algorithms: GPipe): contiguous blocks per stage, the
    embedding on the first, the head on the last. Every rank holds the whole model (same seed,
    same checkpoint) but computes, updates and checkpoints only its stage's parameters (the
    library averages them over the stage's dp replicas and merges the stages' checkpoints);
    activations go forward and their gradients backward by send/recv to the same replica of
    the next/previous stage."""

    def __init__(self, model, job):
        n, pp = len(model.blocks), job.pp
        cut = [n * s // pp for s in range(pp + 1)]
        self.model, self.job = model, job
        self.blocks = list(model.blocks)[cut[job.stage]:cut[job.stage + 1]]
        self.first, self.last = job.stage == 0, job.stage == pp - 1

        def owner(name):
            if name.startswith(("emb.", "pos")):
                return 0
            if name.startswith("head."):
                return pp - 1
            i = int(name.split(".")[1])
            return max(s for s in range(pp) if cut[s] <= i)
        # the stage of each parameter, in the optimizer's (model.parameters()) order
        self.owner = [owner(name) for name, _ in model.named_parameters()]

    def forward(self, h):
        m = self.model
        if self.first:
            h = m.emb(h) + m.pos
        for b in self.blocks:
            h = b(h, m.mask)
        return m.head(h) if self.last else h

    def step(self, batches):
        """One iteration, GPipe schedule: all micro-batches forward, then all backward.
        Returns the summed per-sample losses (last stage; 0 elsewhere)."""
        dp = self.job.dp
        prev, nxt = self.job.rank - dp, self.job.rank + dp
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
                per = loss_sum(out, sl)
                total += per.detach().to(total.dtype)
                (per * dp / self.job.global_batch).backward()  # the same scaling as the dp plan
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
        return total


def train(job):
    """One rank: the whole training loop, in the library's terms."""
    torch.manual_seed(0)
    if job.args.dtype == "float64":
        torch.set_default_dtype(torch.float64)
    model = TinyLM()
    # every parameter, also under pp: parameters without a gradient (other stages') are
    # skipped by AdamW, and the state indexes stay the full model's (merged by the library)
    opt = torch.optim.AdamW(model.parameters(), lr=job.args.lr, weight_decay=0.01)
    pipe = Pipeline(model, job) if job.pp > 1 else None
    net, opt = job.wrap(model, opt, checkpoint=model.blocks, stage_of=pipe and pipe.owner)
    for _, micro in job.steps(corpus()):
        if pipe:
            job.step(pipe.step(list(micro)))
            continue
        for sl in micro:
            job.backward(loss_sum(net(sl[:, :-1]), sl))
        job.step()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--dtype", choices=("float32", "float64"), default="float32")
    job = rubick_job.Job.from_env(p, max_pp=2)
    if job.global_batch > N_SAMPLES:
        raise SystemExit("--iters must be >= 1 and --global-batch <= %d" % N_SAMPLES)
    job.run(train)


if __name__ == "__main__":
    main()
