/*
 * The memory model (docs/memory-model.md). Mixed-precision Adam: 2 bytes of
 * fp16 weights, 2 of fp16 gradients and 12 of fp32 optimizer state (master
 * weights, momentum, variance) per parameter, partitioned over the data-parallel
 * group by ZeRO stage (Rajbhandari et al. 2020, §5 "2Ψ + 2Ψ + KΨ, K = 12").
 * ZeRO-Offload keeps the fp16 weights on the GPU and moves the fp16 gradients
 * and the optimizer state to host memory (Ren et al. 2021, §4.1: 2Ψ on GPU,
 * 14Ψ on CPU). Activations follow Korthikanti et al. 2022 (Eq. 2 and §4.3).
 */
#include "rubick/memory.h"

#include <math.h>

#define MIB (1024.0 * 1024.0)

static int check_model(const struct rk_model *m, struct rk_error *err)
{
	if (!m)
		return rk_error_set(err, RK_EINVAL, "memory model: no model given");
	if (m->layers < 1 || m->hidden < 1 || m->heads < 1 || m->seq_len < 1)
		return rk_error_set(err, RK_EINVAL,
				    "model '%s': layers, hidden, heads and seq_len must be >= 1 "
				    "(got %d, %d, %d, %d)",
				    m->name, m->layers, m->hidden, m->heads, m->seq_len);
	if (m->vocab < 0)
		return rk_error_set(err, RK_EINVAL, "model '%s': vocab must be >= 0 (got %d)",
				    m->name, m->vocab);
	if (!(m->params > 0) || !isfinite(m->params))
		return rk_error_set(err, RK_EINVAL, "model '%s': params must be > 0", m->name);
	return RK_OK;
}

static int check_plan(const struct rk_plan *p, struct rk_error *err)
{
	if (!p)
		return rk_error_set(err, RK_EINVAL, "memory model: no plan given");
	if (p->dp < 1 || p->tp < 1 || p->pp < 1 || p->mb < 1 || p->ga < 1)
		return rk_error_set(err, RK_EINVAL,
				    "plan: dp, tp, pp, mb and ga must be >= 1");
	if (p->zero < 0 || p->zero > 3 || p->gc < 0 || p->gc > 1 || p->offload < 0 ||
	    p->offload > 1)
		return rk_error_set(err, RK_EINVAL, "plan: zero, gc or offload out of range");
	return RK_OK;
}

/*
 * Activation bytes one transformer layer keeps for backward for one micro-batch
 * of b samples, tensor parallel t without sequence parallelism (Korthikanti et
 * al. 2022, Eq. 2): s*b*h*(10 + 24/t + 5*a*s/(h*t)); t = 1 gives the familiar
 * s*b*h*(34 + 5*a*s/h).
 */
static double layer_activ_bytes(const struct rk_model *m, double b, double t)
{
	double s = m->seq_len, h = m->hidden, a = m->heads;
	return s * b * h * (10.0 + 24.0 / t + 5.0 * a * s / (h * t));
}

/*
 * Activations of the worst pipeline stage. With 1F1B the first stage holds
 * min(pp, ga) micro-batches in flight, the last holds one plus the fp32 logits
 * of the loss (4*s*b*v/t bytes, Korthikanti §4.3). With full checkpointing a
 * layer keeps only its fp16 input (2*s*b*h) and one layer's full working set is
 * rebuilt at a time during the backward pass.
 */
static double activ_bytes(const struct rk_model *m, const struct rk_plan *p)
{
	double b = p->mb, t = p->tp;
	double layers = ceil((double)m->layers / p->pp);
	double full = layer_activ_bytes(m, b, t);
	double kept = p->gc ? 2.0 * m->seq_len * b * m->hidden : full;
	double work = p->gc ? full : 0.0;
	double in_flight = p->pp > 1 ? (p->ga < p->pp ? p->ga : p->pp) : 1;
	double logits = 4.0 * m->seq_len * b * (double)m->vocab / t;
	double first = in_flight * layers * kept + work;
	double last = layers * kept + work + logits;
	if (p->pp == 1)
		return first + logits;
	return first > last ? first : last;
}

/*
 * Parameters of the busiest pipeline stage before the tensor split. Megatron
 * gives the first stage the word embedding (v*h) and the last stage the output
 * layer (untied) or a copy of the embedding (tied, Shoeybi et al. 2019 §3), so
 * both carry v*h beside their ceil(L/p) transformer layers; the rest of the
 * parameters is spread evenly over the L layers. With p = 1 this is params.
 */
static double stage_params(const struct rk_model *m, const struct rk_plan *p)
{
	if (p->pp == 1)
		return m->params;
	double embed = (double)m->vocab * m->hidden;
	double body = m->params - embed;
	if (body <= 0) /* structure inconsistent with the count: spread evenly */
		return m->params / p->pp;
	double layers = ceil((double)m->layers / p->pp);
	return body * layers / m->layers + embed;
}

int rk_memory_estimate(const struct rk_model *model, const struct rk_plan *plan,
		       struct rk_mem_usage *out, struct rk_error *err)
{
	int rc = check_model(model, err);
	if (rc)
		return rc;
	if ((rc = check_plan(plan, err)))
		return rc;

	double psi = stage_params(model, plan) / plan->tp;
	double dp = plan->dp;
	struct rk_mem_usage u = {0};

	u.weights_mb = 2.0 * psi / (plan->zero >= 3 ? dp : 1.0) / MIB;
	double grads = 2.0 * psi / (plan->zero >= 2 ? dp : 1.0);
	double optim = 12.0 * psi / (plan->zero >= 1 ? dp : 1.0);
	if (plan->offload) {
		/* ZeRO-Offload: gradients leave the GPU bucket by bucket. */
		double bucket = RK_MEM_OFFLOAD_BUCKET_MB * MIB;
		u.host_mb = (2.0 * psi / dp + 12.0 * psi / dp) / MIB;
		grads = grads < bucket ? grads : bucket;
		optim = 0.0;
	}
	u.grads_mb = grads / MIB;
	u.optim_mb = optim / MIB;
	u.activ_mb = activ_bytes(model, plan) / MIB;
	u.reserve_mb = RK_MEM_RESERVE_MB;
	u.gpu_mb = u.weights_mb + u.grads_mb + u.optim_mb + u.activ_mb + u.reserve_mb;
	if (out)
		*out = u;
	return RK_OK;
}

static int max_node_gpus(const struct rk_placement *pl)
{
	int most = 0;
	for (int i = 0; i < pl->n_nodes; i++)
		if (pl->gpus[i] > most)
			most = pl->gpus[i];
	return most;
}

int rk_memory_check(const struct rk_model *model, const struct rk_plan *plan,
		    const struct rk_placement *pl, int64_t gpu_mem_mb, int64_t host_mem_mb,
		    struct rk_mem_usage *out, struct rk_error *err)
{
	struct rk_mem_usage u;
	int rc = rk_memory_estimate(model, plan, &u, err);
	if (rc)
		return rc;
	if (out)
		*out = u;
	if (gpu_mem_mb < 1 || host_mem_mb < 0)
		return rk_error_set(err, RK_EINVAL,
				    "memory limits must be positive (gpu %lld MiB, host %lld MiB)",
				    (long long)gpu_mem_mb, (long long)host_mem_mb);
	if (gpu_mem_mb != RK_MEM_UNLIMITED && u.gpu_mb > (double)gpu_mem_mb)
		return rk_error_set(err, RK_EINFEASIBLE,
				    "needs %.0f MiB per GPU (weights %.0f, gradients %.0f, "
				    "optimizer %.0f, activations %.0f, reserve %.0f) > %lld MiB",
				    u.gpu_mb, u.weights_mb, u.grads_mb, u.optim_mb, u.activ_mb,
				    u.reserve_mb, (long long)gpu_mem_mb);
	if (host_mem_mb != RK_MEM_UNLIMITED && u.host_mb > 0) {
		if (!pl || pl->n_nodes < 1)
			return rk_error_set(err, RK_EINVAL,
					    "host memory check needs the placement");
		int most = max_node_gpus(pl);
		if (u.host_mb * most > (double)host_mem_mb)
			return rk_error_set(err, RK_EINFEASIBLE,
					    "needs %.0f MiB of host memory on a node (%d GPUs x "
					    "%.0f MiB offloaded) > %lld MiB",
					    u.host_mb * most, most, u.host_mb,
					    (long long)host_mem_mb);
	}
	return RK_OK;
}
