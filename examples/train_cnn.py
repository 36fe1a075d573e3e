#!/usr/bin/python3
"""A second reconfigurable job for rubickd: a small CNN classifying generated images,
to show that python/rubick_job (docs/job-library.md) is not tied to one model.

The images are 1 x 16 x 16: each of 4 classes is a fixed random pattern, and a sample is
its class's pattern, shifted by up to 1 pixel, plus noise, so the classes are learnable
but not trivially. The plan's dp, mb, ga, gc (recompute each conv block), ZeRO-1/2/3,
offload and tp come from the library; this file has only the model, the data and the
loss. tp is channel parallelism from rubick_job.tp's layers (up to 4, the GroupNorm
groups): the first and third convolutions split their output channels (column-parallel,
with GroupNorm over each rank's whole groups), the second its input channels and the
head its input features (row-parallel, partial results summed by an all-reduce), so
each conv pair costs one all-reduce forward and one backward, as Megatron's MLP. Same
options, environment, outputs and exit codes as examples/train.py (checkpoint on
SIGUSR1/SIGTERM, exit 75, resume under another plan), except pp, which this model does
not implement.
"""
import argparse
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import rubick_job  # noqa: E402  (found through the line above, without installing)

CLASSES, SIDE, N_SAMPLES = 4, 16, 4096


def images(seed=4321):
    """(images, labels): class patterns, shifted and noised; the same on every rank."""
    g = torch.Generator().manual_seed(seed)
    patterns = torch.randn(CLASSES, 1, SIDE, SIDE, generator=g)
    labels = torch.randint(0, CLASSES, (N_SAMPLES,), generator=g)
    shift = torch.randint(-1, 2, (N_SAMPLES, 2), generator=g)
    x = torch.empty(N_SAMPLES, 1, SIDE, SIDE)
    for i in range(N_SAMPLES):
        x[i] = torch.roll(patterns[labels[i]], (int(shift[i, 0]), int(shift[i, 1])), (1, 2))
    x += 0.5 * torch.randn(x.shape, generator=g)
    return x, labels


GROUPS = 4  # GroupNorm groups per block; tp must divide them (whole groups per rank)
MAX_TP, MAX_PP = 4, 1  # what this script runs (Job.from_env): tp up to the groups, no pp


def block(cin, cout, stride, group, gen, split):
    """conv, GroupNorm, ReLU. split "out": output channels cut over the tp group (the
    GroupNorm with them); "in": input channels cut, outputs summed (whole channels out).
    GroupNorm, not BatchNorm: batch statistics would depend on the micro-batch, i.e. on
    the plan, and the trajectory would change at each reconfiguration."""
    tp = rubick_job.tp
    if split == "out":
        return nn.Sequential(tp.ColumnParallelConv2d(cin, cout, 3, group, gen, stride, 1),
                             tp.ParallelGroupNorm(GROUPS, cout, group), nn.ReLU())
    return nn.Sequential(tp.RowParallelConv2d(cin, cout, 3, group, gen, stride, 1),
                         nn.GroupNorm(GROUPS, cout), nn.ReLU())


class SmallCNN(nn.Module):
    """Every rank draws the full weights from the same generator and keeps its channels,
    so the model starts from the same numbers at every tp."""

    def __init__(self, group=None):
        super().__init__()
        gen = torch.Generator().manual_seed(1)
        self.blocks = nn.ModuleList([block(1, 8, 1, group, gen, "out"), block(8, 16, 2, group, gen, "in"),
                                     block(16, 32, 2, group, gen, "out")])
        # where, not only what: no global pooling; input features cut like block 3's channels
        self.head = rubick_job.tp.RowParallelLinear(32 * (SIDE // 4) ** 2, CLASSES, group, gen)

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return self.head(x.flatten(1))


def train(job):
    torch.manual_seed(0)
    model = SmallCNN(job.tp_group)
    opt = torch.optim.AdamW(model.parameters(), lr=job.args.lr)
    net, opt = job.wrap(model, opt, checkpoint=model.blocks)
    for _, micro in job.steps(images()):
        for x, y in micro:
            job.backward(F.cross_entropy(net(x), y, reduction="sum"))
        job.step()
        if job.args.step_ms:
            time.sleep(job.args.step_ms / 1000)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--step-ms", type=int, default=0,
                   help="sleep this long after each step (tests: a window to signal into)")
    job = rubick_job.Job.from_env(p, max_pp=MAX_PP, max_tp=MAX_TP)
    try:  # the model's own limit: whole GroupNorm groups per tp rank
        rubick_job.check_model_fits(job.plan, job.where, groups=GROUPS)
    except rubick_job.PlanError as e:
        rubick_job.exit_for(e)  # exit 78
    job.run(train)


if __name__ == "__main__":
    main()
