/* Gang placement: single node best fit, fewest nodes, shares, ties, types, modes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "rubick/placement.h"

static struct rk_cluster cl;
static struct rk_capacity cap;

static void setup_spec(const char *spec)
{
	struct rk_error err;
	rk_capacity_fini(&cap);
	rk_cluster_fini(&cl);
	assert_int_equal(rk_cluster_parse(&cl, spec, "t", &err), 0);
	assert_int_equal(rk_capacity_init(&cap, &cl), 0);
}

static void occupy(int node, int gpus)
{
	struct rk_alloc a;
	rk_alloc_init(&a);
	rk_alloc_add(&a, node, gpus, 0, 0);
	assert_int_equal(rk_capacity_take(&cap, &a, NULL), 0);
	rk_alloc_fini(&a);
}

static struct rk_place_req req_of(int gpus)
{
	struct rk_place_req r = {gpus, 0, 0, NULL, 1, RK_PLACE_SPREAD};
	return r;
}

static void single_node_best_fit(void **state)
{
	(void)state;
	setup_spec("4x8");
	occupy(0, 2); /* free: 6 8 8 8 */
	occupy(2, 5); /* free: 6 8 3 8 */
	struct rk_alloc a;
	rk_alloc_init(&a);
	struct rk_place_req r = req_of(3);
	assert_int_equal(rk_place_gang(&cap, &r, &a), 0);
	assert_int_equal(a.n, 1);
	assert_int_equal(a.shares[0].node, 2); /* exactly fits */
	r.gpus = 4;
	assert_int_equal(rk_place_gang(&cap, &r, &a), 0);
	assert_int_equal(a.shares[0].node, 0); /* 6 free is the tightest */
	r.gpus = 8;
	assert_int_equal(rk_place_gang(&cap, &r, &a), 0);
	assert_int_equal(a.shares[0].node, 1); /* tie between 1 and 3: lowest id */
	/* place does not change the capacity; place_take does. */
	assert_int_equal(cap.free_gpus[1], 8);
	assert_int_equal(rk_place_gang_take(&cap, &r, &a), 0);
	assert_int_equal(cap.free_gpus[1], 0);
	rk_alloc_fini(&a);
}

static void fewest_nodes(void **state)
{
	(void)state;
	setup_spec("4x8");
	occupy(0, 4); /* free: 4 8 8 8 */
	occupy(3, 7); /* free: 4 8 8 1 */
	struct rk_alloc a;
	rk_alloc_init(&a);
	struct rk_place_req r = req_of(17);
	/* 8 + 8 on nodes 1, 2, the remaining 1 best-fits node 3. */
	assert_int_equal(rk_place_gang(&cap, &r, &a), 0);
	assert_int_equal(a.n, 3);
	assert_int_equal(a.shares[0].node, 1);
	assert_int_equal(a.shares[1].node, 2);
	assert_int_equal(a.shares[2].node, 3);
	assert_int_equal(a.shares[2].gpus, 1);
	r.gpus = 12; /* 8 + 4: node 0 fits the remainder exactly */
	assert_int_equal(rk_place_gang(&cap, &r, &a), 0);
	assert_int_equal(a.n, 2);
	assert_int_equal(a.shares[0].node, 0);
	assert_int_equal(a.shares[0].gpus, 4);
	assert_int_equal(a.shares[1].node, 1);
	struct rk_placement pl;
	rk_alloc_to_placement_sorted(&a, &pl);
	assert_int_equal(pl.gpus[0], 4);
	assert_int_equal(pl.gpus[1], 8);
	r.gpus = 21; /* every free GPU */
	assert_int_equal(rk_place_gang(&cap, &r, &a), 0);
	assert_int_equal(a.n, 4);
	r.gpus = 22;
	assert_int_equal(rk_place_gang(&cap, &r, &a), RK_EINFEASIBLE);
	assert_int_equal(a.n, 0);
	r.gpus = 0;
	assert_int_equal(rk_place_gang(&cap, &r, &a), RK_EINFEASIBLE);
	rk_alloc_fini(&a);
}

static void cpu_mem_shares(void **state)
{
	(void)state;
	setup_spec("2x8:a800,cpus=96,mem=800G");
	struct rk_alloc a;
	rk_alloc_init(&a);
	/* Proportional: 12 CPUs and 100 GiB per GPU. */
	struct rk_place_req r = {4, RK_SHARE_PROPORTIONAL, RK_SHARE_PROPORTIONAL, NULL,
	                         1, RK_PLACE_SPREAD};
	assert_int_equal(rk_place_gang_take(&cap, &r, &a), 0);
	assert_int_equal(a.shares[0].cpus, 48);
	assert_int_equal(a.shares[0].mem_mb, 400 * 1024);
	/* 40 CPUs per GPU: node 0 has 48 CPUs left -> 1 GPU usable, node 1 -> 2. */
	r.cpus_per_gpu = 40;
	r.mem_mb_per_gpu = 0;
	r.gpus = 3;
	assert_int_equal(rk_place_gang(&cap, &r, &a), 0);
	assert_int_equal(a.n, 2);
	assert_int_equal(a.shares[0].gpus, 1);
	assert_int_equal(a.shares[0].cpus, 40);
	assert_int_equal(a.shares[1].gpus, 2);
	r.gpus = 4;
	assert_int_equal(rk_place_gang(&cap, &r, &a), RK_EINFEASIBLE);
	/* Memory limits the same way. */
	r.cpus_per_gpu = 0;
	r.mem_mb_per_gpu = 500 * 1024; /* node 0: 400 GiB left -> 0 GPUs */
	r.gpus = 1;
	assert_int_equal(rk_place_gang(&cap, &r, &a), 0);
	assert_int_equal(a.shares[0].node, 1);
	rk_alloc_fini(&a);
}

static void tensor_parallel_multiple(void **state)
{
	(void)state;
	setup_spec("3x8");
	occupy(0, 3); /* free: 5 8 8 -> usable in multiples of 4: 4 8 8 */
	struct rk_alloc a;
	rk_alloc_init(&a);
	struct rk_place_req r = {12, 0, 0, NULL, 4, RK_PLACE_SPREAD};
	assert_int_equal(rk_place_gang(&cap, &r, &a), 0);
	assert_int_equal(a.n, 2);
	assert_int_equal(a.shares[0].node, 0);
	assert_int_equal(a.shares[0].gpus, 4);
	assert_int_equal(a.shares[1].gpus, 8);
	r.gpus = 6; /* not a multiple of 4 across nodes, no single node with 6 multiple of 4 */
	assert_int_equal(rk_place_gang(&cap, &r, &a), RK_EINFEASIBLE);
	rk_alloc_fini(&a);
}

static void gpu_types(void **state)
{
	(void)state;
	setup_spec("1x4:t4+2x8:a100");
	struct rk_alloc a;
	rk_alloc_init(&a);
	struct rk_place_req r = req_of(4);
	/* Any type: the t4 node fits exactly (best fit). */
	assert_int_equal(rk_place_gang(&cap, &r, &a), 0);
	assert_int_equal(a.shares[0].node, 0);
	r.gpu_type = "a100";
	assert_int_equal(rk_place_gang(&cap, &r, &a), 0);
	assert_int_equal(a.shares[0].node, 1);
	/* 10 GPUs never mix types: two a100 nodes. */
	r.gpu_type = NULL;
	r.gpus = 10;
	assert_int_equal(rk_place_gang(&cap, &r, &a), 0);
	assert_int_equal(a.n, 2);
	assert_int_equal(a.shares[0].node, 1);
	assert_int_equal(a.shares[1].node, 2);
	r.gpus = 17;
	assert_int_equal(rk_place_gang(&cap, &r, &a), RK_EINFEASIBLE);
	r.gpu_type = "h100";
	r.gpus = 1;
	assert_int_equal(rk_place_gang(&cap, &r, &a), RK_EINFEASIBLE);
	rk_alloc_fini(&a);
}

/* Total GPUs of a, and the GPUs it has on `node` (0 if none). */
static int gpus_on(const struct rk_alloc *a, int node)
{
	for (int i = 0; i < a->n; i++)
		if (a->shares[i].node == node)
			return a->shares[i].gpus;
	return 0;
}

/*
 * Where a job goes when no node has room, per mode: spread splits 4 GPUs 3+1,
 * consolidated (yarn) waits for one node, least-free fills the fullest nodes.
 */
static void modes_when_no_node_fits(void **state)
{
	(void)state;
	setup_spec("4x8");
	occupy(0, 5); /* free: 3 7 6 2 */
	occupy(1, 1);
	occupy(2, 2);
	occupy(3, 6);
	struct rk_alloc a;
	rk_alloc_init(&a);
	struct rk_place_req r = req_of(8);
	assert_int_equal(rk_place_gang(&cap, &r, &a), 0); /* spread: 7 on node 1 + 1 */
	assert_int_equal(a.n, 2);
	assert_int_equal(gpus_on(&a, 1), 7);
	assert_int_equal(gpus_on(&a, 3), 1); /* best fit for the remainder */
	r.mode = RK_PLACE_CONSOLIDATED;      /* 8 fits one node: waits */
	assert_int_equal(rk_place_gang(&cap, &r, &a), RK_EINFEASIBLE);
	assert_int_equal(a.n, 0);
	r.gpus = 7; /* fits node 1 exactly: every mode agrees */
	assert_int_equal(rk_place_gang(&cap, &r, &a), 0);
	assert_int_equal(a.n, 1);
	assert_int_equal(gpus_on(&a, 1), 7);
	r.gpus = 8;
	r.mode = RK_PLACE_LEAST_FREE; /* 2 (node 3) + 3 (node 0) + 3 of node 2's 6 */
	assert_int_equal(rk_place_gang(&cap, &r, &a), 0);
	assert_int_equal(a.n, 3);
	assert_int_equal(gpus_on(&a, 3), 2);
	assert_int_equal(gpus_on(&a, 0), 3);
	assert_int_equal(gpus_on(&a, 2), 3);
	rk_alloc_fini(&a);
}

/* Consolidated, a job larger than a node: whole idle nodes plus one for the rest. */
static void consolidated_whole_nodes(void **state)
{
	(void)state;
	setup_spec("4x8");
	occupy(0, 1); /* free: 7 8 8 4 */
	occupy(3, 4);
	struct rk_alloc a;
	rk_alloc_init(&a);
	struct rk_place_req r = req_of(12);
	r.mode = RK_PLACE_CONSOLIDATED;
	assert_int_equal(rk_place_gang(&cap, &r, &a), 0);
	assert_int_equal(a.n, 2);
	assert_int_equal(gpus_on(&a, 1), 8); /* the first whole idle node */
	assert_int_equal(gpus_on(&a, 3), 4); /* remainder: best fit, not node 2's 8 */
	r.gpus = 16;
	assert_int_equal(rk_place_gang(&cap, &r, &a), 0);
	assert_int_equal(gpus_on(&a, 1), 8);
	assert_int_equal(gpus_on(&a, 2), 8);
	occupy(2, 1); /* free: 7 8 7 4: only one whole node left */
	assert_int_equal(rk_place_gang(&cap, &r, &a), RK_EINFEASIBLE);
	r.mode = RK_PLACE_SPREAD; /* spread takes 8 + 7 + 1 */
	assert_int_equal(rk_place_gang(&cap, &r, &a), 0);
	assert_int_equal(a.n, 3);
	rk_alloc_fini(&a);
}

static void mode_names(void **state)
{
	(void)state;
	enum rk_place_mode m = RK_PLACE_SPREAD;
	assert_int_equal(rk_place_mode_parse("consolidated", &m), 0);
	assert_int_equal(m, RK_PLACE_CONSOLIDATED);
	assert_int_equal(rk_place_mode_parse("least-free", &m), 0);
	assert_int_equal(m, RK_PLACE_LEAST_FREE);
	assert_int_equal(rk_place_mode_parse("yarn", &m), RK_EINVAL);
	assert_int_equal(rk_place_mode_parse(NULL, &m), RK_EINVAL);
	assert_int_equal(m, RK_PLACE_LEAST_FREE); /* untouched on failure */
	assert_string_equal(rk_place_mode_name(RK_PLACE_SPREAD), "spread");
	assert_string_equal(rk_place_mode_name(RK_PLACE_CONSOLIDATED), "consolidated");
}

static void req_from_job(void **state)
{
	(void)state;
	struct rk_job j;
	memset(&j, 0, sizeof(j));
	j.req_gpus = 3;
	j.req_cpus = 10;
	j.req_mem_mb = 0;
	j.req_plan.tp = 2;
	struct rk_place_req r;
	rk_place_req_from_job(&j, &r);
	assert_int_equal(r.gpus, 3);
	assert_int_equal(r.cpus_per_gpu, 4);
	assert_int_equal(r.mem_mb_per_gpu, RK_SHARE_PROPORTIONAL);
	assert_int_equal(r.gpus_multiple, 2);
}

static int teardown(void **state)
{
	(void)state;
	rk_capacity_fini(&cap);
	rk_cluster_fini(&cl);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(single_node_best_fit),
		cmocka_unit_test(fewest_nodes),
		cmocka_unit_test(cpu_mem_shares),
		cmocka_unit_test(tensor_parallel_multiple),
		cmocka_unit_test(gpu_types),
		cmocka_unit_test(req_from_job),
	    cmocka_unit_test(modes_when_no_node_fits),
	    cmocka_unit_test(consolidated_whole_nodes),
	    cmocka_unit_test(mode_names),
	};
	return cmocka_run_group_tests(tests, NULL, teardown);
}
