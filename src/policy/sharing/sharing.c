/*
 * Co-location models (sharing.h): the SJF-BSBF pairwise test and sub-batch
 * choice (docs/references.md §3.3-§3.4), the interference table with its fallback
 * chain, and the SJF-BCO contention model (§4.2). Pure functions; the
 * simulator and the policies call them. docs/sharing.md has the derivations.
 */
#include "rubick/sharing.h"

#include "rubick/memory.h"
#include "rubick/perf.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- §3.3 ------------------------------------------------------------------- */

int rk_pair_evaluate(double e_a_s, double e_b_s, double xi_a, double xi_b,
		     struct rk_pair_outcome *out, struct rk_error *err)
{
	if (!(e_a_s >= 0) || !isfinite(e_a_s))
		return rk_error_set(err, RK_EINVAL, "pair test: E_a = %g s (need finite >= 0)",
				    e_a_s);
	if (!(e_b_s >= 0) || !isfinite(e_b_s))
		return rk_error_set(err, RK_EINVAL, "pair test: E_b = %g s (need finite >= 0)",
				    e_b_s);
	if (!(xi_a >= 1) || !isfinite(xi_a) || !(xi_b >= 1) || !isfinite(xi_b))
		return rk_error_set(err, RK_EINVAL, "pair test: xi_a = %g, xi_b = %g (need finite "
				    ">= 1)", xi_a, xi_b);
	/*
	 * §3.3: both start sharing now. The one whose shared run ends first (x)
	 * finishes at xi_x E_x; the other (y) has then done xi_x E_x / xi_y of
	 * its exclusive work and runs the rest alone: it ends at
	 * xi_x E_x + E_y - xi_x E_x / xi_y. Half the sum of both JCTs.
	 */
	double t_con;
	if (xi_a * e_a_s >= xi_b * e_b_s)
		t_con = 0.5 * e_a_s + (1.0 - 1.0 / (2.0 * xi_a)) * xi_b * e_b_s;
	else
		t_con = 0.5 * e_b_s + (1.0 - 1.0 / (2.0 * xi_b)) * xi_a * e_a_s;
	out->t_con_s = t_con;
	out->t_seq_s = e_b_s + 0.5 * e_a_s;
	out->benefit_s = out->t_seq_s - t_con;
	out->share = t_con < out->t_seq_s;
	return 0;
}

#define GROUP_MAX 64 /* partners simulated at once; more are refused (RK_ERANGE) */

int rk_group_evaluate(double e_a_s, double slow_a, int free_gpus, const struct rk_share_partner *p,
                      int k, double wait_s, double queue_w, struct rk_pair_outcome *out,
                      struct rk_error *err)
{
	if (k < 1 || k > GROUP_MAX || !p)
		return rk_error_set(err, k > GROUP_MAX ? RK_ERANGE : RK_EINVAL,
		                    "group test: %d partners (need 1..%d)", k, GROUP_MAX);
	if (!(e_a_s >= 0) || !isfinite(e_a_s) || !(wait_s >= 0) || !isfinite(wait_s) ||
	    !(slow_a >= 1) || !isfinite(slow_a) || !(queue_w >= 0) || !isfinite(queue_w) ||
	    free_gpus < 0)
		return rk_error_set(err, RK_EINVAL,
		                    "group test: E_a = %g s, wait %g s, slow %g, "
		                    "queue weight %g, %d free GPUs (need finite, >= 0, slow >= 1)",
		                    e_a_s, wait_s, slow_a, queue_w, free_gpus);
	double left[GROUP_MAX], seq = wait_s + e_a_s, con = 0;
	int done[GROUP_MAX];
	for (int i = 0; i < k; i++) {
		if (!(p[i].r_s >= 0) || !isfinite(p[i].r_s) || !(p[i].xi_a >= 1) ||
		    !isfinite(p[i].xi_a) || !(p[i].rel >= 1) || !isfinite(p[i].rel) ||
		    p[i].shared < 1 || p[i].shared > p[i].gpus)
			return rk_error_set(err, RK_EINVAL,
			                    "group test: partner %d: %g s left, xi_a "
			                    "%g, rel %g, %d of %d GPUs shared (need finite, >= 0, "
			                    "factors >= 1, 1 <= shared <= GPUs)",
			                    i, p[i].r_s, p[i].xi_a, p[i].rel, p[i].shared,
			                    p[i].gpus);
		left[i] = p[i].r_s;
		done[i] = 0;
		seq += p[i].r_s;
	}
	/*
	 * Event by event: between two ends every rate is constant (a at the
	 * slowest remaining pair's, each partner at rel x its present one), so
	 * each step ends the job that finishes first. At most k + 1 steps.
	 */
	double t = 0, a_left = e_a_s, lost = 0;
	int alive = k, g_a = free_gpus;
	for (int i = 0; i < k; i++)
		g_a += p[i].shared;
	while (alive > 0) {
		double fa = 1.0, dt = INFINITY;
		int who = -1;
		for (int i = 0; i < k; i++)
			if (!done[i]) {
				fa = p[i].xi_a > fa ? p[i].xi_a : fa;
				if (left[i] * p[i].rel < dt) {
					dt = left[i] * p[i].rel;
					who = i;
				}
			}
		fa *= slow_a;
		double step = a_left * fa <= dt ? a_left * fa : dt, rate = free_gpus * (1 - 1 / fa);
		for (int i = 0; i < k; i++)
			if (!done[i])
				rate += p[i].shared * (1 - 1 / fa - 1 / p[i].rel) +
				        (p[i].gpus - p[i].shared) * (1 - 1 / p[i].rel);
		lost += rate * step;
		if (a_left * fa <= dt) /* a ends first: the partners run on, alone again */
			break;
		t += dt;
		a_left -= dt / fa;
		for (int i = 0; i < k; i++)
			if (!done[i] && i != who) {
				left[i] -= dt / p[i].rel;
				left[i] = left[i] > 0 ? left[i] : 0; /* a tie ends next step */
			}
		done[who] = 1;
		con += t;
		alive--;
	}
	if (alive > 0) {
		double fa = 1.0;
		for (int i = 0; i < k; i++)
			if (!done[i] && p[i].xi_a > fa)
				fa = p[i].xi_a;
		double ta = a_left * fa * slow_a;
		t += ta;
		con += t; /* a's JCT */
		for (int i = 0; i < k; i++)
			if (!done[i])
				con += t + (left[i] - ta / p[i].rel); /* alone from a's end */
	} else {
		con += t + a_left * slow_a; /* a alone after its last partner */
		lost += g_a * (1 - 1 / slow_a) * a_left * slow_a;
	}
	con += queue_w * lost;
	out->t_con_s = 0.5 * con;
	out->t_seq_s = 0.5 * seq;
	out->benefit_s = out->t_seq_s - out->t_con_s;
	out->share = out->t_con_s < out->t_seq_s;
	return 0;
}

/* ---- sub-batch choice (§3.2, §3.4 line 9) ----------------------------------- */

int rk_subbatch_options(const struct rk_model *m, int global_batch, const struct rk_plan *base,
			double partner_mb, int64_t gpu_mem_mb, const struct rk_perf_env *env,
			struct rk_subbatch *out, int max, struct rk_error *err)
{
	if (!m || !base || global_batch < 1 || base->dp < 1 || !(partner_mb >= 0) ||
	    gpu_mem_mb < 1 || max < 0)
		return rk_error_set(err, RK_EINVAL, "sub-batch choice: bad arguments (batch %d, "
				    "partner %g MiB, GPU %lld MiB)", global_batch, partner_mb,
				    (long long)gpu_mem_mb);
	int per_replica = base->mb * base->ga;
	if (per_replica * base->dp != global_batch)
		return rk_error_set(err, RK_EINVAL, "sub-batch choice: plan mb*ga*dp = %d, global "
				    "batch %d", per_replica * base->dp, global_batch);
	double base_ms = 0;
	struct rk_placement pl = {0};
	int gpus = base->dp * base->tp * base->pp;
	if (env && gpus <= RK_NODE_MAX_GPUS) {
		/* One node: the ratio is about accumulation, not about where the GPUs are. */
		pl.n_nodes = 1;
		pl.gpus[0] = gpus;
		if (rk_perf_predict(m, &m->perf, env, base, &pl, 1, &base_ms) || !(base_ms > 0))
			base_ms = 0;
	}
	int k = 0;
	for (int ga = 1; ga <= per_replica && k < max; ga++) {
		if (per_replica % ga)
			continue;
		struct rk_plan p = *base;
		p.ga = ga;
		p.mb = per_replica / ga;
		struct rk_mem_usage mu;
		struct rk_error merr;
		if (rk_memory_estimate(m, &p, &mu, &merr))
			continue; /* a plan the memory model cannot price is not a candidate */
		if (mu.gpu_mb + partner_mb > (double)gpu_mem_mb)
			continue;
		double slow = 1.0;
		double ms = 0;
		if (base_ms > 0 && !rk_perf_predict(m, &m->perf, env, &p, &pl, 1, &ms) && ms > 0)
			slow = ms / base_ms;
		out[k++] = (struct rk_subbatch){.plan = p, .mem_mb = mu.gpu_mb, .slow = slow};
	}
	return k;
}

/* ---- interference table ------------------------------------------------------ */

struct rk_xi_family {
	char gpu[RK_XI_GPU_MAX];
	char fa[RK_XI_TYPE_MAX], fb[RK_XI_TYPE_MAX];
	double sum;
	int n;
};

void rk_xi_table_init(struct rk_xi_table *t)
{
	memset(t, 0, sizeof(*t));
	t->median = RK_XI_NO_DATA;
}

void rk_xi_table_fini(struct rk_xi_table *t)
{
	if (!t)
		return;
	free(t->v);
	free(t->fam);
	free(t->gpu_median);
	free(t->gpu_names);
	free(t->nc);
	rk_xi_table_init(t);
}

static void copy_str(char *dst, const char *src, size_t cap)
{
	size_t n = strnlen(src, cap - 1);
	memcpy(dst, src, n);
	dst[n] = '\0';
}

int rk_xi_table_add(struct rk_xi_table *t, const struct rk_xi_entry *e, struct rk_error *err)
{
	if (!e->gpu_type[0] || !e->a[0] || !e->b[0])
		return rk_error_set(err, RK_EINVAL, "interference entry without GPU type or job type");
	if (!(e->xi_a >= 1.0) || !isfinite(e->xi_a))
		return rk_error_set(err, RK_EINVAL, "interference %s with %s on %s: xi %g (need "
				    "finite >= 1)", e->a, e->b, e->gpu_type, e->xi_a);
	if (t->n == t->cap) {
		int ncap = t->cap ? 2 * t->cap : 256;
		struct rk_xi_entry *v = realloc(t->v, (size_t)ncap * sizeof(*v));
		if (!v)
			return rk_error_set(err, RK_ENOMEM, "interference table: out of memory");
		t->v = v;
		t->cap = ncap;
	}
	t->v[t->n++] = *e;
	t->finished = 0;
	return 0;
}

int rk_xi_table_add_nocorun(struct rk_xi_table *t, const struct rk_xi_entry *e,
                            struct rk_error *err)
{
	if (!e->gpu_type[0] || !e->a[0] || !e->b[0])
		return rk_error_set(err, RK_EINVAL,
		                    "interference entry without GPU type or job type");
	if (t->n_nc == t->cap_nc) {
		int ncap = t->cap_nc ? 2 * t->cap_nc : 64;
		struct rk_xi_entry *v = realloc(t->nc, (size_t)ncap * sizeof(*v));
		if (!v)
			return rk_error_set(err, RK_ENOMEM, "interference table: out of memory");
		t->nc = v;
		t->cap_nc = ncap;
	}
	t->nc[t->n_nc] = *e;
	t->nc[t->n_nc++].xi_a = 1.0;
	t->finished = 0;
	return 0;
}

static int entry_cmp(const struct rk_xi_entry *x, const char *gpu, const char *a, int sfa,
		     const char *b, int sfb)
{
	int c = strcmp(x->gpu_type, gpu);
	if (!c)
		c = strcmp(x->a, a);
	if (!c)
		c = (x->sf_a > sfa) - (x->sf_a < sfa);
	if (!c)
		c = strcmp(x->b, b);
	if (!c)
		c = (x->sf_b > sfb) - (x->sf_b < sfb);
	return c;
}

static int by_entry(const void *p, const void *q)
{
	const struct rk_xi_entry *y = q;
	return entry_cmp(p, y->gpu_type, y->a, y->sf_a, y->b, y->sf_b);
}

static int by_double(const void *p, const void *q)
{
	double x = *(const double *)p, y = *(const double *)q;
	return (x > y) - (x < y);
}

/* Aliases of model names outside Gavel's table (Muri / SJF-BSBF traces). */
static const char *const aliases[][2] = {
	{"vgg", "resnet50"},   {"shufflenet", "resnet18"}, {"mobilenet", "resnet18"},
	{"inception", "resnet50"}, {"bert", "transformer"}, {"roberta", "transformer"},
	{"t5", "transformer"}, {"gpt", "lm"}, {"lstm", "lm"}, {"dqn", "a3c"}, {"a2c", "a3c"},
	{"ncf", "recommendation"}, {"deepspeech", "transformer"},
};

void rk_xi_family_of(const char *type, char *buf, int cap)
{
	int k = 0;
	const char *end = strstr(type, "(batch size");
	for (const char *s = type; *s && (!end || s < end) && k < cap - 1; s++)
		if (isalnum((unsigned char)*s))
			buf[k++] = (char)tolower((unsigned char)*s);
	buf[k] = '\0';
	for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (!strncmp(buf, aliases[i][0], strlen(aliases[i][0]))) {
			copy_str(buf, aliases[i][1], (size_t)cap);
			return;
		}
}

static double median_of(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), by_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static int fam_find(const struct rk_xi_table *t, const char *gpu, const char *fa, const char *fb)
{
	for (int i = 0; i < t->n_fam; i++)
		if ((!gpu || !strcmp(t->fam[i].gpu, gpu)) && !strcmp(t->fam[i].fa, fa) &&
		    !strcmp(t->fam[i].fb, fb))
			return i;
	return -1;
}

int rk_xi_table_finish(struct rk_xi_table *t)
{
	free(t->fam);
	free(t->gpu_median);
	free(t->gpu_names);
	t->fam = NULL;
	t->gpu_median = NULL;
	t->gpu_names = NULL;
	t->n_fam = t->n_gpu = 0;
	t->median = RK_XI_NO_DATA;
	if (t->n_nc > 0)
		qsort(t->nc, (size_t)t->n_nc, sizeof(*t->nc), by_entry);
	if (t->n == 0) {
		t->finished = 1;
		return 0;
	}
	qsort(t->v, (size_t)t->n, sizeof(*t->v), by_entry);
	double *xs = malloc((size_t)t->n * sizeof(*xs));
	t->fam = calloc((size_t)t->n, sizeof(*t->fam));
	t->gpu_median = calloc((size_t)t->n, sizeof(*t->gpu_median));
	t->gpu_names = calloc((size_t)t->n, sizeof(*t->gpu_names));
	if (!xs || !t->fam || !t->gpu_median || !t->gpu_names) {
		free(xs);
		return RK_ENOMEM;
	}
	for (int i = 0; i < t->n; i++)
		xs[i] = t->v[i].xi_a;
	t->median = median_of(xs, t->n);
	/* Entries are sorted by GPU type first: one median per run of equal types. */
	for (int i = 0; i < t->n;) {
		int j = i, m = 0;
		while (j < t->n && !strcmp(t->v[j].gpu_type, t->v[i].gpu_type))
			xs[m++] = t->v[j++].xi_a;
		copy_str(t->gpu_names[t->n_gpu], t->v[i].gpu_type, RK_XI_GPU_MAX);
		t->gpu_median[t->n_gpu++] = median_of(xs, m);
		i = j;
	}
	free(xs);
	/* Family means per GPU type (a handful of families: a linear scan is enough). */
	for (int i = 0; i < t->n; i++) {
		char fa[RK_XI_TYPE_MAX], fb[RK_XI_TYPE_MAX];
		rk_xi_family_of(t->v[i].a, fa, RK_XI_TYPE_MAX);
		rk_xi_family_of(t->v[i].b, fb, RK_XI_TYPE_MAX);
		int k = fam_find(t, t->v[i].gpu_type, fa, fb);
		if (k < 0) {
			k = t->n_fam++;
			copy_str(t->fam[k].gpu, t->v[i].gpu_type, RK_XI_GPU_MAX);
			copy_str(t->fam[k].fa, fa, RK_XI_TYPE_MAX);
			copy_str(t->fam[k].fb, fb, RK_XI_TYPE_MAX);
		}
		t->fam[k].sum += t->v[i].xi_a;
		t->fam[k].n++;
	}
	t->finished = 1;
	return 0;
}

double rk_xi_lookup(const struct rk_xi_table *t, const char *gpu_type, const char *a, int sf_a,
		    const char *b, int sf_b, enum rk_xi_how *how)
{
	enum rk_xi_how h = RK_XI_DEFAULT;
	double xi = RK_XI_NO_DATA;
	if (!t || t->n == 0 || !t->finished)
		goto out;
	struct rk_xi_entry key = {0};
	copy_str(key.gpu_type, gpu_type, RK_XI_GPU_MAX);
	copy_str(key.a, a, RK_XI_TYPE_MAX);
	copy_str(key.b, b, RK_XI_TYPE_MAX);
	key.sf_a = sf_a;
	key.sf_b = sf_b;
	const struct rk_xi_entry *e = bsearch(&key, t->v, (size_t)t->n, sizeof(*t->v), by_entry);
	if (e) {
		h = RK_XI_EXACT;
		xi = e->xi_a;
		goto out;
	}
	char fa[RK_XI_TYPE_MAX], fb[RK_XI_TYPE_MAX];
	rk_xi_family_of(a, fa, RK_XI_TYPE_MAX);
	rk_xi_family_of(b, fb, RK_XI_TYPE_MAX);
	int k = fam_find(t, key.gpu_type, fa, fb);
	if (k >= 0) {
		h = RK_XI_FAMILY;
		xi = t->fam[k].sum / t->fam[k].n;
		goto out;
	}
	double sum = 0;
	int n = 0;
	for (int i = 0; i < t->n_fam; i++)
		if (!strcmp(t->fam[i].fa, fa) && !strcmp(t->fam[i].fb, fb)) {
			sum += t->fam[i].sum;
			n += t->fam[i].n;
		}
	if (n > 0) {
		h = RK_XI_FAMILY_ANY;
		xi = sum / n;
		goto out;
	}
	for (int i = 0; i < t->n_gpu; i++)
		if (!strcmp(t->gpu_names[i], key.gpu_type)) {
			h = RK_XI_GPU_MEDIAN;
			xi = t->gpu_median[i];
			goto out;
		}
	h = RK_XI_MEDIAN;
	xi = t->median;
out:
	if (how)
		*how = h;
	return xi;
}

/* The entry of (a, b) in v[n] (sorted by by_entry), NULL if none. */
static const struct rk_xi_entry *entry_find(const struct rk_xi_entry *v, int n, const char *gpu,
                                            const char *a, int sf_a, const char *b, int sf_b)
{
	if (n == 0)
		return NULL;
	struct rk_xi_entry key = {0};
	copy_str(key.gpu_type, gpu, RK_XI_GPU_MAX);
	copy_str(key.a, a, RK_XI_TYPE_MAX);
	copy_str(key.b, b, RK_XI_TYPE_MAX);
	key.sf_a = sf_a;
	key.sf_b = sf_b;
	return bsearch(&key, v, (size_t)n, sizeof(*v), by_entry);
}

int rk_xi_table_measures(const struct rk_xi_table *t, const char *gpu_type)
{
	if (!t || !t->finished)
		return 0;
	for (int i = 0; i < t->n_gpu; i++)
		if (!strcmp(t->gpu_names[i], gpu_type))
			return 1;
	int lo = 0, hi = t->n_nc; /* sorted by GPU type first */
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (strcmp(t->nc[mid].gpu_type, gpu_type) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->n_nc && !strcmp(t->nc[lo].gpu_type, gpu_type);
}

int rk_xi_corun(const struct rk_xi_table *t, const char *gpu_type, const char *a, int sf_a,
                const char *b, int sf_b)
{
	if (!rk_xi_table_measures(t, gpu_type))
		return 0; /* nothing measured on this GPU type: no lookups */
	/* A failure measured either way round wins: the pair did not fit together. */
	if (entry_find(t->nc, t->n_nc, gpu_type, a, sf_a, b, sf_b) ||
	    entry_find(t->nc, t->n_nc, gpu_type, b, sf_b, a, sf_a))
		return -1;
	if (entry_find(t->v, t->n, gpu_type, a, sf_a, b, sf_b) ||
	    entry_find(t->v, t->n, gpu_type, b, sf_b, a, sf_a))
		return 1;
	return 0;
}

static uint64_t fnv(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

uint64_t rk_xi_hash(const char *s)
{
	return fnv(0xcbf29ce484222325ULL, s);
}

double rk_xi_lookup_memo_h(struct rk_xi_memo *m, const struct rk_xi_table *t,
			   const char *gpu_type, const char *a, uint64_t ha, int sf_a, const char *b,
			   uint64_t hb, int sf_b)
{
	if (m->table != t) {
		memset(m->slot, 0, sizeof(m->slot));
		m->table = t;
	}
	uint64_t h = (ha * 0x9e3779b97f4a7c15ULL) ^ (hb + 0x632be59bd9b4e019ULL);
	h = (h ^ (uint64_t)(unsigned)sf_a * 0xbf58476d1ce4e5b9ULL) * 0x100000001b3ULL;
	h = (h ^ (uint64_t)(unsigned)sf_b) * 0x94d049bb133111ebULL;
	h ^= fnv(0xcbf29ce484222325ULL, gpu_type); /* GPU type names are a few letters */
	/*
	 * Four ways per set: keys that share a set (a trace's few dozen job
	 * types x GPU counts fill a good part of the table) no longer evict each
	 * other on every alternate question. An empty way is taken first, else
	 * one chosen by the hash, so runs stay deterministic.
	 */
	struct rk_xi_memo_slot *set = &m->slot[((h >> 17) % (RK_XI_MEMO_SLOTS / 4)) * 4], *s = NULL;
	for (int k = 0; k < 4; k++) {
		struct rk_xi_memo_slot *x = &set[k];
		if (!x->used) {
			if (!s)
				s = x;
			continue;
		}
		if (x->key == h && x->sf_a == sf_a && x->sf_b == sf_b && !strcmp(x->a, a) &&
		    !strcmp(x->b, b) && !strcmp(x->gpu_type, gpu_type))
			return x->xi;
	}
	if (!s)
		s = &set[(h >> 45) & 3];
	double xi = rk_xi_lookup(t, gpu_type, a, sf_a, b, sf_b, NULL);
	if (strlen(gpu_type) < RK_XI_GPU_MAX && strlen(a) < RK_XI_TYPE_MAX &&
	    strlen(b) < RK_XI_TYPE_MAX) {
		s->used = 1;
		s->key = h;
		s->sf_a = sf_a;
		s->sf_b = sf_b;
		memcpy(s->gpu_type, gpu_type, strlen(gpu_type) + 1); /* lengths checked above */
		memcpy(s->a, a, strlen(a) + 1);
		memcpy(s->b, b, strlen(b) + 1);
		s->xi = xi;
	}
	return xi;
}

double rk_xi_lookup_memo(struct rk_xi_memo *m, const struct rk_xi_table *t, const char *gpu_type,
			 const char *a, int sf_a, const char *b, int sf_b)
{
	return rk_xi_lookup_memo_h(m, t, gpu_type, a, rk_xi_hash(a), sf_a, b, rk_xi_hash(b), sf_b);
}

/* ---- §4.2 ------------------------------------------------------------------ */

int rk_contention_degrees(const struct rk_alloc *const *allocs, int n, int n_nodes, int *p,
			  struct rk_error *err)
{
	int *k = calloc((size_t)(n_nodes > 0 ? n_nodes : 1), sizeof(*k));
	if (!k)
		return rk_error_set(err, RK_ENOMEM, "contention: out of memory");
	int rc = 0;
	for (int j = 0; j < n && !rc; j++) {
		const struct rk_alloc *a = allocs[j];
		for (int s = 0; a && s < a->n; s++)
			if (a->shares[s].node < 0 || a->shares[s].node >= n_nodes)
				rc = rk_error_set(err, RK_EINVAL, "contention: job %d holds node %d of "
						  "%d", j, a->shares[s].node, n_nodes);
		if (!rc && a && a->n >= 2)
			for (int s = 0; s < a->n; s++)
				k[a->shares[s].node]++;
	}
	for (int j = 0; j < n && !rc; j++) {
		const struct rk_alloc *a = allocs[j];
		p[j] = 0;
		if (a && a->n >= 2)
			for (int s = 0; s < a->n; s++)
				if (k[a->shares[s].node] > p[j])
					p[j] = k[a->shares[s].node];
	}
	free(k);
	return rc;
}

int rk_rar_iter_s(const struct rk_rar_job *j, int p, double b_in_gbps, double b_ex_gbps,
		  double overhead_s, double *iter_s, struct rk_error *err)
{
	if (!(j->compute_s >= 0) || !isfinite(j->compute_s) || !(j->grad_gb >= 0) ||
	    !isfinite(j->grad_gb))
		return rk_error_set(err, RK_EINVAL, "ring all-reduce: compute %g s, gradients %g GB "
				    "(need finite >= 0)", j->compute_s, j->grad_gb);
	if (j->gpus < 1 || j->servers < 1 || j->servers > j->gpus)
		return rk_error_set(err, RK_EINVAL, "ring all-reduce: %d GPUs on %d servers",
				    j->gpus, j->servers);
	if (!(b_in_gbps > 0) || !(b_ex_gbps > 0) || !(overhead_s >= 0))
		return rk_error_set(err, RK_EINVAL, "ring all-reduce: b_in %g GB/s, b_ex %g GB/s, "
				    "overhead %g s (need bandwidths > 0, overhead >= 0)", b_in_gbps,
				    b_ex_gbps, overhead_s);
	/* Each worker sends and receives 2(G-1) chunks of m/G (reduce-scatter + all-gather). */
	double volume = 2.0 * (j->gpus - 1) / j->gpus * j->grad_gb;
	if (j->servers == 1) {
		*iter_s = j->compute_s + volume / b_in_gbps;
		return 0;
	}
	if (p < 1)
		return rk_error_set(err, RK_EINVAL, "ring all-reduce: contention degree %d for a "
				    "job on %d servers (need >= 1)", p, j->servers);
	*iter_s = j->compute_s + volume * p / b_ex_gbps + (j->servers - 1) * overhead_s;
	return 0;
}
