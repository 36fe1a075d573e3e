"""ZeRO-3 for any dp x tp x pp plan, layer by layer (issue 22).

ZeRO stage 3 (Rajbhandari et al., SC'20, sec. 5.3) partitions the parameters too: each
rank of a dp group keeps 1/dp of every parameter it would hold (under tp its tp slice,
under pp its stage's), and a layer's full parameters exist only while the layer runs.
Here a "layer" is a module that holds parameters itself (nn.Linear, the tp layers,
LayerNorm, a convolution, ...):

- before its forward (a forward pre-hook) its parameters are all-gathered from the
  shards, and freed again after it (a forward hook);
- the forward hook passes the layer's outputs through an identity autograd function
  whose backward gathers the parameters again just before the layer's own backward
  needs them (DeepSpeed's pre-backward hook: torch 1.13 has no module backward
  pre-hook);
- when a parameter's gradient has been accumulated (a hook on its AccumulateGrad node,
  the one DDP uses), it is reduce-scattered to the owners of its shards, added to this
  rank's shard gradient, and the parameter is freed;
- the optimizer (the script's class and hyper-parameters) steps the shards only, so its
  state is 1/dp of the stage's (P_os), as are the gradients it keeps (P_g).

Freeing resizes the parameter's storage to zero, as FSDP does, rather than swapping
`.data`: autograd saves views of a weight (F.linear saves weight.t()), and only freeing
the storage itself releases them; gathering resizes it back and fills it in place, so
the saved views read the gathered values in backward.

Parameters that the model holds directly (not in a submodule, e.g. TinyLM's position
table, which examples/train.py uses outside any module's forward) have no layer around
them: like DeepSpeed's persistent parameters they stay whole, and are gathered again
after every update (as under ZeRO-2); their optimizer state is sharded all the same. gloo has neither reduce_scatter nor an all_gather of unequal shards, so both are
all_reduces (zero.py): the same numbers, at twice a real reduce-scatter's traffic. The
all_gather is exact (each element is summed with zeros only).
"""
import torch
import torch.distributed as dist

from .zero import shard_bounds
from .zero3d import Offloaded


def _free(p):
    p.data.storage().resize_(0)


def _is_free(p):
    return p.data.storage().size() == 0


class _PreBackward(torch.autograd.Function):
    """Identity forward; backward first gathers `layer`'s parameters (ZeRO-3 needs them
    again for the layer's backward, which runs right after this node)."""

    @staticmethod
    def forward(ctx, x, owner, layer):
        ctx.owner, ctx.layer = owner, layer
        return x

    @staticmethod
    def backward(ctx, grad):
        ctx.owner._before_backward(ctx.layer)
        return grad, None, None


class Zero3Optimizer:
    """ZeRO-3 over `mine` (this rank's parameters to shard: all of them, or its stage's
    under pp), a subset of `params` (model.parameters() order), for the dp `group`
    (None: the default group). `opt` is the script's optimizer, rebuilt over the shards;
    with `offload` its state and step are Offloaded (zero3d.py). Installs hooks on
    `model`'s layers. state_dict() after consolidate_state_dict() (collective over the
    group) is `opt`'s full state for `mine`, indexed like params, so a checkpoint does not
    depend on the plan."""

    def __init__(self, model, params, mine, opt, group=None, offload=False):
        if len(opt.param_groups) != 1:
            raise ValueError("ZeRO-3: the optimizer has %d parameter groups; ZeRO-3 here "
                             "shards one group only" % len(opt.param_groups))
        self.params, self.group = list(params), group
        self.world, self.rank = dist.get_world_size(group), dist.get_rank(group)
        ids = {id(p) for p in mine}
        self.mine = [i for i, p in enumerate(self.params) if id(p) in ids]
        self.index = {id(self.params[i]): i for i in self.mine}
        self.shapes = {i: self.params[i].shape for i in self.mine}
        self.bounds = {i: shard_bounds(self.params[i].numel(), self.world, self.rank) for i in self.mine}
        for i in self.mine:  # each parameter its own storage of exactly its size (freed alone)
            p = self.params[i]
            p.data = p.detach().clone(memory_format=torch.contiguous_format)
        self.shards = [torch.nn.Parameter(self._slice(i, self.params[i])) for i in self.mine]
        inner = type(opt)(self.shards, **opt.defaults)
        self.inner = Offloaded(self.shards, inner) if offload else inner
        self.param_groups = self.inner.param_groups
        self.layers, self.persistent, self._in_backward = {}, [], set()
        held = set()
        for m in model.modules():
            own = [self.index[id(p)] for p in m.parameters(recurse=False) if id(p) in self.index]
            if m is model or not own:
                continue
            self.layers[id(m)] = own
            held.update(own)
            m.register_forward_pre_hook(self._pre_forward)
            m.register_forward_hook(self._post_forward)
        self.persistent = [i for i in self.mine if i not in held]
        self._acc = []  # the AccumulateGrad nodes, kept alive so that their hooks stay
        for i in self.mine:
            p = self.params[i]
            if not p.requires_grad:  # frozen: sharded, never stepped
                continue
            acc = p.expand_as(p).grad_fn.next_functions[0][0]
            acc.register_hook(self._grad_hook(i))
            self._acc.append(acc)
        self._full = None

    # --- shards and gathering --------------------------------------------------------

    def _slice(self, i, t):
        lo, hi = self.bounds[i]
        return t.detach().reshape(-1)[lo:hi].clone()

    def _gather(self, idx):
        """Make the full parameters idx (those freed) from every rank's shards: one
        all_reduce of a zero-padded buffer for all of them."""
        idx = [i for i in idx if _is_free(self.params[i])]
        if not idx:
            return
        sizes = [self.shapes[i].numel() for i in idx]
        buf = torch.zeros(sum(sizes), dtype=self.params[idx[0]].dtype)
        off = 0
        for i, n in zip(idx, sizes):
            lo, hi = self.bounds[i]
            buf[off + lo:off + hi] = self.shards[self.mine.index(i)].detach()
            off += n
        dist.all_reduce(buf, group=self.group)
        off = 0
        for i, n in zip(idx, sizes):
            p = self.params[i]
            p.data.storage().resize_(n)
            p.data.copy_(buf[off:off + n].view(self.shapes[i]))
            off += n

    def gather_params(self):
        """The parameters no layer gathers (held by the model itself), were they freed;
        they stay whole between steps."""
        self._gather(self.persistent)

    def gather_all(self):
        """Every full parameter (before a checkpoint, and when training ends)."""
        self._gather(self.mine)

    def free_params(self):
        """Free every layer's full parameters: between steps a rank holds its shards
        (and the model's own, persistent, parameters)."""
        held = set(self.persistent)
        for i in self.mine:
            if i not in held:
                _free(self.params[i])
        self._in_backward.clear()

    def held_numel(self):
        """Elements of full parameters this rank holds now (tests: a layer's own while it
        runs, none between steps, but for the persistent ones)."""
        return sum(self.params[i].data.storage().size() for i in self.mine)

    # --- hooks -----------------------------------------------------------------------

    def _pre_forward(self, module, inputs):
        self._gather(self.layers[id(module)])

    def _post_forward(self, module, inputs, output):
        key = id(module)
        if key not in self._in_backward:  # a recompute (gc) inside backward keeps them
            for i in self.layers[key]:
                _free(self.params[i])
        if not torch.is_grad_enabled():
            return output
        wrap = lambda t: _PreBackward.apply(t, self, key) if torch.is_tensor(t) and t.requires_grad else t  # noqa: E731
        if isinstance(output, tuple):
            return tuple(wrap(t) for t in output)
        return wrap(output)

    def _before_backward(self, key):
        self._in_backward.add(key)
        self._gather(self.layers[key])

    def _grad_hook(self, i):
        def hook(grad_inputs, grad_outputs):
            p = self.params[i]
            g, p.grad = p.grad, None
            if g is None:
                return
            g = g.detach().reshape(-1).clone()
            dist.all_reduce(g, group=self.group)  # reduce-scatter, emulated (gloo)
            lo, hi = self.bounds[i]
            s = self.shards[self.mine.index(i)]
            s.grad = g[lo:hi].clone() if s.grad is None else s.grad + g[lo:hi]
            if i not in self.persistent:  # this backward is done with it
                _free(p)
                for key, own in self.layers.items():
                    if i in own and all(_is_free(self.params[j]) for j in own):
                        self._in_backward.discard(key)
        return hook

    # --- optimizer -------------------------------------------------------------------

    def zero_grad(self, set_to_none=True):
        for p in self.params:
            p.grad = None
        for s in self.shards:
            s.grad = None

    def step(self):
        """Step the shards with the mean over dp (as DDP gives) of their gradients,
        reduce-scattered in backward; the layers' full parameters are freed after, the
        persistent ones gathered again from their updated shards."""
        for s in self.shards:
            if s.grad is not None:
                s.grad.div_(self.world)
        self.inner.step()
        for s in self.shards:
            s.grad = None
        self.free_params()
        for i in self.persistent:
            _free(self.params[i])
        self._gather(self.persistent)

    def consolidate_state_dict(self, to=0):
        """Collective over the group: the full parameters (so that model.state_dict() is
        whole) and every rank's full optimizer state for `mine`. `to` is accepted for
        ZeroRedundancyOptimizer's signature."""
        del to
        self.gather_all()
        sd = self.inner.state_dict()
        state = {}
        for j, i in enumerate(self.mine):
            st = sd["state"].get(j, {})
            n, lo, hi = self.shapes[i].numel(), *self.bounds[i]
            out = {}
            for k in sorted(st):
                v = st[k]
                if torch.is_tensor(v) and v.dim() == 1 and v.numel() == hi - lo:
                    full = torch.zeros(n, dtype=v.dtype)
                    full[lo:hi] = v
                    dist.all_reduce(full, group=self.group)
                    v = full.view(self.shapes[i])
                else:  # a scalar such as Adam's step count: alike on every rank
                    v = v.clone() if torch.is_tensor(v) else v
                out[k] = v
            if out:
                state[i] = out
        group = dict(sd["param_groups"][0])
        group["params"] = list(range(len(self.params)))
        self._full = {"state": state, "param_groups": [group]}

    def state_dict(self):
        if self._full is None:
            raise RuntimeError("Zero3Optimizer.state_dict: call consolidate_state_dict() on every rank first")
        out, self._full = self._full, None
        return out

    def load_state_dict(self, full):
        """A full state (any plan's checkpoint, cut to this rank's tp slices): this rank
        keeps its shard of each of its parameters' state. The shards of the parameters are
        re-read from the model, which the caller has loaded first (parameters full)."""
        groups = full["param_groups"]
        if len(groups) != 1:
            raise ValueError("optimizer state has %d parameter groups; ZeRO-3 here takes one" % len(groups))
        for j, i in enumerate(self.mine):
            self.shards[j].data = self._slice(i, self.params[i])
        state = {}
        for j, i in enumerate(self.mine):
            out = {}
            for k, v in full["state"].get(i, {}).items():
                if torch.is_tensor(v) and v.dim() > 0:
                    if v.numel() != self.shapes[i].numel():
                        raise ValueError("optimizer state %r of parameter %d has %d elements; the "
                                         "parameter has %d" % (k, i, v.numel(), self.shapes[i].numel()))
                    v = self._slice(i, v)
                out[k] = v
            if out:
                state[j] = out
        group = dict(groups[0])
        group["params"] = list(range(len(self.shards)))
        self.inner.load_state_dict({"state": state, "param_groups": [group]})
        self.param_groups = self.inner.param_groups
