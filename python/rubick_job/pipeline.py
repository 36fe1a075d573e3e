"""A GPipe pipeline over point-to-point send/recv (Huang et al. 2019, "GPipe").

The model is a list of layers; pp stages each hold n_layers/pp consecutive ones. A step
runs all forwards of its micro-batches, stage after stage, then all backwards in
reverse: GPipe's schedule, whose bubble is (pp-1)/(m+pp-1) of the step for m
micro-batches. Gradients are summed over the micro-batches exactly as on one stage, so
the step is the same computation whatever pp is, up to nothing: the arithmetic per layer
is unchanged, only where it runs moves.

Activations and their gradients cross stages with blocking send/recv (gloo has them on
CPU); a small header tensor carries each activation's shape first, so layers may change
shape. Every rank builds the full layer list from the same seed and keeps its slice, so
parameters start equal to the unpipelined model's.
"""
import torch
import torch.distributed as dist
import torch.nn as nn

_HDR = 8  # header: ndim, then up to 7 dimensions


def split_layers(n_layers, pp):
    """[(first, end)) layer ranges of the pp stages; pp must divide n_layers."""
    if pp < 1 or n_layers % pp:
        raise ValueError("pp=%d does not divide the model's %d layers" % (pp, n_layers))
    k = n_layers // pp
    return [(s * k, (s + 1) * k) for s in range(pp)]


def _send(t, dst):
    hdr = torch.zeros(_HDR, dtype=torch.int64)
    hdr[0] = t.dim()
    hdr[1:1 + t.dim()] = torch.tensor(t.shape, dtype=torch.int64)
    dist.send(hdr, dst)
    dist.send(t.detach().contiguous(), dst)


def _recv(src, dtype=None):
    hdr = torch.zeros(_HDR, dtype=torch.int64)
    dist.recv(hdr, src)
    n = int(hdr[0])
    if n < 0 or n > _HDR - 1:
        raise RuntimeError("pipeline: bad activation header from rank %d" % src)
    t = torch.empty([int(v) for v in hdr[1:1 + n]], dtype=dtype or torch.get_default_dtype())
    dist.recv(t, src)
    return t


class Pipeline:
    """This rank's stage of a pp-stage GPipe pipeline. ranks[s] is the global rank
    holding stage s in this rank's pipeline (its replica's, under dp)."""

    def __init__(self, layers, pp, stage, ranks):
        if len(ranks) != pp or not 0 <= stage < pp:
            raise ValueError("pipeline: stage %d and %d ranks for pp=%d" % (stage, len(ranks), pp))
        lo, hi = split_layers(len(layers), pp)[stage]
        self.pp, self.stage, self.ranks = pp, stage, list(ranks)
        self.module = nn.Sequential(*list(layers)[lo:hi])
        self.first, self.last = stage == 0, stage == pp - 1

    def parameters(self):
        return self.module.parameters()

    def step(self, inputs, targets, loss_fn):
        """Forward and backward of one step's micro-batches (GPipe). inputs are used
        on the first stage, targets and loss_fn(out, target) -> summed loss on the last.
        Returns the step's summed loss on the last stage, None on the others."""
        # every stage needs the micro-batch count; a middle stage reads it off either list
        m = len(inputs) if inputs is not None else len(targets) if targets is not None else None
        if m is None or (self.first and inputs is None) or (self.last and targets is None):
            raise ValueError("pipeline stage %d: pass the step's micro-batches (inputs on the "
                             "first stage, targets on the last, either on the others)" % self.stage)
        prev = self.ranks[self.stage - 1] if not self.first else None
        nxt = self.ranks[self.stage + 1] if not self.last else None
        saved, total = [], None
        for i in range(m):  # all forwards
            x = inputs[i] if self.first else _recv(prev).requires_grad_()
            out = self.module(x)
            if self.last:
                out = loss_fn(out, targets[i])
                total = out.detach() if total is None else total + out.detach()
            else:
                _send(out, nxt)
            saved.append((x, out))
        for x, out in reversed(saved):  # then all backwards, last micro-batch first
            if self.last:
                out.backward()
            else:
                out.backward(_recv(nxt))
            if not self.first:
                _send(x.grad, prev)
        return total
