"""ZeRO-1 and ZeRO-2 inside tp and pp plans, and CPU offload of the optimizer step (issue 22).

Under tp or pp a rank holds its stage's parameters, cut to its tp slices; the ranks that
hold the same slices are its stage's dp group (dist.Groups3D: one per (stage, tp_rank)).
ZeRO (Rajbhandari et al., SC'20, sec. 5) partitions over that group. Here the unit is
the whole parameter, as torch's ZeroRedundancyOptimizer does: each parameter of the
stage has one owner in the dp group (owners(): greedy by size, so the state is split
about evenly). P_os (zero=1): only the owner keeps and steps the parameter's optimizer
state, then broadcasts the updated parameter to the group. P_g (zero=2): the gradient is
reduced to its owner only (dist.reduce, not all_reduce) and the others drop theirs.
ZeRO-3 (parameters partitioned too) is not done here and is refused at start (plan.py).

Offloaded is ZeRO-Offload's optimizer side (Ren et al., USENIX ATC'21, sec. 4): an fp32
master copy of every parameter in host memory, the optimizer's state and step on it,
and the parameters copied back from the masters after the step. On CUDA the masters
and the state live on the CPU while the parameters stay on the GPU. On a CPU-only
machine both are in host memory already; what remains is the separate fp32 master copy
stepped apart from the parameters, which is what this is.
"""
import torch
import torch.distributed as dist


def owners(sizes, world):
    """Owner rank (0..world-1) of each parameter of `sizes` elements: the largest first,
    each to the least loaded rank (ties: lowest rank), so every rank computes the same."""
    load, own = [0] * world, [0] * len(sizes)
    for i in sorted(range(len(sizes)), key=lambda i: (-sizes[i], i)):
        r = min(range(world), key=lambda r: (load[r], r))
        own[i], load[r] = r, load[r] + sizes[i]
    return own


class DpShardedOptimizer:
    """ZeRO stage 1 or 2 over `mine` (this stage's parameters) for the stage's dp
    `group`, around `opt`, the user's optimizer built over all of `params`
    (model.parameters()). state_dict() after consolidate_state_dict() (collective over
    the group) is `opt`'s full state for `mine`, indexed like params, so checkpoints do
    not depend on the plan. step() averages the gradients over the group itself."""

    def __init__(self, params, mine, opt, stage, group, ranks):
        if stage not in (1, 2):
            raise ValueError("DpShardedOptimizer: stage=%d, need 1 or 2" % stage)
        self.params, self.opt, self.stage, self.group = list(params), opt, stage, group
        self.world, self.rank = dist.get_world_size(group), dist.get_rank(group)
        self.ranks = ranks  # global ranks of the group, by group rank (for reduce/broadcast)
        ids = {id(p) for p in mine}
        self.mine = [i for i, p in enumerate(self.params) if id(p) in ids]
        own = owners([self.params[i].numel() for i in self.mine], self.world)
        self.owner = dict(zip(self.mine, own))
        self.param_groups = opt.param_groups
        self._full = None

    def zero_grad(self, set_to_none=True):
        self.opt.zero_grad(set_to_none=set_to_none)

    def step(self):
        for i in self.mine:
            p, o = self.params[i], self.owner[i]
            if p.grad is None:
                p.grad = torch.zeros_like(p)
            if self.stage == 2:
                dist.reduce(p.grad, self.ranks[o], group=self.group)
            else:
                dist.all_reduce(p.grad, group=self.group)
            if o == self.rank:
                p.grad /= self.world
            else:
                p.grad = None  # AdamW skips a parameter without gradient: no state here
        for i, p in enumerate(self.params):  # other stages' parameters: never stepped here
            if i not in self.owner:
                p.grad = None
        self.opt.step()
        for i in self.mine:
            dist.broadcast(self.params[i].data, self.ranks[self.owner[i]], group=self.group)

    def consolidate_state_dict(self, to=0):
        """Collective over the group: every rank gets the full state of `mine` (each
        parameter's state tensors broadcast from its owner)."""
        del to
        sd = self.opt.state_dict()
        state = {}
        for i in self.mine:
            o = self.owner[i]
            st = sd["state"].get(i, {}) if o == self.rank else {}
            keys = [sorted(st)]
            dist.broadcast_object_list(keys, self.ranks[o], group=self.group)
            out = {}
            for k in keys[0]:
                v = [st.get(k)]
                if o == self.rank and torch.is_tensor(st[k]):
                    t = st[k].clone()
                    meta = [("t", tuple(t.shape), t.dtype)]
                else:
                    meta = [("v", st.get(k), None)]
                dist.broadcast_object_list(meta, self.ranks[o], group=self.group)
                kind, a, dtype = meta[0]
                if kind == "t":
                    t = t if o == self.rank else torch.empty(a, dtype=dtype)
                    dist.broadcast(t, self.ranks[o], group=self.group)
                    v = [t]
                else:
                    v = [a]
                out[k] = v[0]
            if out:
                state[i] = out
        self._full = {"state": state, "param_groups": sd["param_groups"]}

    def state_dict(self):
        if self._full is None:
            raise RuntimeError("DpShardedOptimizer.state_dict: call consolidate_state_dict() on every rank first")
        out, self._full = self._full, None
        return out

    def load_state_dict(self, full):
        """A full state (any plan's checkpoint); this rank keeps only what it owns."""
        keep = {i: s for i, s in full["state"].items() if self.owner.get(i) == self.rank}
        self.opt.load_state_dict({"state": keep, "param_groups": full["param_groups"]})
        self.param_groups = self.opt.param_groups


class Offloaded:
    """The user's optimizer `opt` (over `params`, model.parameters()) rebuilt over fp32
    master copies in host memory; step() copies the gradients to the masters, steps
    them, and copies the masters back into the parameters. Its state_dict is indexed
    like params, as `opt`'s, so checkpoints load with and without offload."""

    def __init__(self, params, opt):
        self.params = list(params)
        if len(opt.param_groups) != 1:
            raise ValueError("offload: the optimizer has %d parameter groups; offload here "
                             "takes one" % len(opt.param_groups))
        self.masters = [torch.nn.Parameter(p.detach().to("cpu", torch.float32).clone())
                        for p in self.params]
        self.inner = type(opt)(self.masters, **opt.defaults)
        self.param_groups = self.inner.param_groups

    def zero_grad(self, set_to_none=True):
        for p in self.params:
            if set_to_none:
                p.grad = None
            elif p.grad is not None:
                p.grad.zero_()

    def step(self):
        for p, m in zip(self.params, self.masters):
            m.grad = None if p.grad is None else p.grad.detach().to("cpu", torch.float32)
        self.inner.step()
        with torch.no_grad():
            for p, m in zip(self.params, self.masters):
                if m.grad is not None:
                    p.copy_(m.to(p.device, p.dtype))
                m.grad = None

    def state_dict(self):
        return self.inner.state_dict()

    def load_state_dict(self, sd):
        """The masters are re-read from the parameters, which the caller loaded first."""
        with torch.no_grad():
            for p, m in zip(self.params, self.masters):
                m.copy_(p.detach().to("cpu", torch.float32))
        self.inner.load_state_dict(sd)
        self.param_groups = self.inner.param_groups
