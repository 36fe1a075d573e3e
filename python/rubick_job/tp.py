"""Megatron-style tensor parallelism (Shoeybi et al. 2019, "Megatron-LM", section 3).

A linear layer Y = X A is split two ways over the tp group:
- column-parallel: A = [A_1 .. A_t] by output columns; rank i computes X A_i, so the
  input must be the same on every rank and its gradient summed: the operator f
  (identity forward, all-reduce backward; paper fig. 3);
- row-parallel: A split by input rows, X by its last dimension; rank i computes X_i A_i
  and the partial products are summed: the operator g (all-reduce forward, identity
  backward).
An MLP is column then row (one all-reduce forward, one backward); self-attention splits
its heads: Q, K, V column-parallel (head-aligned), output projection row-parallel.

Every weight is initialised in full from the caller's seeded generator and then sliced,
so a tp=t model starts from exactly the tp=1 model's numbers and follows it up to the
rounding of the all-reduce. full_state() gathers the full weights (checkpoints stay
plan-independent); load_full() slices them back.
"""
import math

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F


def _size(group):
    return 1 if group is None else dist.get_world_size(group)


def _rank(group):
    return 0 if group is None else dist.get_rank(group)


class _CopyToTP(torch.autograd.Function):
    """f: identity forward, all-reduce of the gradient backward (Megatron fig. 3)."""

    @staticmethod
    def forward(ctx, x, group):
        ctx.group = group
        return x

    @staticmethod
    def backward(ctx, grad):
        if _size(ctx.group) > 1:
            grad = grad.clone()
            dist.all_reduce(grad, group=ctx.group)
        return grad, None


class _ReduceFromTP(torch.autograd.Function):
    """g: all-reduce forward, identity backward (Megatron fig. 3)."""

    @staticmethod
    def forward(ctx, x, group):
        if _size(group) > 1:
            x = x.clone()
            dist.all_reduce(x, group=group)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad, None


def copy_to_tp(x, group):
    return _CopyToTP.apply(x, group)


def reduce_from_tp(x, group):
    return _ReduceFromTP.apply(x, group)


def _full_linear(n_in, n_out, gen):
    """nn.Linear's default init (uniform +-1/sqrt(fan_in)), drawn from gen so every
    rank draws the same full matrix whatever its tp."""
    bound = 1.0 / math.sqrt(n_in)
    w = torch.empty(n_out, n_in).uniform_(-bound, bound, generator=gen)
    b = torch.empty(n_out).uniform_(-bound, bound, generator=gen)
    return w, b


def _check_divides(what, n, tp):
    if tp < 1 or n % tp:
        raise ValueError("tp=%d does not divide %s=%d" % (tp, what, n))


class SplitLayer(nn.Module):
    """A layer whose parameters are cut over the tp group: split(attr) is (dim, index
    list of the full tensor this rank holds) for a cut parameter, None for one that is
    whole on every rank; full_state() gathers the cut ones (collective over the group),
    load_full() slices a full state back."""

    def split(self, attr):
        raise NotImplementedError

    def full_state(self):
        out = {}
        for attr, p in self.named_parameters(recurse=False):
            s = self.split(attr)
            out[attr] = _gather(p, s[0], self.group) if s else p.detach().clone()
        return out

    def load_full(self, sd):
        with torch.no_grad():
            for attr, p in self.named_parameters(recurse=False):
                s = self.split(attr)
                p.copy_(sd[attr].index_select(s[0], torch.tensor(s[1])) if s else sd[attr])


class ColumnParallelLinear(SplitLayer):
    """Y_i = f(X) A_i + b_i: this rank's slice of the output features."""

    def __init__(self, n_in, n_out, group, gen, rows=None):
        super().__init__()
        tp, r = _size(group), _rank(group)
        _check_divides("out_features", n_out, tp)
        self.group, self.n_in, self.n_out = group, n_in, n_out
        w, b = _full_linear(n_in, n_out, gen)
        # rows: the full-matrix rows this rank owns (head-aligned slices for attention)
        self.rows = rows if rows is not None else list(range(r * n_out // tp, (r + 1) * n_out // tp))
        self.weight = nn.Parameter(w[self.rows].clone())
        self.bias = nn.Parameter(b[self.rows].clone())

    def forward(self, x):
        return F.linear(copy_to_tp(x, self.group), self.weight, self.bias)

    def split(self, attr):
        return 0, self.rows


class RowParallelLinear(SplitLayer):
    """Y = g(X_i A_i) + b: input features split, partial products summed; the bias is
    added once, after the sum, and is the same on every rank."""

    def __init__(self, n_in, n_out, group, gen, cols=None):
        super().__init__()
        tp, r = _size(group), _rank(group)
        _check_divides("in_features", n_in, tp)
        self.group, self.n_in, self.n_out = group, n_in, n_out
        w, b = _full_linear(n_in, n_out, gen)
        self.cols = cols if cols is not None else list(range(r * n_in // tp, (r + 1) * n_in // tp))
        self.weight = nn.Parameter(w[:, self.cols].clone())
        self.bias = nn.Parameter(b.clone())

    def forward(self, x):
        return reduce_from_tp(F.linear(x, self.weight), self.group) + self.bias

    def split(self, attr):
        return (1, self.cols) if attr == "weight" else None


def _full_conv(cin, cout, k, gen):
    """nn.Conv2d's default init (kaiming_uniform with a = sqrt(5), i.e. uniform
    +-1/sqrt(fan_in), and the bias likewise), drawn in full from gen."""
    bound = 1.0 / math.sqrt(cin * k * k)
    w = torch.empty(cout, cin, k, k).uniform_(-bound, bound, generator=gen)
    b = torch.empty(cout).uniform_(-bound, bound, generator=gen)
    return w, b


class ColumnParallelConv2d(SplitLayer):
    """A convolution with its output channels split over the tp group (the channel
    analogue of ColumnParallelLinear): the input passes through f, each rank computes its
    slice of the output channels."""

    def __init__(self, cin, cout, k, group, gen, stride=1, padding=0):
        super().__init__()
        tp, r = _size(group), _rank(group)
        _check_divides("out_channels", cout, tp)
        self.group, self.stride, self.padding = group, stride, padding
        w, b = _full_conv(cin, cout, k, gen)
        self.rows = list(range(r * cout // tp, (r + 1) * cout // tp))
        self.weight = nn.Parameter(w[self.rows].clone())
        self.bias = nn.Parameter(b[self.rows].clone())

    def forward(self, x):
        return F.conv2d(copy_to_tp(x, self.group), self.weight, self.bias, self.stride, self.padding)

    def split(self, attr):
        return 0, self.rows


class RowParallelConv2d(SplitLayer):
    """A convolution with its input channels split (the channel analogue of
    RowParallelLinear): each rank convolves its input channels, g sums the partial
    outputs, the bias is added once after the sum."""

    def __init__(self, cin, cout, k, group, gen, stride=1, padding=0):
        super().__init__()
        tp, r = _size(group), _rank(group)
        _check_divides("in_channels", cin, tp)
        self.group, self.stride, self.padding = group, stride, padding
        w, b = _full_conv(cin, cout, k, gen)
        self.cols = list(range(r * cin // tp, (r + 1) * cin // tp))
        self.weight = nn.Parameter(w[:, self.cols].clone())
        self.bias = nn.Parameter(b.clone())

    def forward(self, x):
        y = reduce_from_tp(F.conv2d(x, self.weight, None, self.stride, self.padding), self.group)
        return y + self.bias.view(1, -1, 1, 1)

    def split(self, attr):
        return (1, self.cols) if attr == "weight" else None


class ParallelGroupNorm(SplitLayer):
    """GroupNorm over channels split like the column-parallel layer before it: each rank
    holds whole groups (tp must divide the groups), so the statistics are local and
    need no communication; the affine weight and bias are cut with the channels."""

    def __init__(self, groups, channels, group, eps=1e-5):
        super().__init__()
        tp, r = _size(group), _rank(group)
        _check_divides("groups", groups, tp)
        _check_divides("channels", channels, groups)
        self.group, self.local_groups, self.eps = group, groups // tp, eps
        self.rows = list(range(r * channels // tp, (r + 1) * channels // tp))
        self.weight = nn.Parameter(torch.ones(len(self.rows)))
        self.bias = nn.Parameter(torch.zeros(len(self.rows)))

    def forward(self, x):
        return F.group_norm(x, self.local_groups, self.weight, self.bias, self.eps)

    def split(self, attr):
        return 0, self.rows


def _gather(p, dim, group):
    """The full tensor from every tp rank's contiguous slice along dim (rank order)."""
    t = p.detach()
    if _size(group) == 1:
        return t.clone()
    parts = [torch.empty_like(t) for _ in range(_size(group))]
    dist.all_gather(parts, t.contiguous(), group=group)
    return torch.cat(parts, dim)


class ParallelMLP(nn.Module):
    """h -> gelu(h A) B with A column- and B row-parallel (Megatron eq. 3-4)."""

    def __init__(self, hidden, ffn, group, gen):
        super().__init__()
        self.fc1 = ColumnParallelLinear(hidden, ffn, group, gen)
        self.fc2 = RowParallelLinear(ffn, hidden, group, gen)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class ParallelSelfAttention(nn.Module):
    """Multi-head self-attention with heads/tp heads on each rank (Megatron fig. 3b):
    Q, K, V column-parallel (whole heads per rank), output projection row-parallel."""

    def __init__(self, hidden, heads, group, gen, causal=False):
        super().__init__()
        tp, r = _size(group), _rank(group)
        _check_divides("heads", heads, tp)
        self.causal = causal  # a language model's position t sees positions <= t only
        _check_divides("hidden", hidden, heads)
        self.hd, self.local_heads = hidden // heads, heads // tp
        own = list(range(r * hidden // tp, (r + 1) * hidden // tp))  # this rank's heads
        self.q = ColumnParallelLinear(hidden, hidden, group, gen, rows=own)
        self.k = ColumnParallelLinear(hidden, hidden, group, gen, rows=own)
        self.v = ColumnParallelLinear(hidden, hidden, group, gen, rows=own)
        self.o = RowParallelLinear(hidden, hidden, group, gen, cols=own)

    def forward(self, x):
        b, s, _ = x.shape
        sh = lambda t: t.view(b, s, self.local_heads, self.hd).transpose(1, 2)
        q, k, v = sh(self.q(x)), sh(self.k(x)), sh(self.v(x))
        att = q @ k.transpose(-1, -2) / math.sqrt(self.hd)
        if self.causal:
            att = att.masked_fill(torch.ones(s, s, dtype=torch.bool).triu(1), float("-inf"))
        a = torch.softmax(att, dim=-1) @ v
        return self.o(a.transpose(1, 2).reshape(b, s, self.local_heads * self.hd))


def full_state(model):
    """Plan-independent state dict: tp layers' full weights gathered (collective over
    each layer's tp group: every tp rank must call it), other parameters as they are."""
    out = {}
    for name, m in model.named_modules():
        if isinstance(m, SplitLayer):
            for k, v in m.full_state().items():
                out[(name + "." if name else "") + k] = v
    for name, t in model.state_dict().items():
        out.setdefault(name, t.detach().clone())
    return out


def load_full(model, sd):
    """Load a full_state() dict into a model of any tp: tp layers take their slices."""
    done = set()
    for name, m in model.named_modules():
        if isinstance(m, SplitLayer):
            p = name + "." if name else ""
            attrs = [a for a, _ in m.named_parameters(recurse=False)]
            missing = [p + a for a in attrs if p + a not in sd]
            if missing:
                raise ValueError("checkpoint does not fit the model: missing %s" % missing)
            m.load_full({a: sd[p + a] for a in attrs})
            done.update(p + a for a in attrs)
    rest = {k: v for k, v in sd.items() if k not in done}
    own = {k for k in model.state_dict() if k not in done}
    if set(rest) != own:
        raise ValueError("checkpoint does not fit the model: missing %s, unexpected %s"
                         % (sorted(own - set(rest)), sorted(set(rest) - own)))
    model.load_state_dict({**model.state_dict(), **rest})
