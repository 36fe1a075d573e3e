/* Greedy reclaim of loaned servers by the §2.3 preemption cost: hand-checked
 * cases (scale-in before preemption, fewest preemptions, then least lost work,
 * costs recomputed after each pick) and the elastic plan helper. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "rubick/aryl.h"

#define NJ 4
static struct rk_cluster cl;
static struct rk_job jobs[NJ];
static struct rk_job *ptrs[NJ];
static struct rk_sched_input in;

static void job_init(int i, int gpus, int min, int max)
{
	struct rk_job *j = &jobs[i];
	memset(j, 0, sizeof *j);
	j->id = i + 1;
	snprintf(j->name, sizeof j->name, "j%d", i + 1);
	j->global_batch = 48;
	j->req_gpus = gpus;
	j->min_gpus = min;
	j->max_gpus = max;
	j->req_plan = (struct rk_plan){.dp = gpus, .tp = 1, .pp = 1, .mb = 48 / gpus, .ga = 1};
	j->plan = j->req_plan;
	j->state = RK_JOB_RUNNING;
	rk_alloc_init(&j->alloc);
	ptrs[i] = j;
}

static void teardown_all(void)
{
	for (int i = 0; i < NJ; i++)
		rk_alloc_fini(&jobs[i].alloc);
	rk_cluster_fini(&cl);
}

/* node 0: training 8 GPUs; nodes 1-3: loaned 4 GPUs each. */
static void setup_basic(void)
{
	assert_int_equal(rk_cluster_parse(&cl, "1x8+3x4,pool=loaned", "t", NULL), 0);
	job_init(0, 4, 4, 4);  /* inelastic, all on node 1 */
	rk_alloc_add(&jobs[0].alloc, 1, 4, 0, 0);
	job_init(1, 4, 2, 8);  /* elastic: 4 on node 0 + 2 on node 2 */
	rk_alloc_add(&jobs[1].alloc, 0, 4, 0, 0);
	rk_alloc_add(&jobs[1].alloc, 2, 2, 0, 0);
	job_init(2, 2, 2, 2);  /* two inelastic jobs on node 3 */
	rk_alloc_add(&jobs[2].alloc, 3, 2, 0, 0);
	job_init(3, 2, 2, 2);
	rk_alloc_add(&jobs[3].alloc, 3, 2, 0, 0);
	in = (struct rk_sched_input){.now_ms = 1000000, .cluster = &cl, .jobs = ptrs, .n_jobs = NJ};
}

static const struct rk_decision *find(const struct rk_decisions *d, int64_t id)
{
	for (int i = 0; i < d->n; i++)
		if (d->v[i].job_id == id)
			return &d->v[i];
	return NULL;
}

static void test_scale_in_first(void **state)
{
	(void)state;
	setup_basic();
	struct rk_decisions d;
	struct rk_reclaim_stats st;
	rk_decisions_init(&d);
	/* k = 1: node 2 costs nothing (job 2 keeps 4 >= min 2). */
	assert_int_equal(rk_aryl_reclaim(&in, 1, &d, &st, NULL), 0);
	assert_int_equal(st.n_servers, 1);
	assert_int_equal(st.servers[0], 2);
	assert_int_equal(st.preemptions, 0);
	assert_int_equal(st.scale_ins, 1);
	assert_int_equal(d.n, 1);
	const struct rk_decision *x = find(&d, 2);
	assert_non_null(x);
	assert_int_equal(rk_alloc_total_gpus(&x->alloc), 4);
	assert_int_equal(x->alloc.shares[0].node, 0);
	assert_int_equal(x->plan.dp, 4);
	assert_int_equal(x->plan.mb * x->plan.ga * x->plan.dp, 48);
	assert_int_equal(rk_decisions_validate(&in, &d, "aryl", NULL), 0);
	rk_reclaim_stats_fini(&st);
	rk_decisions_clear(&d);
	/* k = 2: then node 1 (one preemption) before node 3 (two). */
	assert_int_equal(rk_aryl_reclaim(&in, 2, &d, &st, NULL), 0);
	assert_int_equal(st.servers[1], 1);
	assert_int_equal(st.preemptions, 1);
	assert_int_equal(rk_alloc_total_gpus(&find(&d, 1)->alloc), 0);
	assert_null(find(&d, 3));
	rk_reclaim_stats_fini(&st);
	rk_decisions_clear(&d);
	/* k = 3: everything; three preemptions, lost work = 8 GPUs x 1000 s. */
	assert_int_equal(rk_aryl_reclaim(&in, 3, &d, &st, NULL), 0);
	assert_int_equal(st.preemptions, 3);
	assert_true(st.lost_gpu_s > 7999.0 && st.lost_gpu_s < 8001.0);
	rk_reclaim_stats_fini(&st);
	rk_decisions_clear(&d);
	/* More than is loaned: a range error. */
	struct rk_error err;
	assert_int_equal(rk_aryl_reclaim(&in, 4, &d, &st, &err), RK_ERANGE);
	assert_non_null(strstr(err.msg, "3 loaned"));
	rk_decisions_fini(&d);
	teardown_all();
}

static void test_lost_work_tiebreak(void **state)
{
	(void)state;
	setup_basic();
	/* Drop job 4: node 3 now preempts one job of 2 GPUs started 100 s ago
	 * (200 GPU-s lost) versus node 1's 4 GPUs for 1000 s (4000 GPU-s). */
	rk_alloc_fini(&jobs[3].alloc);
	jobs[3].state = RK_JOB_PENDING;
	jobs[2].last_change_ms = in.now_ms - 100000;
	struct rk_decisions d;
	struct rk_reclaim_stats st;
	rk_decisions_init(&d);
	assert_int_equal(rk_aryl_reclaim(&in, 2, &d, &st, NULL), 0);
	assert_int_equal(st.servers[0], 2);
	assert_int_equal(st.servers[1], 3);
	assert_int_equal(st.preemptions, 1);
	assert_true(st.lost_gpu_s > 199.0 && st.lost_gpu_s < 201.0);
	rk_reclaim_stats_fini(&st);
	rk_decisions_fini(&d);
	teardown_all();
}

static void test_recomputed_costs(void **state)
{
	(void)state;
	/* An elastic job (min 4) on node 0 (2) + node 1 (2) + node 2 (2): giving
	 * back node 1 scales it to 4; node 2 then would drop it to 2 < 4, so its
	 * cost becomes one preemption — the greedy must see the update. */
	assert_int_equal(rk_cluster_parse(&cl, "1x8+2x4,pool=loaned", "t", NULL), 0);
	job_init(0, 6, 4, 12);
	rk_alloc_add(&jobs[0].alloc, 0, 2, 0, 0);
	rk_alloc_add(&jobs[0].alloc, 1, 2, 0, 0);
	rk_alloc_add(&jobs[0].alloc, 2, 2, 0, 0);
	in = (struct rk_sched_input){.now_ms = 0, .cluster = &cl, .jobs = ptrs, .n_jobs = 1};
	struct rk_decisions d;
	struct rk_reclaim_stats st;
	rk_decisions_init(&d);
	assert_int_equal(rk_aryl_reclaim(&in, 1, &d, &st, NULL), 0);
	assert_int_equal(st.servers[0], 1);
	assert_int_equal(st.preemptions, 0);
	assert_int_equal(rk_alloc_total_gpus(&d.v[0].alloc), 4);
	rk_reclaim_stats_fini(&st);
	rk_decisions_clear(&d);
	assert_int_equal(rk_aryl_reclaim(&in, 2, &d, &st, NULL), 0);
	assert_int_equal(st.scale_ins, 1);
	assert_int_equal(st.preemptions, 1);
	assert_int_equal(d.n, 1);
	assert_int_equal(d.v[0].alloc.n, 0);
	rk_reclaim_stats_fini(&st);
	rk_decisions_fini(&d);
	for (int i = 1; i < NJ; i++)
		memset(&jobs[i], 0, sizeof jobs[i]);
	teardown_all();
}

static void test_plan_for(void **state)
{
	(void)state;
	job_init(0, 4, 2, 8);
	struct rk_plan p;
	assert_int_equal(rk_aryl_plan_for(&jobs[0], 4, &p), 0);
	assert_true(rk_plan_equal(&p, &jobs[0].req_plan));
	assert_int_equal(rk_aryl_plan_for(&jobs[0], 6, &p), 0);
	assert_int_equal(p.dp * p.mb * p.ga, 48);
	assert_int_equal(rk_aryl_plan_for(&jobs[0], 5, &p), RK_EINFEASIBLE);
	assert_int_equal(rk_aryl_plan_for(&jobs[0], 0, &p), RK_EINFEASIBLE);
	assert_true(rk_aryl_job_elastic(&jobs[0]));
	job_init(1, 4, 4, 4);
	assert_false(rk_aryl_job_elastic(&jobs[1]));
	rk_alloc_fini(&jobs[0].alloc);
	rk_alloc_fini(&jobs[1].alloc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scale_in_first),
		cmocka_unit_test(test_lost_work_tiebreak),
		cmocka_unit_test(test_recomputed_costs),
		cmocka_unit_test(test_plan_for),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
