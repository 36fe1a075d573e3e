"""Which samples each step consumes, and which of them are this rank's.

The accuracy claim (a reconfigured run follows an unreconfigured one step for step)
holds only if step s uses the same samples in the same order under every plan. So the
order depends on the step, the global batch and the data set size only: epoch-seeded
permutations, cut into global batches; each data-parallel replica takes a contiguous
slice and cuts it into `ga` micro-batches of `mb`. Pure: no process group needed.
"""
import torch

SEED = 10007


def batch_indices(step, global_batch, n_samples):
    """Sample ids of step `step` (0-based): the same whatever the plan."""
    per_epoch = n_samples // global_batch
    if per_epoch < 1:
        raise ValueError("global batch %d is more than the %d samples" % (global_batch, n_samples))
    epoch, k = divmod(step, per_epoch)
    perm = torch.randperm(n_samples, generator=torch.Generator().manual_seed(SEED + epoch))
    return perm[k * global_batch:(k + 1) * global_batch]


def micro_batches(idx, replica, mb, ga):
    """Replica `replica`'s `ga` micro-batches of `mb` ids each, from a step's ids."""
    mine = idx[replica * mb * ga:(replica + 1) * mb * ga]
    return [mine[m * mb:(m + 1) * mb] for m in range(ga)]
