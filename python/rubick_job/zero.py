"""Building blocks for ZeRO-2/3 over torch.distributed collectives (issue 22).

ZeRO (Rajbhandari et al., SC'20, sec. 5) partitions a flat buffer of n elements across
the dp ranks; stage 2 keeps on each rank only its shard of the reduced gradient, which is
a reduce-scatter. Debian's torch 1.13.1 gloo backend has no reduce_scatter (checked:
"ProcessGroupGloo does not support reduce_scatter"), so it is emulated here with an
all_reduce of the whole buffer followed by a slice: the same result, at twice the
traffic of a real reduce-scatter.

ShardedOptimizer is ZeRO-2 and ZeRO-3 for data parallelism (pp=1, tp=1), used by Job.wrap:
the model's parameters are viewed as one flat buffer, each dp rank's optimizer (the
user's class and hyper-parameters) holds and steps only its shard of it (so its state,
e.g. Adam's moments, is 1/dp of the whole: ZeRO's P_os), gradients are reduce-scattered
to the shard's owner (P_g), and the updated shards are all-gathered back into the
parameters. Under ZeRO-3 (P_p) the full parameters exist only during a step: they are
gathered at its start (gather_params) and freed after the update, so between steps a rank
holds only its shard. Real ZeRO-3 also frees each layer's parameters inside the forward
and backward passes; this one does not, so its peak memory is that of ZeRO-2.
"""
import torch
import torch.distributed as dist

from .zero3d import Offloaded


def shard_bounds(numel, world, rank):
    """[lo, hi) of rank's shard of a flat buffer of numel elements split over world ranks:
    the first numel % world ranks hold one element more, so every element has one owner."""
    if world < 1 or not 0 <= rank < world or numel < 0:
        raise ValueError("shard_bounds: numel=%d world=%d rank=%d: need numel>=0, world>=1, "
                         "0<=rank<world" % (numel, world, rank))
    base, extra = divmod(numel, world)
    lo = rank * base + min(rank, extra)
    return lo, lo + base + (1 if rank < extra else 0)


def reduce_scatter_flat(flat, group=None):
    """Sum flat (a 1-D tensor) over the group's ranks and return this rank's shard of the
    sum (a new tensor); flat itself is left summed too (all_reduce works in place)."""
    if flat.dim() != 1:
        raise ValueError("reduce_scatter_flat: flat has %d dims, need 1" % flat.dim())
    world, rank = dist.get_world_size(group), dist.get_rank(group)
    dist.all_reduce(flat, group=group)
    lo, hi = shard_bounds(flat.numel(), world, rank)
    return flat[lo:hi].clone()


def all_gather_flat(shard, numel, group=None):
    """The whole flat buffer of numel elements from each rank's shard (shard_bounds):
    an all_reduce of a zero-padded buffer, which gloo has, where all_gather would need
    equal-sized shards."""
    world, rank = dist.get_world_size(group), dist.get_rank(group)
    lo, hi = shard_bounds(numel, world, rank)
    if shard.numel() != hi - lo:
        raise ValueError("all_gather_flat: shard has %d elements, rank %d owns %d"
                         % (shard.numel(), rank, hi - lo))
    full = torch.zeros(numel, dtype=shard.dtype)
    full[lo:hi] = shard
    dist.all_reduce(full, group=group)
    return full


class ShardedOptimizer:
    """ZeRO stage 2 or 3 over `params` (a list, model.parameters() order) for a dp group:
    `opt` is the user's optimizer, built over those parameters; its class and defaults
    are rebuilt over this rank's flat shard. Its state_dict (after the collective
    consolidate_state_dict) is the full, unsharded state of `opt`'s class, indexed like
    params, so a checkpoint loads under any plan (ZeRO or not)."""

    def __init__(self, params, opt, stage, group=None, offload=False):
        if stage not in (2, 3):
            raise ValueError("ShardedOptimizer: stage=%d, need 2 or 3" % stage)
        if len(opt.param_groups) != 1:
            raise ValueError("ShardedOptimizer: the optimizer has %d parameter groups; "
                             "ZeRO-2/3 here shards one group only" % len(opt.param_groups))
        self.params, self.stage, self.group = list(params), stage, group
        dtypes = {p.dtype for p in self.params}
        if len(dtypes) != 1:
            raise ValueError("ShardedOptimizer: parameters of %d dtypes; one flat buffer "
                             "needs one dtype" % len(dtypes))
        self.shapes = [p.shape for p in self.params]
        self.sizes = [p.numel() for p in self.params]
        self.numel = sum(self.sizes)
        self.world, self.rank = dist.get_world_size(group), dist.get_rank(group)
        self.lo, self.hi = shard_bounds(self.numel, self.world, self.rank)
        self.shard = torch.nn.Parameter(self._flat_params()[self.lo:self.hi].clone())
        self.inner = type(opt)([self.shard], **opt.defaults)
        if offload:  # ZeRO-Offload: this rank's shard stepped in host memory (zero3d.py)
            self.inner = Offloaded([self.shard], self.inner)
        self.param_groups = self.inner.param_groups
        self._full_state = None

    def _flat_params(self):
        return torch.cat([p.detach().reshape(-1) for p in self.params])

    def _set_params(self, full):
        off = 0
        for p, shape, n in zip(self.params, self.shapes, self.sizes):
            p.data = full[off:off + n].view(shape)
            off += n

    def gather_params(self):
        """Make the full parameters (ZeRO-3: at the start of a step, and before a
        checkpoint); under ZeRO-2 they are always full."""
        if self.stage == 3:
            self._set_params(all_gather_flat(self.shard.detach(), self.numel, self.group))

    gather_all = gather_params

    def free_params(self):
        """ZeRO-3: drop the full parameters, keeping only this rank's shard."""
        if self.stage != 3:
            return
        for p in self.params:
            p.data = torch.empty(0, dtype=p.dtype)

    def zero_grad(self, set_to_none=True):
        for p in self.params:
            if set_to_none:
                p.grad = None
            elif p.grad is not None:
                p.grad.zero_()
        self.shard.grad = None

    def step(self):
        """Reduce-scatter the gradients (the mean over dp, as DDP gives), step this
        rank's shard, all-gather the updated shards (ZeRO-3: free them instead)."""
        grads = torch.cat([(p.grad if p.grad is not None else torch.zeros_like(p)).reshape(-1)
                           for p in self.params])
        g = reduce_scatter_flat(grads, self.group)
        self.shard.grad = g.div_(self.world)
        self.inner.step()
        for p in self.params:
            p.grad = None
        if self.stage == 3:
            self.free_params()
        else:
            self._set_params(all_gather_flat(self.shard.detach(), self.numel, self.group))

    def consolidate_state_dict(self, to=0):
        """Collective: gather the full optimizer state (and, under ZeRO-3, the full
        parameters, so model.state_dict() is whole) on every rank; `to` is accepted for
        ZeroRedundancyOptimizer's signature."""
        del to
        self.gather_params()
        mine = self.inner.state_dict()
        st = mine["state"].get(0, {})
        keys = sorted(st)
        per = [dict() for _ in self.params]
        for k in keys:
            v = st[k]
            if torch.is_tensor(v) and v.dim() == 1 and v.numel() == self.hi - self.lo:
                full, off = all_gather_flat(v.to(self.shard.dtype), self.numel, self.group), 0
                for i, (shape, n) in enumerate(zip(self.shapes, self.sizes)):
                    per[i][k] = full[off:off + n].view(shape).clone()
                    off += n
            else:  # a scalar such as Adam's step count: alike on every rank
                for i in range(len(self.params)):
                    per[i][k] = v.clone() if torch.is_tensor(v) else v
        group = dict(mine["param_groups"][0])
        group["params"] = list(range(len(self.params)))
        self._full_state = {"state": {i: s for i, s in enumerate(per) if s},
                            "param_groups": [group]}

    def state_dict(self):
        if self._full_state is None:
            raise RuntimeError("ShardedOptimizer.state_dict: call consolidate_state_dict() "
                               "on every rank first")
        out, self._full_state = self._full_state, None
        return out

    def load_state_dict(self, full):
        """Load a full, unsharded state (any plan's checkpoint): this rank keeps its
        shard of it. The shard of the parameters is re-read from the model, which the
        caller has loaded first."""
        self.shard.data = self._flat_params()[self.lo:self.hi].clone()
        groups = full["param_groups"]
        if len(groups) != 1 or len(groups[0]["params"]) != len(self.params):
            raise ValueError("optimizer state has %d groups of %s parameters; the model has "
                             "one group of %d" % (len(groups), [len(g["params"]) for g in groups],
                                                  len(self.params)))
        ids = groups[0]["params"]
        states = [full["state"].get(i, {}) for i in ids]
        mine = {}
        for k in sorted(states[0]) if states and states[0] else []:
            vals = [s[k] for s in states]
            if torch.is_tensor(vals[0]) and vals[0].dim() > 0:
                flat = torch.cat([v.reshape(-1) for v in vals])
                if flat.numel() != self.numel:
                    raise ValueError("optimizer state %r has %d elements; the model has %d"
                                     % (k, flat.numel(), self.numel))
                mine[k] = flat[self.lo:self.hi].clone()
            else:
                mine[k] = vals[0]
        group = dict(groups[0])
        group["params"] = [0]
        self.inner.load_state_dict({"state": {0: mine} if mine else {}, "param_groups": [group]})
        self.param_groups = self.inner.param_groups
