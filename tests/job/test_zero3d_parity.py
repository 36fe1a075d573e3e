"""ZeRO inside tp and pp plans, and CPU offload, through examples/train.py (issue 22, item 2):
a run stops after step STOP (--stop-after: checkpoint, exit 75) and the next resumes
under another plan from the plan-independent checkpoint (the dp shards' optimizer state
gathered from their owners, tp slices gathered, stages merged); every step's loss must
follow a never-reconfigured one-process run within 1e-4 relative. Pairs: zero=2 dp2 ->
tp2; dp2 tp2 pp2 zero=1 (3D, 8 processes) -> dp2; zero=2 dp2 pp2 (4) -> zero=1 dp4 tp2
(8); offload=0 -> offload=1 (with tp2). Model: 4 blocks, global batch 8, 5 steps; ~33 s
on 2 cores (total time printed)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import parity_util as pu  # noqa: E402

PAIRS = [("dp=2,mb=4,zero=2", "tp=2,mb=8"),
         ("dp=2,tp=2,pp=2,mb=2,ga=2,zero=1", "dp=2,mb=4"),
         ("dp=2,pp=2,mb=2,ga=2,zero=2", "dp=4,tp=2,mb=2,zero=1"),
         ("dp=2,mb=4,offload=0", "dp=2,tp=2,mb=4,offload=1")]

if __name__ == "__main__":
    sys.exit(pu.train_pairs(PAIRS))
