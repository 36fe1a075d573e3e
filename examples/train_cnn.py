#!/usr/bin/python3
"""A second reconfigurable job for rubickd: a small CNN classifying generated images,
to show that python/rubick_job (docs/job-library.md) is not tied to one model.

The images are 1 x 16 x 16: each of 4 classes is a fixed random pattern, and a sample is
its class's pattern, shifted by up to 1 pixel, plus noise, so the classes are learnable
but not trivially. The plan's dp, mb, ga, gc (recompute each conv block) and zero=1 come
from the library; this file has only the model, the data and the loss. Same options,
environment, outputs and exit codes as examples/train.py (checkpoint on SIGUSR1/SIGTERM,
exit 75, resume under another plan), except pp, which this model does not implement.
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


def block(cin, cout, stride):
    # GroupNorm, not BatchNorm: batch statistics would depend on the micro-batch, i.e. on
    # the plan, and the trajectory would change at each reconfiguration
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1), nn.GroupNorm(4, cout),
                         nn.ReLU())


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([block(1, 8, 1), block(8, 16, 2), block(16, 32, 2)])
        self.head = nn.Linear(32 * (SIDE // 4) ** 2, CLASSES)  # where, not only what: no global pooling

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return self.head(x.flatten(1))


def train(job):
    torch.manual_seed(0)
    model = SmallCNN()
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
    job = rubick_job.Job.from_env(p)
    job.run(train)


if __name__ == "__main__":
    main()
