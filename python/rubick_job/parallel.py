"""tp and pp inside Job: plan-independent checkpoints of a model built from tp.py's
layers, and the optimizer state that goes with them.

A checkpoint must load under any plan (docs/job-library.md), so under tp it holds the
full weights (tp.full_state) and the full optimizer state: every per-parameter state
tensor shaped like its parameter (AdamW's exp_avg, exp_avg_sq) is gathered along the
dimension the parameter is split on (Megatron-LM, Shoeybi et al. 2019, section 3:
column-parallel weights and biases by output rows, row-parallel weights by input
columns; the convolutions and GroupNorm of tp.py likewise by channels). The result has the tp=1 model's layout, so dp-only runs read it unchanged and
a tp run slices it back. Parameter indexes are model.parameters() order, the same at
every tp (only shapes differ)."""
import torch

from . import tp as rtp


def split_of(model):
    """Per parameter, in model.parameters() order: (dim, index list) of the full tensor
    this rank holds, or None when the parameter is whole on every tp rank."""
    out = []
    for name, _ in model.named_parameters():
        path, _, attr = name.rpartition(".")
        m = model.get_submodule(path) if path else model
        out.append(m.split(attr) if isinstance(m, rtp.SplitLayer) else None)
    return out


def full_opt_state(model, opt, group):
    """opt.state_dict() with every tp-split state tensor gathered (collective over the tp
    group: its ranks hold the same stage, so the same parameters have state)."""
    sd = opt.state_dict()
    params = list(model.parameters())
    splits = split_of(model)
    state = {}
    for i in sorted(sd["state"]):
        st = {}
        for k, v in sd["state"][i].items():
            s = splits[i]
            if s is not None and torch.is_tensor(v) and v.shape == params[i].shape:
                v = rtp._gather(v, s[0], group)
            st[k] = v
        state[i] = st
    return {"state": state, "param_groups": sd["param_groups"]}


def slice_opt_state(model, sd):
    """A full optimizer state (full_opt_state's, or a tp=1 run's) cut to this rank's
    slices, ready for opt.load_state_dict. A tensor whose shape fits neither the full
    nor the sliced parameter is an error naming the parameter."""
    names = [n for n, _ in model.named_parameters()]
    params = list(model.parameters())
    splits = split_of(model)
    state = {}
    for i, st in sd["state"].items():
        if not 0 <= i < len(params):
            raise ValueError("optimizer state for parameter %d, the model has %d" % (i, len(params)))
        out = {}
        for k, v in st.items():
            s = splits[i]
            if s is not None and torch.is_tensor(v) and v.dim() > 0:
                if v.dim() <= s[0] or v.shape[s[0]] <= max(s[1]):
                    raise ValueError("optimizer state %s of %s: shape %s is not the full parameter's"
                                     % (k, names[i], tuple(v.shape)))
                v = v.index_select(s[0], torch.tensor(s[1]))
                if v.shape != params[i].shape:
                    raise ValueError("optimizer state %s of %s: shape %s does not fit %s"
                                     % (k, names[i], tuple(v.shape), tuple(params[i].shape)))
            out[k] = v
        state[i] = out
    return {"state": state, "param_groups": sd["param_groups"]}
