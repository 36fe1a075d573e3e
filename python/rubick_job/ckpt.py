"""Checkpoints a run publishes and the next run resumes from, whatever its plan.

Invariants:
- run N writes only RUBICK_CKPT_DIR/run-N/ckpt.pt, then renames a `latest` file naming
  run-N into place: a reader sees the old checkpoint or the new one, never half of one;
- a run whose fence (RUBICK_FENCE_FILE, written by rubickd) names a newer run is a stale
  copy on a lost node: it never publishes, so it cannot overwrite a newer checkpoint;
- a checkpoint holds the whole model and the full optimizer state, indexed like
  model.parameters(), so that any plan can resume from it (ZeRO-1 consolidates first,
  pipeline stages write parts that merge_parts joins).
"""
import os

import torch


def fenced(fence_file, run):
    """Whether a newer run of this job exists (RUBICK_FENCE_FILE holds the current run)."""
    if not fence_file:
        return False
    try:
        with open(fence_file) as f:
            return int(f.read().strip() or 0) > int(run)
    except (OSError, ValueError):
        return False  # not written yet (an older rubickd): nothing to compare with


def latest(ckpt_dir):
    """The published checkpoint's path: what `latest` names, else a plain ckpt.pt (the
    older layout), else None."""
    try:
        with open(os.path.join(ckpt_dir, "latest")) as f:
            name = f.read().strip()
        path = os.path.join(ckpt_dir, name, "ckpt.pt")
        if name.startswith("run-") and os.path.exists(path):
            return path
    except OSError:
        pass
    old = os.path.join(ckpt_dir, "ckpt.pt")
    return old if os.path.exists(old) else None


def publish(ckpt_dir, run, fence_file, state):
    """Write run `run`'s checkpoint in its own folder, then point `latest` at it by an
    atomic rename, unless a newer run exists (fenced) or `latest` already names a newer
    run. Returns whether it was published."""
    if fenced(fence_file, run):
        return False
    mine = os.path.join(ckpt_dir, "run-%s" % run)
    os.makedirs(mine, exist_ok=True)
    tmp = os.path.join(mine, "ckpt.pt.tmp")
    torch.save(state, tmp)
    os.replace(tmp, os.path.join(mine, "ckpt.pt"))
    try:
        with open(os.path.join(ckpt_dir, "latest")) as f:
            cur = f.read().strip()
        if cur.startswith("run-") and int(cur[4:]) > int(run):
            return False
    except (OSError, ValueError):
        pass
    if fenced(fence_file, run):
        return False
    ptr = os.path.join(ckpt_dir, "latest.tmp-%s" % run)
    with open(ptr, "w") as f:
        f.write("run-%s\n" % run)
        f.flush()
        os.fsync(f.fileno())
    os.replace(ptr, os.path.join(ckpt_dir, "latest"))
    return True


def merge_parts(names, owner, parts):
    """The full (model, optimizer) state from pipeline stages' parts: each parameter and
    its optimizer state from the stage `owner[i]` that owns parameter i (names[i]), so
    that any plan can resume from it. Buffers come from stage 0 (every stage holds them)."""
    model = dict(parts[0]["model"])
    opt = {"param_groups": parts[0]["opt"]["param_groups"], "state": {}}
    for i, (name, o) in enumerate(zip(names, owner)):
        model[name] = parts[o]["model"][name]
        if i in parts[o]["opt"]["state"]:
            opt["state"][i] = parts[o]["opt"]["state"][i]
    return model, opt
