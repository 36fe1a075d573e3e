"""Building blocks for ZeRO-2/3 over torch.distributed collectives (issue 22).

ZeRO (Rajbhandari et al., SC'20, sec. 5) partitions a flat buffer of n elements across
the dp ranks; stage 2 keeps on each rank only its shard of the reduced gradient, which is
a reduce-scatter. Debian's torch 1.13.1 gloo backend has no reduce_scatter (checked:
"ProcessGroupGloo does not support reduce_scatter"), so it is emulated here with an
all_reduce of the whole buffer followed by a slice: the same result, at twice the
traffic of a real reduce-scatter. Not yet wired into Job.wrap: the stages are still
refused by plan.check_supported.
"""
import torch
import torch.distributed as dist


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
