/*
 * The Pollux policy's default cluster-wide search (pollux.c): water-filling
 * of GPUs by the best gain of the power mean per GPU, then a bounded local
 * search. It optimises the same objective as the artifact's genetic
 * algorithm (pollux_ga.c; Qiao et al., OSDI 2021, §4.2, Eq. 5) over GPU
 * counts per job instead of jobs x nodes matrices: a job's speedup depends
 * on its node count and replicas only, and packing on the fewest nodes
 * (pollux.c) realises a count at its best node count where it can, so the
 * search needs no matrix. Cost grows with GPUs and candidates, not with
 * jobs x nodes.
 *
 * Why greedy is near-exact here: the power mean's sum, Σ_j f(v_j) with f
 * increasing and concave for p <= 1, is separable over jobs and the only
 * coupling is each type's GPU count, a knapsack whose greedy by gain per
 * unit is optimal when each job's f(v(g)) is concave in g; jumps to any
 * larger candidate (not only the next) cover non-concave steps (a count
 * that crosses a node boundary, a restart factor on every count but the one
 * held), and the local search repairs what the ratio rule misses at the end
 * of a type's capacity. tests/unit/policy/test_pollux_search.c scores it
 * against the GA and the exact search on the same rounds (mean gap to the
 * exact optimum 2.5% against the GA's 0.7% there: packing arbitrary counts on
 * 4-GPU nodes fragments, which a count-based search does not see).
 */
#include "policy/pollux/pollux_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double pollux_term(double p, double value)
{
	if (!(value > 0))
		value = 0;
	if (p == 0)
		return log(value > POLLUX_MEAN_EPS ? value : POLLUX_MEAN_EPS);
	double t = pow(value + POLLUX_MEAN_EPS, p);
	return p < 0 ? -t : t;
}

struct entry {
	double key; /* gain per GPU */
	int job, to;
};

struct heap {
	struct entry *v;
	int n;
};

static int above(const struct entry *a, const struct entry *b)
{
	if (a->key != b->key)
		return a->key > b->key;
	return a->job < b->job; /* ties by job order: deterministic */
}

static void heap_push(struct heap *h, struct entry e)
{
	int i = h->n++;
	while (i > 0) {
		int up = (i - 1) / 2;
		if (!above(&e, &h->v[up]))
			break;
		h->v[i] = h->v[up];
		i = up;
	}
	h->v[i] = e;
}

static struct entry heap_pop(struct heap *h)
{
	struct entry top = h->v[0], last = h->v[--h->n];
	int i = 0;
	for (;;) {
		int l = 2 * i + 1, r = l + 1, m = i;
		const struct entry *best = &last;
		if (l < h->n && above(&h->v[l], best)) {
			m = l;
			best = &h->v[l];
		}
		if (r < h->n && above(&h->v[r], best))
			m = r;
		if (m == i)
			break;
		h->v[i] = h->v[m];
		i = m;
	}
	if (h->n > 0)
		h->v[i] = last;
	return top;
}

struct search {
	const struct pollux_gjob *jobs;
	int n_jobs;
	double p;
	int *choice;
	int *free_gpus; /* per type */
};

static double value_of(const struct search *s, int j, int k)
{
	return k < 0 ? 0.0 : s->jobs[j].c[k].value;
}

/* The best jump of job j from its candidate `from` (-1 = none) with `room`
 * (per type) free: the candidate and its gain per GPU; -1 when none gains. */
static int best_jump(const struct search *s, int j, int from, const int *room, double *key)
{
	const struct pollux_gjob *g = &s->jobs[j];
	double base = pollux_term(s->p, value_of(s, j, from));
	int have = from >= 0 ? g->c[from].gpus : 0, type = from >= 0 ? g->c[from].type : -1;
	int best = -1;
	double best_key = 0;
	for (int k = 0; k < g->n; k++) {
		const struct pollux_cand *c = &g->c[k];
		if ((type >= 0 && c->type != type) || c->gpus <= have)
			continue;
		int extra = c->gpus - have;
		if (extra > room[c->type])
			continue;
		double gain = (pollux_term(s->p, c->value) - base) / extra;
		if (gain > best_key * (1 + 1e-12) + 1e-300 || (best < 0 && gain > 0)) {
			best = k;
			best_key = gain;
		}
	}
	*key = best_key;
	return best;
}

/* The jump of job j from `from` within `room` that grows the sum most (the
 * local search's receiver); -1 when none grows it. */
static int best_gain(const struct search *s, int j, int from, const int *room, double *gain)
{
	const struct pollux_gjob *g = &s->jobs[j];
	double base = pollux_term(s->p, value_of(s, j, from));
	int have = from >= 0 ? g->c[from].gpus : 0, type = from >= 0 ? g->c[from].type : -1;
	int best = -1;
	*gain = 0;
	for (int k = 0; k < g->n; k++) {
		const struct pollux_cand *c = &g->c[k];
		if ((type >= 0 && c->type != type) || c->gpus <= have || c->gpus - have > room[c->type])
			continue;
		double x = pollux_term(s->p, c->value) - base;
		if (x > *gain) {
			*gain = x;
			best = k;
		}
	}
	return best;
}

static void water_fill(struct search *s, struct heap *h)
{
	h->n = 0;
	for (int j = 0; j < s->n_jobs; j++) {
		double key;
		int to = best_jump(s, j, s->choice[j], s->free_gpus, &key);
		if (to >= 0)
			heap_push(h, (struct entry){key, j, to});
	}
	while (h->n > 0) {
		struct entry e = heap_pop(h);
		double key;
		int to = best_jump(s, e.job, s->choice[e.job], s->free_gpus, &key);
		if (to < 0)
			continue;
		/* Lazy gains: capacity only shrinks while a job waits in the heap, so
		 * its gain only falls; a stale entry goes back with its new gain. */
		if (to != e.to || key < e.key * (1 - 1e-12)) {
			heap_push(h, (struct entry){key, e.job, to});
			continue;
		}
		const struct pollux_cand *c = &s->jobs[e.job].c[to];
		int from = s->choice[e.job];
		s->free_gpus[c->type] -= c->gpus - (from >= 0 ? s->jobs[e.job].c[from].gpus : 0);
		s->choice[e.job] = to;
		to = best_jump(s, e.job, to, s->free_gpus, &key);
		if (to >= 0)
			heap_push(h, (struct entry){key, e.job, to});
	}
}

struct donor {
	double loss; /* per GPU freed */
	int job, to; /* to: the smaller candidate, -1 = none */
};

/*
 * One move of the local search: among the POLLUX_LS_DONORS steps down of a
 * job (to any smaller candidate of its type, or none) that lose least per
 * GPU freed, the donor and receiver (the best jump of any job with the
 * freed GPUs added) whose exchange grows the sum most. Returns 1 when a move
 * was made.
 */
static int local_move(struct search *s, int n_types)
{
	struct donor d[POLLUX_LS_DONORS];
	int nd = 0;
	for (int j = 0; j < s->n_jobs; j++) {
		int k = s->choice[j];
		if (k < 0)
			continue;
		const struct pollux_gjob *g = &s->jobs[j];
		/* Every smaller candidate of its type, and none. */
		for (int to = -1; to < g->n; to++) {
			if (to >= 0 && (g->c[to].type != g->c[k].type || g->c[to].gpus >= g->c[k].gpus))
				continue;
			int freed = g->c[k].gpus - (to >= 0 ? g->c[to].gpus : 0);
			double loss = (pollux_term(s->p, g->c[k].value) -
				       pollux_term(s->p, value_of(s, j, to))) / freed;
			int at = nd < POLLUX_LS_DONORS ? nd++ : POLLUX_LS_DONORS;
			if (at == POLLUX_LS_DONORS) {
				if (loss >= d[POLLUX_LS_DONORS - 1].loss)
					continue;
				at = POLLUX_LS_DONORS - 1;
			}
			while (at > 0 && d[at - 1].loss > loss) {
				d[at] = d[at - 1];
				at--;
			}
			d[at] = (struct donor){loss, j, to};
		}
	}
	int room[POLLUX_MAX_TYPES];
	double best_delta = 1e-12;
	int best_d = -1, best_r = -1, best_to = -1;
	for (int i = 0; i < nd; i++) {
		const struct pollux_gjob *g = &s->jobs[d[i].job];
		const struct pollux_cand *c = &g->c[s->choice[d[i].job]];
		memcpy(room, s->free_gpus, sizeof(int) * (size_t)n_types);
		room[c->type] += c->gpus - (d[i].to >= 0 ? g->c[d[i].to].gpus : 0);
		double lost = pollux_term(s->p, c->value) - pollux_term(s->p, value_of(s, d[i].job, d[i].to));
		for (int r = 0; r < s->n_jobs; r++) {
			if (r == d[i].job)
				continue;
			double gained;
			int to = best_gain(s, r, s->choice[r], room, &gained);
			if (to < 0)
				continue;
			if (gained - lost > best_delta) {
				best_delta = gained - lost;
				best_d = i;
				best_r = r;
				best_to = to;
			}
		}
	}
	if (best_d < 0)
		return 0;
	const struct donor *x = &d[best_d];
	const struct pollux_cand *c = &s->jobs[x->job].c[s->choice[x->job]];
	s->free_gpus[c->type] += c->gpus - (x->to >= 0 ? s->jobs[x->job].c[x->to].gpus : 0);
	s->choice[x->job] = x->to;
	int from = s->choice[best_r];
	const struct pollux_cand *t = &s->jobs[best_r].c[best_to];
	s->free_gpus[t->type] -= t->gpus - (from >= 0 ? s->jobs[best_r].c[from].gpus : 0);
	s->choice[best_r] = best_to;
	return 1;
}

int pollux_greedy_search(const struct pollux_gjob *jobs, int n_jobs, const int *cap,
			 int n_types, double p, int ls_iters, int *choice, double *objective,
			 struct rk_error *err)
{
	if (n_types < 1 || n_types > POLLUX_MAX_TYPES)
		return rk_error_set(err, RK_EINVAL, "pollux: %d GPU types (1..%d)", n_types,
				    POLLUX_MAX_TYPES);
	int heap_cap = n_jobs > 0 ? 2 * n_jobs : 1;
	struct heap h = {malloc(sizeof(struct entry) * (size_t)heap_cap), 0};
	if (!h.v)
		return rk_error_set(err, RK_ENOMEM, "pollux: out of memory for the search");
	int free_gpus[POLLUX_MAX_TYPES];
	memcpy(free_gpus, cap, sizeof(int) * (size_t)n_types);
	for (int j = 0; j < n_jobs; j++)
		choice[j] = -1;
	struct search s = {jobs, n_jobs, p, choice, free_gpus};
	water_fill(&s, &h);
	/* A move frees GPUs another job may now fill: water-fill again after each. */
	for (int i = 0; i < ls_iters && local_move(&s, n_types); i++)
		water_fill(&s, &h);
	free(h.v);
	if (objective) {
		double sum = 0;
		for (int j = 0; j < n_jobs; j++)
			sum += pollux_term(p, value_of(&s, j, choice[j]));
		*objective = sum;
	}
	return RK_OK;
}
