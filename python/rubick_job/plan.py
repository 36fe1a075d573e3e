"""The execution plan rubickd gives a run, and the fixed global batch it must keep.

rubickd rewrites RUBICK_PLAN_FILE before every run of a job (docs/rubickd.8, JOB
PROTOCOL), so the plan is read at start and never again: a new plan means a new run.
Parsing is pure (no torch, no environment) so that tests and scripts can check a plan
before they start any process; every error names where the text came from, because a
user reading "out of range" needs to know which of three sources to fix.
"""

import os

KEYS = ("dp", "tp", "pp", "mb", "ga", "gc", "zero", "offload")
POSITIVE = ("dp", "tp", "pp", "mb", "ga")  # sizes: 0 makes no sense; the rest are flags/levels


EXIT_BAD_INPUT = 1      # a plan, batch or option that does not parse or does not add up
EXIT_PLAN_REFUSED = 78  # EX_CONFIG (sysexits.h): a valid plan outside what the script runs


class PlanError(ValueError):
    """A plan or global batch this job cannot run; str() names the input and the item.
    exit_code: what the job exits with for it (EXIT_BAD_INPUT)."""
    exit_code = EXIT_BAD_INPUT


class PlanRefused(PlanError):
    """A well-formed plan that this script or its model cannot run (check_supported,
    check_model_fits): the job exits EXIT_PLAN_REFUSED, so that a caller can tell "the
    plan is outside my space" from a malformed input."""
    exit_code = EXIT_PLAN_REFUSED


def exit_for(err):
    """Exit the process for a PlanError: its message on stderr, its exit code."""
    import sys
    print(str(err), file=sys.stderr, flush=True)
    sys.exit(err.exit_code)


class Plan(dict):
    """A parsed plan: plan["dp"] or plan.dp; every key of KEYS is present."""

    def __getattr__(self, key):
        try:
            return self[key]
        except KeyError:
            raise AttributeError(key)

    @property
    def world(self):
        """Processes the plan runs: one per data-parallel replica of each pipeline stage."""
        return self["dp"] * self["tp"] * self["pp"]


def parse_plan(text, where):
    """Plan from "dp=2,mb=4,ga=1" text; `where` (a file name, RUBICK_PLAN, --plan) is
    named in every error. Unknown keys, non-integers and out-of-range values raise."""
    plan = Plan(dp=1, tp=1, pp=1, mb=1, ga=1, gc=0, zero=0, offload=0)
    for item in text.strip().split(","):
        if not item:
            continue
        key, sep, val = item.partition("=")
        if not sep or key not in plan:
            raise PlanError("%s: plan item '%s': expected one of %s as KEY=N" % (where, item, ",".join(KEYS)))
        try:
            plan[key] = int(val)
        except ValueError:
            raise PlanError("%s: plan item '%s': not an integer" % (where, item))
        if plan[key] < 0 or (key in POSITIVE and plan[key] < 1):
            raise PlanError("%s: plan item '%s': out of range" % (where, item))
    return plan


def check_supported(plan, where, max_pp=1, max_tp=1):
    """Refuse (PlanRefused), at start, a plan the library (and the script, for tp and pp)
    cannot run, naming the dimension: running it anyway would train something other
    than what was planned. The library runs dp, mb, ga, gc, ZeRO-1/2/3 and offload,
    each with any dp x tp x pp; tp only up to the script's `max_tp` (a model built from
    tp.py's layers) and pp up to its `max_pp`."""
    if plan["tp"] > max_tp or plan["pp"] > max_pp:
        what = "data parallelism"
        if max_tp > 1:
            what += ", %d-way tensor parallelism" % max_tp
        if max_pp > 1:
            what = what.replace("data parallelism", "data") if max_tp == 1 else what
            what += " and %d-stage pipeline parallelism" % max_pp
        raise PlanRefused("%s: tp=%d pp=%d: this job does %s only (tp<=%d, pp<=%d)"
                          % (where, plan["tp"], plan["pp"], what, max_tp, max_pp))
    if plan["zero"] > 3:
        raise PlanRefused("%s: zero=%d: ZeRO has stages 1 to 3 (zero<=3)" % (where, plan["zero"]))
    if plan["offload"] > 1:
        raise PlanRefused("%s: offload=%d: offload is 0 or 1" % (where, plan["offload"]))


def check_model_fits(plan, where, layers=None, heads=None, hidden=None, ffn=None, groups=None):
    """Refuse, at start, a tp or pp the model's shape cannot be split by, naming the
    dimension and the model's size: Megatron's tp gives each rank whole attention heads
    and an equal slice of the MLP (Shoeybi et al. 2019, section 3), and a pipeline gives
    each stage the same number of layers; channel parallelism gives each rank whole
    GroupNorm groups (`groups`, tp.ParallelGroupNorm). A size passed as None is not checked. Kept
    apart from check_supported: this is about the model, that about the library."""
    tp, pp = plan["tp"], plan["pp"]
    for dim, n, what in (("tp", heads, "attention heads"), ("tp", hidden, "hidden size"),
                         ("tp", ffn, "MLP width"), ("tp", groups, "channel groups (GroupNorm)"),
                         ("pp", layers, "layers")):
        k = tp if dim == "tp" else pp
        if n is not None and n % k:
            raise PlanRefused("%s: %s=%d does not divide the model's %d %s"
                            % (where, dim, k, n, what))


def read_plan(env, cli_text=None):
    """(text, where) by rubickd's precedence: the file RUBICK_PLAN_FILE names (when it
    exists), else RUBICK_PLAN, else the --plan text, else dp=1."""
    path = env.get("RUBICK_PLAN_FILE")
    if path and os.path.exists(path):
        with open(path) as f:
            return f.read(), path
    if env.get("RUBICK_PLAN"):
        return env["RUBICK_PLAN"], "RUBICK_PLAN"
    return cli_text or "dp=1", "--plan"


def global_batch(plan, requested):
    """The global batch to keep: `requested` (RUBICK_GLOBAL_BATCH or --global-batch; 0 or
    less means dp*mb*ga) must equal dp*mb*ga, or the run would train another model."""
    made = plan["dp"] * plan["mb"] * plan["ga"]
    if requested <= 0:
        return made
    if made != requested:
        raise PlanError("plan mb=%d ga=%d dp=%d does not make the global batch %d"
                        % (plan["mb"], plan["ga"], plan["dp"], requested))
    return requested
