"""ZeRO-3 under tp and pp, and offload with ZeRO, through examples/train.py (issue 22,
item 2): a run stops after step 2 (--stop-after: checkpoint, exit 75) under plan A and
the next resumes under plan B from the plan-independent checkpoint (ZeRO-3's shards of
the parameters and of AdamW's state gathered, tp slices gathered, stages merged); every
step's loss must follow a never-reconfigured one-process run within 1e-4 relative.
Pairs: ZeRO-0 -> ZeRO-3 under dp2 tp2; ZeRO-3 dp2 tp2 pp2 (8 processes) -> dp2;
ZeRO-2 -> ZeRO-3 under dp2 pp2; offload + ZeRO-3 under dp2 tp2 -> plain dp1; offload +
ZeRO-1 dp2 -> offload + ZeRO-2 dp2 pp2. Model: 4 blocks, global batch 8, 5 steps
(total time printed)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import parity_util as pu  # noqa: E402

PAIRS = [("dp=2,tp=2,mb=4,zero=0", "dp=2,tp=2,mb=4,zero=3"),
         ("dp=2,tp=2,pp=2,mb=2,ga=2,zero=3", "dp=2,mb=4"),
         ("dp=2,pp=2,mb=2,ga=2,zero=2", "dp=2,pp=2,mb=4,zero=3"),
         ("dp=2,tp=2,mb=4,zero=3,offload=1", "dp=1,mb=8"),
         ("dp=2,mb=4,zero=1,offload=1", "dp=2,pp=2,mb=2,ga=2,zero=2,offload=1")]

if __name__ == "__main__":
    if len(sys.argv) > 1:  # one pair by its index (by hand)
        PAIRS = [PAIRS[int(a)] for a in sys.argv[1:]]
    sys.exit(pu.train_pairs(PAIRS))
