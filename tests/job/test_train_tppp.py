"""examples/train.py reconfigured across tp and pp (issue 22, item 2): a run stops after
step STOP (--stop-after: checkpoint, exit 75) and the next run resumes under another plan
from the plan-independent checkpoint (tp weights and AdamW state gathered, pipeline stages
merged); every step's loss must follow a never-reconfigured one-process run within 1e-4
relative. Pairs: dp2 -> tp2, tp2 -> pp4, pp2 -> dp2 tp2 pp2 (3D). Model: 4 blocks,
global batch 8, 5 steps. Up to 8 processes; ~25 s on 2 cores (total time printed)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import parity_util as pu  # noqa: E402

PAIRS = [("dp=2,mb=4", "tp=2,mb=8"), ("tp=2,mb=8", "pp=4,mb=4,ga=2"),
         ("pp=2,mb=2,ga=4", "dp=2,tp=2,pp=2,mb=2,ga=2")]

if __name__ == "__main__":
    sys.exit(pu.train_pairs(PAIRS))
