/*
 * The performance model: iteration time of a plan on a placement
 * (docs/references.md §1.4). The DP family follows §1.4.1 term
 * by term; where this file departs from the artifact it says why:
 *  - communication is priced on the placement (NVLink inside a node, the NICs
 *    of the busiest node across nodes) instead of one fixed bandwidth;
 *  - the forward time has a fixed part that does not shrink with the per-GPU
 *    batch (fitted, rk_perf_params.fwd_fixed_ms);
 *  - gradient accumulation overlaps the all-reduce with the last micro-step's
 *    backward only (DeepSpeed reduces at the accumulation boundary);
 *  - 3D plans use the physically consistent scaling of the §1.4.3 note
 *    (T_f / (dp * pp * eff_tp(tp)) with the 1F1B pipeline bubble) and
 *    Megatron-LM's communication volumes instead of the 1.15^tp heuristic.
 */
#include "rubick/perf.h"

#include <math.h>
#include <stddef.h>

#define MIB (1024.0 * 1024.0)

void rk_perf_env_a800(struct rk_perf_env *env)
{
	/* Calibrated once on the Rubick A800 testbed for all models together;
	 * docs/perf-model.md ("Calibrating the cluster constants") gives the
	 * procedure and the command that reproduces it. */
	*env = (struct rk_perf_env){
		.nvlink_gbps = 150.0,
		.pcie_gbps = 12.0,
		.host_mem_gbps = 36.0,
		.net_gbps = 11.0,
		.nics_per_node = 4,
		.gpus_per_node = 8,
		.gpu_tflops = 75.0,
		.recompute_factor = 1.0,
		.tp_eff = 0.85,
		.grad_bytes = 2.0,
		.act_bytes = 2.0,
		.overlap = RK_OVERLAP_PNORM,
	};
}

static int bad_pos(double v)
{
	return !isfinite(v) || v <= 0;
}

int rk_perf_env_check(const struct rk_perf_env *env, struct rk_error *err)
{
	if (!env)
		return rk_error_set(err, RK_EINVAL, "perf env: missing");
	if (bad_pos(env->nvlink_gbps))
		return rk_error_set(err, RK_ERANGE, "perf env: nvlink_gbps must be > 0");
	if (bad_pos(env->pcie_gbps))
		return rk_error_set(err, RK_ERANGE, "perf env: pcie_gbps must be > 0");
	if (bad_pos(env->host_mem_gbps))
		return rk_error_set(err, RK_ERANGE, "perf env: host_mem_gbps must be > 0");
	if (bad_pos(env->net_gbps))
		return rk_error_set(err, RK_ERANGE, "perf env: net_gbps must be > 0");
	if (env->nics_per_node < 1 || env->nics_per_node > 64)
		return rk_error_set(err, RK_ERANGE, "perf env: nics_per_node must be 1..64");
	if (env->gpus_per_node < 1 || env->gpus_per_node > 1024)
		return rk_error_set(err, RK_ERANGE, "perf env: gpus_per_node must be 1..1024");
	if (bad_pos(env->gpu_tflops))
		return rk_error_set(err, RK_ERANGE, "perf env: gpu_tflops must be > 0");
	if (!isfinite(env->recompute_factor) || env->recompute_factor < 0 ||
	    env->recompute_factor > 4)
		return rk_error_set(err, RK_ERANGE, "perf env: recompute_factor must be 0..4");
	if (!isfinite(env->tp_eff) || env->tp_eff <= 0 || env->tp_eff > 1)
		return rk_error_set(err, RK_ERANGE, "perf env: tp_eff must be in (0, 1]");
	if (bad_pos(env->grad_bytes) || env->grad_bytes > 16)
		return rk_error_set(err, RK_ERANGE, "perf env: grad_bytes must be in (0, 16]");
	if (bad_pos(env->act_bytes) || env->act_bytes > 16)
		return rk_error_set(err, RK_ERANGE, "perf env: act_bytes must be in (0, 16]");
	if (env->overlap != RK_OVERLAP_PNORM && env->overlap != RK_OVERLAP_ADDITIVE)
		return rk_error_set(err, RK_EINVAL, "perf env: overlap must be pnorm or additive");
	return 0;
}

void rk_perf_params_bounds(enum rk_overlap_form form, double lo[7], double hi[7])
{
	/* §1.5: k_bwd in [1, 10], k_sync >= 1, k_opt/k_os_offload/k_const > 0;
	 * overlap exponents >= 1 in the p-norm form, additive constants >= 0 in
	 * the additive one. Finite upper bounds keep the bounded transform of the
	 * fit well defined; none binds on physical data. */
	const double l[7] = {1.0, 1.0, 1e-8, 1e-8, 1e-6, 1.0, 1.0};
	const double h[7] = {10.0, 100.0, 10.0, 100.0, 1e5, 100.0, 100.0};
	for (int i = 0; i < 7; i++)
		lo[i] = l[i], hi[i] = h[i];
	if (form == RK_OVERLAP_ADDITIVE)
		lo[5] = lo[6] = 1e-6, hi[5] = hi[6] = 1e5;
}

void rk_perf_params_to_array(const struct rk_perf_params *k, double x[7])
{
	x[0] = k->k_bwd, x[1] = k->k_sync, x[2] = k->k_opt, x[3] = k->k_os_offload;
	x[4] = k->k_const, x[5] = k->k_off, x[6] = k->k_swap;
}

void rk_perf_params_from_array(const double x[7], struct rk_perf_params *k)
{
	k->k_bwd = x[0], k->k_sync = x[1], k->k_opt = x[2], k->k_os_offload = x[3];
	k->k_const = x[4], k->k_off = x[5], k->k_swap = x[6];
}

/* Pollux's overlap (§1.4.1): (a^k + b^k)^(1/k); k = 1 is the sum, k -> inf the max.
 * Scaled by the larger term so large exponents do not overflow. */
static double ov_pnorm(double a, double b, double k)
{
	double hi = a > b ? a : b, lo = a > b ? b : a;
	if (lo <= 0)
		return hi > 0 ? hi : 0;
	return hi * pow(1.0 + pow(lo / hi, k), 1.0 / k);
}

/* OV_off / OV_swap: p-norm with the parameter as exponent, or the artifact
 * main branch's additive a + k + b, which only applies when there is an
 * offload transfer to overlap (§1.4.1 "Main-branch consequence": otherwise it
 * duplicates k_const). */
static double ov_param(const struct rk_perf_env *env, double a, double b, double k)
{
	if (b <= 0)
		return a;
	if (env->overlap == RK_OVERLAP_ADDITIVE)
		return a + k + b;
	return ov_pnorm(a, b, k);
}

/* NICs a node's `g` GPUs of this job can drive: GPUs share NICs in equal
 * groups of gpus_per_node/nics_per_node by PCIe affinity, so g GPUs reach
 * ceil(g * nics / gpus_per_node) of them. */
static int usable_nics(const struct rk_perf_env *env, int g)
{
	/* a full node: the clamped ceiling below is every NIC; skip its division */
	if (g >= env->gpus_per_node && env->gpus_per_node > 0)
		return env->nics_per_node;
	int n = (g * env->nics_per_node + env->gpus_per_node - 1) / env->gpus_per_node;
	if (n < 1)
		n = 1;
	if (n > env->nics_per_node)
		n = env->nics_per_node;
	return n;
}

/* First global rank of each node when ranks fill the placement's nodes in
 * order: start[i] .. start[i+1]-1 live on node i, start[n_nodes] = all GPUs. */
static void node_starts(const struct rk_placement *pl, int start[RK_PLACEMENT_MAX_NODES + 1])
{
	int acc = 0;
	for (int i = 0; i < pl->n_nodes; i++) {
		start[i] = acc;
		acc += pl->gpus[i];
	}
	start[pl->n_nodes] = acc;
}

/*
 * Time (ms) of the data-parallel gradient all-reduce: tp*pp independent rings
 * of dp ranks (Megatron rank order: tensor rank fastest, then data, then
 * pipeline), each moving ring_mb = 2(dp-1)/dp * shard through every node it
 * spans (a ring enters and leaves each of its nodes once). A node's NIC share
 * carries every crossing ring; rings inside one node run on NVLink.
 * Reference: ring all-reduce volume 2(n-1)/n (Patarasuk & Yuan 2009), as in
 * §1.4.1's V; the per-node NIC limit is this project's placement term.
 *
 * Cost: O(tp*pp + nodes spanned), not O(GPUs): ring (s, t) holds the ranks
 * lo, lo + tp, ..., hi with lo = s*dp*tp + t, hi = lo + (dp-1)*tp; both ends
 * grow with (s, t), so two forward-only cursors find their nodes, and a node
 * strictly between them holds a rank of the ring unless it is narrower than
 * tp and the ring's stride steps over it (bench_fit, 3D predict).
 */
static double allreduce_ms(const struct rk_perf_env *env, const struct rk_placement *pl,
			   int dp, int tp, int pp, double shard_mb)
{
	if (dp <= 1)
		return 0;
	double ring_mb = 2.0 * (dp - 1) / dp * shard_mb;
	int n = pl->n_nodes;
	if (n <= 1)
		return ring_mb / env->nvlink_gbps;
	int start[RK_PLACEMENT_MAX_NODES + 1];
	node_starts(pl, start);
	int crossing[RK_PLACEMENT_MAX_NODES];
	for (int i = 0; i < n; i++)
		crossing[i] = 0;
	int any_cross = 0, span = (dp - 1) * tp;
	int lo_node = 0, hi_node = 0;
	for (int s = 0; s < pp; s++) {
		for (int t = 0; t < tp; t++) {
			int lo = s * dp * tp + t, hi = lo + span;
			while (start[lo_node + 1] <= lo)
				lo_node++;
			while (start[hi_node + 1] <= hi)
				hi_node++;
			if (lo_node == hi_node)
				continue; /* inside one node: NVLink */
			any_cross = 1;
			crossing[lo_node]++;
			crossing[hi_node]++;
			for (int i = lo_node + 1; i < hi_node; i++) {
				/* tp consecutive ranks always hold one of the ring's */
				if (pl->gpus[i] >= tp) {
					crossing[i]++;
					continue;
				}
				/* first ring rank at or after the node's first rank */
				int r = start[i] + (tp - (start[i] - lo) % tp) % tp;
				crossing[i] += r < start[i + 1];
			}
		}
	}
	if (!any_cross)
		return ring_mb / env->nvlink_gbps;
	double worst = 0;
	for (int i = 0; i < n; i++) {
		if (!crossing[i])
			continue;
		double t = crossing[i] * ring_mb / (usable_nics(env, pl->gpus[i]) * env->net_gbps);
		if (t > worst)
			worst = t;
	}
	return worst;
}

double rk_perf_fwd_flops(const struct rk_model *m)
{
	/* Kaplan et al. 2020 ("Scaling laws", Table 1): a token's forward pass
	 * costs 2N + 2 n_layer n_ctx d_model FLOPs (weights, attention). From
	 * the parameter count, so wide feed-forward layers (T5) count. */
	double s = m->seq_len;
	return s * (2.0 * m->params + 2.0 * m->layers * s * m->hidden);
}

/* Forward time per sample (ms) on one GPU, fixed part excluded: from the
 * model's measured forward time of its global batch, or, when the model has
 * none, from its FLOPs at the GPU's effective rate. */
static double fwd_rate_ms(const struct rk_model *m, const struct rk_perf_params *k,
			  const struct rk_perf_env *env)
{
	if (m->fwd_ms > 0 && m->global_batch > 0) {
		double var = m->fwd_ms - k->fwd_fixed_ms;
		return (var > 0 ? var : m->fwd_ms) / m->global_batch;
	}
	return rk_perf_fwd_flops(m) / (env->gpu_tflops * 1e12) * 1e3;
}

static int check_inputs(const struct rk_model *m, const struct rk_perf_params *k,
			const struct rk_perf_env *env, const struct rk_plan *plan,
			const struct rk_placement *pl, int cpus_per_gpu, int *gpus)
{
	if (!m || !k || !env || !plan || !pl)
		return RK_EINVAL;
	if (plan->dp < 1 || plan->tp < 1 || plan->pp < 1 || plan->mb < 1 || plan->ga < 1)
		return RK_EINVAL;
	if (pl->n_nodes < 1 || pl->n_nodes > RK_PLACEMENT_MAX_NODES || cpus_per_gpu < 1)
		return RK_EINVAL;
	int g = 0;
	for (int i = 0; i < pl->n_nodes; i++) {
		if (pl->gpus[i] < 1)
			return RK_EINVAL;
		g += pl->gpus[i];
	}
	if ((long)plan->dp * plan->tp * plan->pp != g)
		return RK_EINVAL;
	if (!(m->params > 0) || m->layers < 1 || m->hidden < 1 || m->seq_len < 1)
		return RK_EINVAL;
	/* forward: a measured time of the model's global batch, or 0 (structure) */
	if (!(m->fwd_ms >= 0) || !isfinite(m->fwd_ms) || (m->fwd_ms > 0 && m->global_batch < 1))
		return RK_EINVAL;
	double x[7];
	rk_perf_params_to_array(k, x);
	for (int i = 0; i < 7; i++)
		if (!isfinite(x[i]) || x[i] < 0)
			return RK_ERANGE;
	if (k->k_sync < 1 || !isfinite(k->fwd_fixed_ms) || k->fwd_fixed_ms < 0)
		return RK_ERANGE;
	if (env->overlap == RK_OVERLAP_PNORM && (k->k_off < 1 || k->k_swap < 1))
		return RK_ERANGE;
	*gpus = g;
	return 0;
}

/* §1.4.1, DP family (plain DP, ZeRO-DP, ZeRO-Offload; GA and GC). */
static void predict_dp(const struct rk_model *m, const struct rk_perf_params *k,
		       const struct rk_perf_env *env, const struct rk_plan *plan,
		       const struct rk_placement *pl, int cpus_per_gpu,
		       struct rk_perf_breakdown *o)
{
	int d = plan->dp;
	double P = m->params / MIB; /* ps: parameters in Mi */
	double b = (double)plan->mb * plan->ga; /* samples per GPU per iteration */
	double t_f = k->fwd_fixed_ms + fwd_rate_ms(m, k, env) * b;
	double t_re = plan->gc ? env->recompute_factor * t_f : 0; /* alpha_f - 1 */
	double t_bwd = k->k_bwd * t_f;
	/* V = grad_bytes * 2(d-1)/d * P (fp32 gradients: 4*2*P*(d-1)/d in the artifact). */
	double t_comm = allreduce_ms(env, pl, d, 1, 1, env->grad_bytes * P);
	/* With GA the reduction waits for the accumulation boundary: only the last
	 * micro-step's backward overlaps it (DeepSpeed engine, gradient accumulation). */
	double last = t_bwd / plan->ga;
	double t_sync = (t_bwd - last) + ov_pnorm(t_comm, last, k->k_sync);
	double t_off = 0, t_opt;
	if (plan->offload) {
		/* fp32 state slice over PCIe: 4 * (P/d) / B_pcie (§1.4.1 T_off). */
		t_off = 4.0 * (P / d) / env->pcie_gbps;
		/* CPU Adam: compute over d*c threads (§1.4.1), plus a per-process
		 * cost proportional to the whole model that neither more GPUs nor
		 * more nodes shrink (this project's term): the profiles' Topt falls
		 * as a + b/d with a ~ 16 bytes per parameter at ~40 GB/s on every
		 * model, and multi-node runs keep the same a (bert zero-offload
		 * 11111111: 109 ms vs 8: 118 ms). */
		t_opt = k->k_os_offload * P / ((double)d * cpus_per_gpu) +
			16.0 * P / env->host_mem_gbps;
	} else if (plan->zero >= 1) {
		/* Partitioned update, then the updated fp16 parameters are
		 * all-gathered (half a ring all-reduce's volume, Rajbhandari et al.
		 * SC'20 §7: ZeRO-2 moves the same 2*psi as DP, the all-gather half of
		 * it after the step, where no backward hides it). */
		t_opt = k->k_opt * P / d + 0.5 * t_comm;
	} else {
		t_opt = k->k_opt * P; /* every replica updates all parameters */
	}
	double t_so = ov_param(env, t_sync, t_off, k->k_off);
	double t_sw = ov_param(env, t_opt, t_off, k->k_swap);
	o->fwd_ms = t_f;
	o->sync_ms = t_re + t_so;
	o->opt_ms = t_sw;
	o->comm_ms = 0;
	o->iter_ms = o->fwd_ms + o->sync_ms + o->opt_ms + k->k_const;
}

/*
 * Time (ms) of one micro-batch's activation send between adjacent pipeline
 * stages (and the gradient send back, hence 2x): each of the dp*tp ranks of a
 * stage sends act_mb/tp to its peer (Megatron's scatter/gather optimisation,
 * Narayanan et al. SC'21 §4.1). Sends that cross nodes share the sending
 * node's usable NICs; the slowest boundary sets the pace.
 * Rank a of stage s sends to a + dp*tp. The boundary is walked in runs where
 * neither the sender's nor the receiver's node changes (forward-only cursors),
 * so it costs O(nodes) per boundary, not O(dp*tp*nodes).
 */
static double p2p_ms(const struct rk_perf_env *env, const struct rk_placement *pl, int dp,
		     int tp, int pp, double act_mb)
{
	double msg = act_mb / tp, worst = 0;
	int per_stage = dp * tp, n = pl->n_nodes;
	int start[RK_PLACEMENT_MAX_NODES + 1];
	node_starts(pl, start);
	int na = 0, nb = 0; /* nodes of the current sender and receiver */
	for (int s = 0; s + 1 < pp; s++) {
		int cross[RK_PLACEMENT_MAX_NODES];
		for (int i = 0; i < n; i++)
			cross[i] = 0;
		int any = 0;
		for (int a = s * per_stage, end = a + per_stage; a < end;) {
			while (start[na + 1] <= a)
				na++;
			while (start[nb + 1] <= a + per_stage)
				nb++;
			int stop = end;
			if (start[na + 1] < stop)
				stop = start[na + 1];
			if (start[nb + 1] - per_stage < stop)
				stop = start[nb + 1] - per_stage;
			if (na != nb)
				cross[na] += stop - a, any = 1;
			a = stop;
		}
		double t = msg / env->nvlink_gbps;
		for (int i = 0; any && i < n; i++) {
			double ti = cross[i] * msg / (usable_nics(env, pl->gpus[i]) * env->net_gbps);
			if (ti > t)
				t = ti;
		}
		if (t > worst)
			worst = t;
	}
	return 2.0 * worst;
}

/* Tensor-parallel speedup eff_tp(tp) = tp * tp_eff^log2(tp) (§1.4.3 note).
 * tp = 1 is exactly 1 (x^0); for a power of two log2 is the exact shift
 * count, which spares the log2 call (same value: log2 of 2^j is j). */
static double eff_tp_of(const struct rk_perf_env *env, int tp)
{
	if (tp == 1)
		return 1.0;
	double l;
	if ((tp & (tp - 1)) == 0) {
		int j = 0;
		while ((1 << j) < tp)
			j++;
		l = j;
	} else {
		l = log2((double)tp);
	}
	return tp * pow(env->tp_eff, l);
}

/*
 * 3D plans (§1.4.3 with its note's physically consistent scaling): each of
 * the dp replicas runs m = ga micro-batches of mb samples through pp stages
 * of L/pp layers, each stage split over tp GPUs with speedup eff_tp(tp).
 * 1F1B pipeline: (m + pp - 1) slots of one micro-batch's forward+backward on
 * one stage (Narayanan et al., SC'21, §2.2 bubble (pp-1)/m).
 * Tensor parallel: 2 all-reduces of the activations (mb*seq*hidden) per layer
 * forward and 2 backward, 2 more with recompute (Megatron-LM, Shoeybi et al.
 * 2019 §3); not overlapped. Pipeline: one activation send forward and one
 * gradient send backward per micro-batch and stage boundary. Data parallel:
 * the P/(tp*pp) gradient shard all-reduced after the backward (allreduce_ms),
 * overlapped with the last micro-batch's backward by k_sync as in §1.4.3.
 */
static void predict_3d(const struct rk_model *m, const struct rk_perf_params *k,
		       const struct rk_perf_env *env, const struct rk_plan *plan,
		       const struct rk_placement *pl, struct rk_perf_breakdown *o)
{
	int tp = plan->tp, pp = plan->pp, dp = plan->dp, nmb = plan->ga;
	double P = m->params / MIB;
	double eff_tp = eff_tp_of(env, tp);
	double f_mb = k->fwd_fixed_ms / pp + fwd_rate_ms(m, k, env) * plan->mb / (pp * eff_tp);
	double re = plan->gc ? env->recompute_factor : 0;
	double act_mb = (double)plan->mb * m->seq_len * m->hidden * env->act_bytes / MIB;
	double tp_mb = 0;
	if (tp > 1)
		tp_mb = (4.0 + 2.0 * plan->gc) * ((double)m->layers / pp) * act_mb * 2.0 *
			(tp - 1) / tp / env->nvlink_gbps;
	double pp_mb = pp > 1 ? p2p_ms(env, pl, dp, tp, pp, act_mb) : 0;
	double slots = nmb + pp - 1;
	double t_dp = allreduce_ms(env, pl, dp, tp, pp, env->grad_bytes * P / ((double)tp * pp));
	double last_bwd = f_mb * k->k_bwd;
	double t_sync = ov_pnorm(t_dp, last_bwd, k->k_sync) - last_bwd;
	double t_opt = k->k_opt * P / ((double)tp * pp);
	o->fwd_ms = slots * f_mb * (1.0 + re);
	o->comm_ms = slots * (tp_mb + pp_mb) + t_sync;
	o->sync_ms = slots * (f_mb * k->k_bwd + tp_mb + pp_mb) + t_sync;
	o->opt_ms = t_opt;
	o->iter_ms = o->fwd_ms + o->sync_ms + o->opt_ms + k->k_const;
}

int rk_perf_predict_detail(const struct rk_model *m, const struct rk_perf_params *k,
			   const struct rk_perf_env *env, const struct rk_plan *plan,
			   const struct rk_placement *pl, int cpus_per_gpu,
			   struct rk_perf_breakdown *out)
{
	int g = 0;
	int rc = check_inputs(m, k, env, plan, pl, cpus_per_gpu, &g);
	if (rc < 0)
		return rc;
	struct rk_perf_breakdown o;
	if (plan->tp > 1 || plan->pp > 1)
		predict_3d(m, k, env, plan, pl, &o);
	else
		predict_dp(m, k, env, plan, pl, cpus_per_gpu, &o);
	if (!isfinite(o.iter_ms) || o.iter_ms <= 0)
		return RK_ERANGE;
	if (out)
		*out = o;
	return 0;
}

int rk_perf_predict(const struct rk_model *m, const struct rk_perf_params *k,
		    const struct rk_perf_env *env, const struct rk_plan *plan,
		    const struct rk_placement *pl, int cpus_per_gpu, double *iter_ms)
{
	struct rk_perf_breakdown o;
	int rc = rk_perf_predict_detail(m, k, env, plan, pl, cpus_per_gpu, &o);
	if (rc < 0)
		return rc;
	if (iter_ms)
		*iter_ms = o.iter_ms;
	return 0;
}
