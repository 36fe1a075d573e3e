"""Job: rubickd's job protocol (docs/rubickd.8, JOB PROTOCOL) around a user's training loop.

    job = rubick_job.Job.from_env(parser)          # plan, global batch, ranks, flags
    def train(job):                                 # runs once per rank
        model, opt = job.wrap(model, opt)           # dp/ZeRO-1/2/3/gc, resumes the checkpoint
        for step, micro in job.steps(data):         # this rank's micro-batches of step
            for x in micro:
                job.backward(per_sample_loss_sum(model, x))
            job.step()                              # update, log, report, stop or go on
    job.run(train)

Why the loop is the library's: every rank must take the same samples at every step
whatever the plan (order.py), the loss must be scaled so that the update is the mean over
the global batch, and all ranks must stop after the same step; a script that got any of
these wrong would train a different model after each reconfiguration.
"""
import argparse
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.checkpoint import checkpoint

from . import ckpt, order, report, zero, zero3, zero3d
from . import parallel
from . import tp as rtp
from .dist import Groups, Groups3D, Topology
from .plan import PlanError, check_supported, exit_for, global_batch, parse_plan, read_plan
from .signals import EXIT_CHECKPOINTED, launch


def add_arguments(parser, env=None):
    """The protocol's command-line options, with rubickd's environment as defaults."""
    env = os.environ if env is None else env
    parser.add_argument("--plan", default=None, help="plan text when RUBICK_PLAN(_FILE) is unset")
    parser.add_argument("--iters", type=int, default=int(float(env.get("RUBICK_ITERS", "100"))))
    parser.add_argument("--global-batch", type=int, default=int(env.get("RUBICK_GLOBAL_BATCH", "0") or 0))
    parser.add_argument("--ckpt-dir", default=env.get("RUBICK_CKPT_DIR", "ckpt"))
    parser.add_argument("--report-every", type=int, default=5)
    parser.add_argument("--ckpt-every", type=int, default=0,
                        help="also publish a checkpoint every N steps (0: only when asked to stop)")
    parser.add_argument("--stop-after", type=int, default=0,
                        help="checkpoint and exit 75 after this step, as on SIGUSR1 (tests)")
    parser.add_argument("--threads", type=int,
                        default=int(env.get("RUBICK_CPUS", "0") or 0) or os.cpu_count())


def _checkpointed(module):
    """Make `module` recompute its activations in backward (gc=1) without renaming its
    parameters: the checkpoint must load under plans with and without gc."""
    inner = module.forward

    def forward(*args):
        if module.training:
            return checkpoint(inner, *args, use_reentrant=False)
        return inner(*args)
    module.forward = forward


class Job:
    """One run of a rubick job on this node. Attributes a script may read: plan, args,
    global_batch, iters, run, rank, dp, tp, pp, stage, replica, tp_rank, stage_group
    (the stage's dp group), tp_group, pipe (global ranks of this rank's pipeline), step_no."""

    def __init__(self, args, plan, where, env):
        self.args, self.plan, self.where = args, plan, where
        self.dp, self.tp, self.pp = plan["dp"], plan["tp"], plan["pp"]
        self.tp_rank, self.tp_group, self.pipe = 0, None, [0]
        self.global_batch = global_batch(plan, args.global_batch)
        self.iters, self.ckpt_dir = args.iters, args.ckpt_dir
        if self.iters < 1:
            raise PlanError("--iters must be >= 1")
        self.url, self.job_id = env.get("RUBICK_URL"), env.get("RUBICK_JOB_ID")
        self.token = env.get("RUBICK_JOB_TOKEN", "")
        self.run_id = env.get("RUBICK_RUN", "1")
        self.fence = env.get("RUBICK_FENCE_FILE")
        self.times_path = env.get("RUBICK_TIMES_FILE")  # per-step phase times (profiling)
        os.makedirs(self.ckpt_dir, exist_ok=True)
        self.topo = Topology.from_env(env, plan, where, self.ckpt_dir, self.run_id)
        self.rank, self.step_no = None, 0
        self.module = self.net = self.opt = None

    @classmethod
    def from_env(cls, parser=None, argv=None, max_pp=1, env=None, max_tp=1):
        """The job as rubickd starts it: options (added to the script's `parser`), the
        plan by rubickd's precedence, checked against what this job can run (`max_pp`:
        the pipeline stages the script runs, with rubick_job.pipeline; `max_tp`: the
        tensor parallelism its model, built from rubick_job.tp's layers, allows). Bad input exits with a message
        naming it, before any process starts."""
        env = os.environ if env is None else env
        parser = parser or argparse.ArgumentParser()
        add_arguments(parser, env)
        args = parser.parse_args(argv)
        text, where = read_plan(env, args.plan)
        try:
            plan = parse_plan(text, where)
            check_supported(plan, where, max_pp, max_tp)
            return cls(args, plan, where, env)
        except PlanError as e:  # 78 for a plan outside what the script runs, else 1
            exit_for(e)

    # --- processes -------------------------------------------------------------------

    def run(self, train):
        """Start this node's ranks, each calling train(self) with its process group up;
        exits 75 when the run checkpointed on a signal."""
        launch(lambda rank, flag: self._worker(train, rank, flag), self.topo.base, self.topo.local)

    def _worker(self, train, rank, stop_flag):
        t = self.topo
        torch.set_num_threads(max(1, self.args.threads // t.local))
        dist.init_process_group("gloo", init_method=t.init, rank=rank, world_size=t.world)
        if t.nnodes > 1:
            print("rank %d/%d on node %s" % (rank, t.world, t.node), flush=True)
        self.rank, self.stop_flag = rank, stop_flag
        if self.parallel:
            self._groups_3d(rank)
        else:
            g = Groups(rank, self.dp, self.pp)
            self.stage, self.replica, self.stage_group = g.stage, g.replica, g.stage_group
        train(self)
        dist.destroy_process_group()

    @property
    def parallel(self):
        """tp or pp: the model is split, so no DDP; gradients are averaged over the
        stage's dp group by step(), checkpoints are gathered (_state_3d)."""
        return self.tp > 1 or self.pp > 1

    def _groups_3d(self, rank):
        g = Groups3D(rank, self.dp, self.tp, self.pp)  # collective: every rank, same plan
        self.stage, self.replica, self.tp_rank = g.stage, g.replica, g.tp_rank
        self.stage_group, self.tp_group, self.pipe = g.dp_group, g.tp_group, g.pipe

    # --- model and optimizer ---------------------------------------------------------

    def wrap(self, model, opt, checkpoint=(), stage_of=None):
        """(model, optimizer) for the plan, resumed from the published checkpoint.
        `opt` must be built over model.parameters() (its state is indexed like them);
        under zero=1 it is rebuilt as ZeroRedundancyOptimizer of the same class and
        hyper-parameters, under zero=2 as zero.ShardedOptimizer, under zero=3 as
        zero3.Zero3Optimizer (one parameter group, no DDP); under tp or pp, ZeRO-1/2 as
        zero3d.DpShardedOptimizer; with offload=1 the step runs on host fp32 masters.
        `checkpoint`: the modules to recompute under gc=1 (e.g. the
        transformer blocks). `stage_of`: under pp, the stage of each parameter in
        model.parameters() order; the script runs the pipeline itself."""
        self.module = model
        if self.plan["gc"]:
            for m in checkpoint:
                _checkpointed(m)
        net = model
        params = list(model.parameters())
        self.mine = params
        if self.parallel:
            stage_of = [0] * len(params) if self.pp == 1 else stage_of
            if stage_of is None or len(stage_of) != len(params):
                raise ValueError("pp=%d: wrap() needs stage_of, one stage per parameter" % self.pp)
            self.owner = list(stage_of)
            self.mine = [p for p, o in zip(params, self.owner) if o == self.stage]
        elif self.dp > 1 and not self.sharded:  # ZeRO-2/3 reduce the gradients themselves
            net = nn.parallel.DistributedDataParallel(model)
        offload = bool(self.plan["offload"])
        if offload and not self.sharded:  # ZeRO-2/3 offload their shards (below)
            opt = zero3d.Offloaded(params, opt)
        if self.zero3:  # any dp x tp x pp: layer by layer over the (stage, tp_rank) dp group
            opt = zero3.Zero3Optimizer(model, params, self.mine, opt, self.stage_group, offload)
        elif self.sharded:
            opt = zero.ShardedOptimizer(params, opt, self.plan["zero"], offload=offload)
        elif self.zero and (self.parallel or offload):
            # ZeRO-1/2 over the dp group of (stage, tp_rank); ZeRO-1 with offload too, as
            # torch's ZeroRedundancyOptimizer cannot rebuild an offloaded optimizer
            ranks = [(self.stage * self.dp + r) * self.tp + self.tp_rank for r in range(self.dp)]
            opt = zero3d.DpShardedOptimizer(params, self.mine, opt, self.plan["zero"],
                                            self.stage_group, ranks)
        elif self.zero:
            from torch.distributed.optim import ZeroRedundancyOptimizer
            groups = opt.param_groups
            params = groups[0]["params"] if len(groups) == 1 else [dict(g) for g in groups]
            opt = ZeroRedundancyOptimizer(params, optimizer_class=type(opt), **opt.defaults)
        self.opt = opt
        path = ckpt.latest(self.ckpt_dir)
        if path:
            ck = torch.load(path)
            try:
                if self.tp > 1:
                    self._load_3d(ck)
                else:
                    model.load_state_dict(ck["model"])
                    opt.load_state_dict(ck["opt"])  # a full state: ZeRO re-partitions it for this dp
            except (RuntimeError, KeyError, ValueError) as e:
                raise SystemExit("checkpoint %s does not fit this model or optimizer: %s" % (path, e))
            self.step_no = ck["step"]
        if self.sharded:
            opt.free_params()  # ZeRO-3: only the shard between steps (no-op for ZeRO-2)
        self.net, self.opt = net, opt
        return net, opt

    def _load_3d(self, ck):
        """A plan-independent checkpoint into this rank's tp slices (parallel.py)."""
        rtp.load_full(self.module, ck["model"])
        self.opt.load_state_dict(parallel.slice_opt_state(self.module, ck["opt"]))

    @property
    def zero(self):
        return bool(self.plan["zero"]) and self.dp > 1

    @property
    def zero3(self):
        """ZeRO-3 (zero3.Zero3Optimizer), under any tp and pp."""
        return self.plan["zero"] == 3 and self.dp > 1

    @property
    def sharded(self):
        """No DDP, parameters gathered and freed by the optimizer: ZeRO-3 under any plan,
        ZeRO-2 with tp = pp = 1 (zero.ShardedOptimizer)."""
        return self.zero3 or (self.plan["zero"] == 2 and self.dp > 1 and not self.parallel)

    # --- the loop --------------------------------------------------------------------

    def steps(self, data):
        """(step, micro-batches) for each remaining step: this rank's `ga` micro-batches
        of `mb` samples, data[ids] (or a tuple of each tensor's rows when `data` is a
        tuple). Under dp > 1 all but the last micro-batch run in DDP's no_sync, so the
        gradients are averaged once per step. Stops early, exiting 75, when fenced."""
        n = len(data[0]) if isinstance(data, tuple) else len(data)
        if self.global_batch > n:
            raise SystemExit("--global-batch %d is more than the %d samples" % (self.global_batch, n))
        p = self.plan
        if self.rank == 0:
            print("run %s resumes at %d with dp=%d pp=%d mb=%d ga=%d gc=%d zero=%d" % (
                self.run_id, self.step_no, self.dp, self.pp, p["mb"], p["ga"], p["gc"], p["zero"]), flush=True)
        self._log = open(os.path.join(self.ckpt_dir, "loss.log"), "a") if self.rank == 0 else None
        self._meter = report.Meter()
        self._times = open(self.times_path, "a") if self.rank == 0 and self.times_path else None
        self._t_prev = time.perf_counter()
        while self.step_no < self.iters:
            if ckpt.fenced(self.fence, self.run_id):  # a newer run exists: this copy is stale
                print("run %s rank %d fenced at step %d: a newer run exists"
                      % (self.run_id, self.rank, self.step_no), flush=True)
                os._exit(EXIT_CHECKPOINTED)
            idx = order.batch_indices(self.step_no, self.global_batch, n)
            ids = order.micro_batches(idx, self.replica, p["mb"], p["ga"])
            self.opt.zero_grad(set_to_none=True)
            self._loss, self._stepped = torch.zeros(1), False
            self._fwd_s = self._bwd_s = 0.0
            yield self.step_no, self._micro(data, ids)
            if not self._stepped:
                raise RuntimeError("job.step() was not called for step %d" % self.step_no)
        if self.sharded:
            self.opt.gather_all()  # the script gets a whole model back
        if self.rank == 0:
            print("finished %d iterations" % self.step_no, flush=True)

    def _micro(self, data, ids):
        sync_each = isinstance(self.net, nn.parallel.DistributedDataParallel)
        for m, i in enumerate(ids):
            x = tuple(t[i] for t in data) if isinstance(data, tuple) else data[i]
            self._t_fwd = time.perf_counter()  # forward runs in the script until backward()
            if sync_each and m < len(ids) - 1:
                with self.net.no_sync():
                    yield x
            else:
                yield x

    def backward(self, loss_sum):
        """Backward of a micro-batch's loss given as the SUM of its per-sample losses,
        scaled so that the update is the mean over the global batch under every plan
        (DDP averages over dp ranks, hence * dp)."""
        t0 = time.perf_counter()
        self._fwd_s += t0 - self._t_fwd
        self._loss += loss_sum.detach().to(self._loss.dtype)
        (loss_sum * self.dp / self.global_batch).backward()
        self._bwd_s += time.perf_counter() - t0

    @property
    def loss_scale(self):
        """What backward() multiplies the per-sample loss sum by (for pipeline scripts)."""
        return self.dp / self.global_batch

    def step(self, loss_sum=None):
        """End a step: update, log the global mean loss, report, and stop (checkpoint,
        exit 75) when asked to. `loss_sum`: the step's summed per-sample losses when the
        script ran backward itself (pipeline); else what backward() accumulated."""
        self._stepped = True
        if self.parallel and self.dp > 1 and not self.zero:  # as DDP does: average over replicas
            for q in self.mine:
                if q.grad is not None:
                    dist.all_reduce(q.grad, group=self.stage_group)
                    q.grad /= self.dp
        t_opt = time.perf_counter()
        self.opt.step()
        opt_s = time.perf_counter() - t_opt
        self.step_no += 1
        step, G = self.step_no, self.global_batch
        total = self._loss if loss_sum is None else loss_sum
        if self.tp_rank != 0:  # a tp group's ranks all hold the same loss: count it once
            total = torch.zeros_like(total)
        if self.topo.world > 1:
            dist.all_reduce(total)  # under pp only the last stage's ranks hold losses
        if self._log and not ckpt.fenced(self.fence, self.run_id):
            self._log.write("%d %.9g %s %d %d %d\n" % (step, total.item() / G, self.run_id,
                                                         self.dp, self.plan["ga"], self.pp))
            self._log.flush()
        self._meter.tick()
        if self.rank == 0 and (step % self.args.report_every == 0 or step == self.iters):
            report.post(self.url, self.job_id, self.token,
                        {"iters_done": step, "throughput_sps": self._meter.take(G), "run": int(self.run_id)})
        # every rank stops after the same step: rank 0's view of the flag, broadcast
        stop = torch.zeros(1)
        a = self.args
        stop[0] = 1.0 if (self.stop_flag.value or (a.stop_after and step == a.stop_after)) else 0.0
        if self.topo.world > 1:
            dist.broadcast(stop, 0)
        self._log_times(step, opt_s)
        if a.ckpt_every and step % a.ckpt_every == 0 and step < self.iters and not self.parallel and stop[0] == 0:
            if self.zero:  # collective: every rank decides alike (after the broadcast)
                self.opt.consolidate_state_dict(to=0)
            if self.rank == 0 and ckpt.publish(self.ckpt_dir, self.run_id, self.fence, self._state()):
                print("published checkpoint at %d" % step, flush=True)
            if self.sharded:
                self.opt.free_params()  # ZeRO-3: consolidating gathered them
        if stop[0] > 0 and step < self.iters:
            self._checkpoint_and_exit()

    def _log_times(self, step, opt_s):
        """Rank 0 appends "step fwd_ms sync_ms opt_ms iter_ms" to RUBICK_TIMES_FILE, the
        phases of docs/profile-format.md that `rubick model profile` fits: forward (the
        script's code from a micro-batch to backward()), backward with DDP's gradient
        all-reduce, optimizer step, and the wall time since the previous step ended.
        A phase is "-" where this split is not the model's: under tp/pp (the script's
        pipeline interleaves them) and ZeRO-2/3 (the reduce-scatter runs inside step())."""
        now = time.perf_counter()
        iter_s, self._t_prev = now - self._t_prev, now
        if not self._times:
            return
        if self.parallel or self.sharded or self._fwd_s <= 0:
            ph = "- - -"
        else:
            ph = "%.3f %.3f %.3f" % (1e3 * self._fwd_s, 1e3 * self._bwd_s, 1e3 * opt_s)
        self._times.write("%d %s %.3f\n" % (step, ph, 1e3 * iter_s))
        self._times.flush()

    def _state(self):
        return {"model": self.module.state_dict(), "opt": self.opt.state_dict(), "step": self.step_no}

    def _save_part_3d(self, path):
        """This stage's part of a plan-independent checkpoint: full tp weights and
        optimizer state (collective over the tp group), written by its replica 0, tp rank 0."""
        if self.tp > 1:
            model = rtp.full_state(self.module)
            opt = parallel.full_opt_state(self.module, self.opt, self.tp_group)
        else:
            model, opt = self.module.state_dict(), self.opt.state_dict()
        if self.replica == 0 and self.tp_rank == 0:
            torch.save({"model": model, "opt": opt}, path)

    def _checkpoint_and_exit(self):
        """All ranks are here after the same step: write the full state, publish, exit 75."""
        step = self.step_no
        if self.zero:
            self.opt.consolidate_state_dict(to=0)
        part = lambda s: os.path.join(self.ckpt_dir, "stage-%d.pt" % s)  # noqa: E731
        if self.parallel:
            self._save_part_3d(part(self.stage))
            dist.barrier()  # every stage's part is written
        if self.rank == 0:
            if self.parallel:
                names = [n for n, _ in self.module.named_parameters()]
                model, opt = ckpt.merge_parts(names, self.owner, [torch.load(part(s)) for s in range(self.pp)])
                state = {"model": model, "opt": opt, "step": step}
            else:
                state = self._state()
            ok = ckpt.publish(self.ckpt_dir, self.run_id, self.fence, state)
            for s in range(self.pp if self.parallel else 0):
                os.unlink(part(s))
            print("checkpointed at %d" % step if ok else "fenced at %d: not published" % step, flush=True)
        dist.barrier()
        dist.destroy_process_group()
        sys.stdout.flush()
        if self.topo.local > 1:
            os._exit(EXIT_CHECKPOINTED)
        sys.exit(EXIT_CHECKPOINTED)
