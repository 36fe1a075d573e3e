#!/usr/bin/python3
"""A reconfigurable PyTorch training job for rubickd (docs/rubickd.8, JOB PROTOCOL;
docs/slurm.md): a small transformer language model on a generated corpus.

The protocol is python/rubick_job (docs/job-library.md): it reads the plan
(RUBICK_PLAN_FILE, else RUBICK_PLAN, else --plan), keeps the global batch dp*mb*ga fixed
(RUBICK_GLOBAL_BATCH), gives every step the same samples in the same order whatever the
plan, runs dp (torch.distributed, gloo; on one machine, or across the nodes of a
multi-node allocation from MASTER_ADDR/MASTER_PORT, WORLD_SIZE, RUBICK_RANK_BASE and
LOCAL_WORLD_SIZE), ga, gc, ZeRO-1/2/3 and offload=1 (all also under tp and pp),
checkpoints on SIGUSR1 or SIGTERM after a step all
ranks agree on and exits 75, fences stale runs (RUBICK_FENCE_FILE), publishes
RUBICK_CKPT_DIR/run-N/ckpt.pt through an atomic `latest`, appends "step loss run dp ga pp"
to RUBICK_CKPT_DIR/loss.log and reports throughput to RUBICK_URL.

This file holds the model and the data. The model is built from the library's Megatron
tp layers (rubick_job.tp) and its blocks run through the library's GPipe pipeline
(rubick_job.pipeline), so it also runs tp up to 4 and any pp dividing --layers, up to 8
(docs/job-library.md, "Tensor and pipeline parallelism in a script"); the library builds
the dp x tp x pp groups and writes checkpoints that do not depend on the plan.
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
MAX_TP, MAX_PP = 4, 8  # what this script runs: tp up to its 4 heads, pp up to 8 blocks


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
    """Pre-norm transformer block from the library's Megatron layers: whole heads and an
    equal MLP slice per tp rank (one all-reduce forward and one backward each)."""

    def __init__(self, d, heads, group, gen):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn = rubick_job.tp.ParallelSelfAttention(d, heads, group, gen, causal=True)
        self.mlp = rubick_job.tp.ParallelMLP(d, 4 * d, group, gen)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class TinyLM(nn.Module):
    """Every rank builds the whole model from the same seeds (tp layers from `gen`, so
    their full weights are the same at every tp) and runs its stage's part."""

    def __init__(self, group=None, d=64, heads=4, layers=2):
        super().__init__()
        gen = torch.Generator().manual_seed(1)
        self.emb, self.pos = nn.Embedding(VOCAB, d), nn.Parameter(torch.zeros(SEQ, d))
        self.blocks = nn.ModuleList(Block(d, heads, group, gen) for _ in range(layers))
        self.head = nn.Linear(d, VOCAB)

    def embed(self, x):
        return self.emb(x) + self.pos

    def forward(self, x):
        h = self.embed(x)
        for b in self.blocks:
            h = b(h)
        return self.head(h)


def loss_sum(logits, sl):
    """Sum over the micro-batch of each sample's mean token loss."""
    return F.cross_entropy(logits.reshape(-1, VOCAB), sl[:, 1:].reshape(-1),
                           reduction="none").view(sl.shape[0], SEQ).mean(1).sum()


def stage_of(model, pp):
    """The pipeline stage of each parameter, in model.parameters() order: the embedding
    on the first stage, the head on the last, block i where rubick_job.pipeline puts it."""
    cut = rubick_job.pipeline.split_layers(len(model.blocks), pp)

    def owner(name):
        if name.startswith(("emb.", "pos")):
            return 0
        if name.startswith("head."):
            return pp - 1
        i = int(name.split(".")[1])
        return next(s for s, (lo, hi) in enumerate(cut) if lo <= i < hi)
    return [owner(name) for name, _ in model.named_parameters()]


def pipeline_step(job, model, pipe, micro):
    """One GPipe step (rubick_job.pipeline) over this rank's micro-batches: the first
    stage embeds, the last applies the head and the loss, scaled like job.backward().
    Returns the summed per-sample losses (last stage; 0 elsewhere)."""
    total = torch.zeros(1)

    def loss(out, sl):
        nonlocal total
        per = loss_sum(model.head(out), sl)
        total += per.detach().to(total.dtype)
        return per * job.loss_scale

    inputs = [model.embed(sl[:, :-1]) for sl in micro] if pipe.first else None
    pipe.step(inputs, micro, loss)
    return total


def train(job):
    """One rank: the whole training loop, in the library's terms."""
    torch.manual_seed(0)
    if job.args.dtype == "float64":
        torch.set_default_dtype(torch.float64)
    model = TinyLM(job.tp_group, layers=job.args.layers)
    # every parameter, also under pp: parameters without a gradient (other stages') are
    # skipped by AdamW, and the state indexes stay the full model's (merged by the library)
    opt = torch.optim.AdamW(model.parameters(), lr=job.args.lr, weight_decay=0.01)
    pipe = None
    if job.pp > 1:
        pipe = rubick_job.pipeline.Pipeline(model.blocks, job.pp, job.stage, job.pipe)
    net, opt = job.wrap(model, opt, checkpoint=model.blocks, stage_of=pipe and stage_of(model, job.pp))
    for _, micro in job.steps(corpus()):
        if pipe:
            job.step(pipeline_step(job, model, pipe, list(micro)))
            continue
        for sl in micro:
            job.backward(loss_sum(net(sl[:, :-1]), sl))
        job.step()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--dtype", choices=("float32", "float64"), default="float32")
    p.add_argument("--layers", type=int, default=2, help="transformer blocks (pp must divide them)")
    job = rubick_job.Job.from_env(p, max_pp=MAX_PP, max_tp=MAX_TP)
    try:  # the model's own limits: whole heads per tp rank, whole blocks per stage
        rubick_job.check_model_fits(job.plan, job.where, layers=job.args.layers, heads=4, hidden=64, ffn=256)
    except rubick_job.PlanError as e:
        rubick_job.exit_for(e)  # exit 78: a plan this model cannot be split by
    if job.global_batch > N_SAMPLES:
        raise SystemExit("--iters must be >= 1 and --global-batch <= %d" % N_SAMPLES)
    job.run(train)


if __name__ == "__main__":
    main()
