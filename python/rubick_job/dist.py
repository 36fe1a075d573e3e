"""Where this node's ranks sit in the job, and the process groups a plan needs.

rubickd starts the job once per node (docs/slurm.md): on several nodes this node runs
ranks RUBICK_RANK_BASE .. + LOCAL_WORLD_SIZE - 1 of WORLD_SIZE, meeting at
MASTER_ADDR:MASTER_PORT; on one node it runs all of them and they meet through a file
store, not a TCP port: a free port found by binding port 0 can be taken before rank 0
listens on it (seen in CI: "Address already in use", and the run hung).
Ranks are stage * dp + replica, so a stage's replicas are consecutive ranks.
"""
import os
import socket

import torch.distributed as dist

from .plan import PlanError


class Topology:
    """Ranks of this node: base .. base + local - 1 of world, meeting at init (a URL)."""

    def __init__(self, world, base, local, init, nnodes=1, node=""):
        self.world, self.base, self.local, self.init = world, base, local, init
        self.nnodes, self.node = nnodes, node

    @classmethod
    def from_env(cls, env, plan, where, rdzv_dir, run):
        world = plan.world
        nnodes = int(env.get("RUBICK_NNODES", "1") or 1)
        if nnodes > 1:
            try:
                w, base, local = (int(env[k]) for k in ("WORLD_SIZE", "RUBICK_RANK_BASE", "LOCAL_WORLD_SIZE"))
                init = "tcp://%s:%s" % (env["MASTER_ADDR"], env["MASTER_PORT"])
            except (KeyError, ValueError) as e:
                raise PlanError("RUBICK_NNODES=%d: %s missing or not an integer" % (nnodes, e))
            node = "%s %s" % (env.get("NODE_RANK", "?"), env.get("SLURMD_NODENAME", socket.gethostname()))
            if w != world:
                raise PlanError("%s: dp*pp=%d, but the allocation runs %d ranks (WORLD_SIZE)" % (where, world, w))
            return cls(world, base, local, init, nnodes, node)
        # one file per launch: a killed run's stays behind and must not be reused
        rdzv = os.path.join(rdzv_dir, ".rdzv-run-%s-%d" % (run, os.getpid()))
        if os.path.exists(rdzv):
            os.unlink(rdzv)
        return cls(world, 0, world, "file://" + rdzv)


class Groups:
    """This rank's place in a dp x pp plan: stage, replica, and the group of its stage's
    replicas (None when dp == 1: nothing to average)."""

    def __init__(self, rank, dp, pp):
        self.stage, self.replica = divmod(rank, dp)
        self.stage_group = None
        if pp > 1:
            # every rank creates every group, in the same order: new_group is collective
            groups = [dist.new_group(list(range(s * dp, (s + 1) * dp))) if dp > 1 else None
                      for s in range(pp)]
            self.stage_group = groups[self.stage]


def coords(rank, dp, tp, pp):
    """(stage, replica, tp_rank) of a rank in the 3D layout
    rank = (stage * dp + replica) * tp + tp_rank: tp innermost, as Megatron-LM places it
    (Narayanan et al. 2021, section 3), so a tp group's ranks are consecutive and, on a
    node, share its fastest links; with tp = 1 it is the stage * dp + replica above."""
    if not 0 <= rank < dp * tp * pp:
        raise PlanError("rank %d outside dp*tp*pp=%d" % (rank, dp * tp * pp))
    rest, tp_rank = divmod(rank, tp)
    stage, replica = divmod(rest, dp)
    return stage, replica, tp_rank


def layout(dp, tp, pp):
    """The rank lists of every group of a dp x tp x pp plan, in the order every rank
    must create them (new_group is collective): tp groups by (stage, replica), then dp
    groups by (stage, tp_rank); pipelines by (replica, tp_rank) need no group, their
    stages talk by send/recv to the listed global ranks."""
    at = lambda s, r, t: (s * dp + r) * tp + t
    tp_groups = [[at(s, r, t) for t in range(tp)] for s in range(pp) for r in range(dp)]
    dp_groups = [[at(s, r, t) for r in range(dp)] for s in range(pp) for t in range(tp)]
    pipes = [[at(s, r, t) for s in range(pp)] for r in range(dp) for t in range(tp)]
    return tp_groups, dp_groups, pipes


class Groups3D:
    """This rank's place in a dp x tp x pp plan: stage, replica, tp_rank; tp_group and
    dp_group (None where that dimension is 1); pipe, the global ranks of its pipeline's
    stages. Collective: every rank of the job constructs it with the same plan."""

    def __init__(self, rank, dp, tp, pp):
        self.stage, self.replica, self.tp_rank = coords(rank, dp, tp, pp)
        tp_groups, dp_groups, pipes = layout(dp, tp, pp)
        self.tp_group = self.dp_group = None
        for ranks in tp_groups:  # all tp groups first, then all dp groups, on every rank
            g = dist.new_group(ranks) if tp > 1 else None
            if rank in ranks:
                self.tp_group = g
        for ranks in dp_groups:
            g = dist.new_group(ranks) if dp > 1 else None
            if rank in ranks:
                self.dp_group = g
        self.pipe = next(p for p in pipes if rank in p)
