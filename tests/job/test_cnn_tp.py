"""Channel-parallel tp in examples/train_cnn.py (issue 22): column-parallel convolutions
(output channels split, GroupNorm over each rank's whole groups), a row-parallel
convolution and head (input channels split, partial results all-reduced). A run stops
after step 2 under plan A and resumes under plan B from the plan-independent checkpoint
(tp slices of weights and AdamW state gathered); every step's loss must follow a
never-reconfigured one-process run within 1e-4 relative. Pairs: ZeRO-2 + offload dp2 ->
dp2 tp2 (ga 2); tp4 with gc -> ZeRO-3 + offload under dp2 tp2. Also: tp=3, which does
not divide the 4 GroupNorm groups, exits 78 naming tp. 5 steps, global batch 8 (total time printed)."""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import parity_util as pu  # noqa: E402

PAIRS = [("dp=2,mb=4,zero=2,offload=1", "dp=2,tp=2,mb=2,ga=2"),
         ("tp=4,mb=4,ga=2,gc=1", "dp=2,tp=2,mb=4,zero=3,offload=1")]


def refused():
    """tp=3 exits 78 before any process starts, naming the dimension and the groups."""
    with tempfile.TemporaryDirectory() as d:
        try:
            out = pu.run_script("train_cnn.py", d, "tp=3,mb=8", 78, 5, 8)
        except AssertionError as e:
            print("FAIL: %s" % e)
            return 1
    if "tp=3 does not divide the model's 4 channel groups" not in out:
        print("FAIL: tp=3 refused without naming tp and the groups: %r" % out)
        return 1
    print("tp=3 refused (exit 78): %s" % out.strip())
    return 0


if __name__ == "__main__":
    rc = pu.train_pairs(PAIRS, script="train_cnn.py", args=())
    sys.exit(rc if rc else refused())
