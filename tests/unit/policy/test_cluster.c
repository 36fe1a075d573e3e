/* Cluster spec parsing (every documented error), formatting, allocations and capacity. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "rubick/cluster.h"
#include "rubick/gpu.h"
#include "rubick/job.h"
#include "rubick/plan.h"

static void parse_testbed(void **state)
{
	(void)state;
	struct rk_cluster c;
	struct rk_error err;
	assert_int_equal(rk_cluster_parse(&c, "8x8:a800,cpus=96,mem=1600G,nvlink=400,net=100",
					  "--cluster", &err),
			 0);
	assert_int_equal(c.n_nodes, 8);
	assert_int_equal(rk_cluster_total_gpus(&c), 64);
	for (int i = 0; i < 8; i++) {
		assert_int_equal(c.nodes[i].id, i);
		assert_string_equal(c.nodes[i].gpu_type, "a800");
		assert_int_equal(c.nodes[i].gpus, 8);
		assert_int_equal(c.nodes[i].cpus, 96);
		assert_int_equal(c.nodes[i].mem_mb, 1600LL * 1024);
		assert_true(c.nodes[i].nvlink_gbps == 400.0);
		assert_true(c.nodes[i].net_gbps == 100.0);
		assert_int_equal(c.nodes[i].up, 1);
		assert_int_equal(c.nodes[i].pool, RK_POOL_TRAINING);
	}
	char buf[256];
	int len = rk_cluster_format(&c, buf, sizeof(buf));
	assert_int_equal(len, (int)strlen(buf));
	assert_string_equal(buf, "8x8:a800,cpus=96,mem=1638400M,nvlink=400,net=100,gpumem=81920M");
	/* Formatting and parsing again gives the same cluster. */
	struct rk_cluster d;
	assert_int_equal(rk_cluster_parse(&d, buf, "fmt", &err), 0);
	assert_int_equal(d.n_nodes, 8);
	assert_memory_equal(c.nodes, d.nodes, sizeof(*c.nodes) * 8);
	rk_cluster_fini(&d);
	rk_cluster_fini(&c);
	assert_null(c.nodes);
}

static void parse_defaults_and_hetero(void **state)
{
	(void)state;
	struct rk_cluster c;
	struct rk_error err;
	assert_int_equal(rk_cluster_parse(&c, "2x4 + 1x8:V100,mem=512g,net=12.5,pool=loaned",
					  "spec", &err),
			 0);
	assert_int_equal(c.n_nodes, 3);
	/* Defaults scale the Rubick testbed node per GPU. */
	assert_string_equal(c.nodes[0].gpu_type, "a800");
	assert_int_equal(c.nodes[0].cpus, 48);
	assert_int_equal(c.nodes[0].mem_mb, 4 * 200 * 1024);
	assert_string_equal(c.nodes[2].gpu_type, "v100");
	assert_int_equal(c.nodes[2].cpus, 96);
	assert_int_equal(c.nodes[2].mem_mb, 512 * 1024);
	assert_true(c.nodes[2].net_gbps == 12.5);
	assert_int_equal(c.nodes[2].gpu_mem_mb, 32 * 1024); /* from the type */
	assert_int_equal(c.nodes[0].gpu_mem_mb, 80 * 1024);
	assert_int_equal(c.nodes[2].pool, RK_POOL_LOANED);
	assert_int_equal(c.nodes[0].pool, RK_POOL_TRAINING);
	assert_int_equal(rk_cluster_total_gpus(&c), 16);
	c.nodes[1].up = 0;
	assert_int_equal(rk_cluster_total_gpus(&c), 12);
	rk_cluster_fini(&c);

	/* A file: one group per line, comments and blank lines. */
	const char *file = "# test cluster\n"
			   "4x8:a800,cpus=96   # big nodes\n"
			   "\n"
			   "2x4:t4,mem=64T,nvlink=0,gpumem=15G\r\n";
	assert_int_equal(rk_cluster_parse(&c, file, "c.txt", &err), 0);
	assert_int_equal(c.n_nodes, 6);
	assert_string_equal(c.nodes[5].gpu_type, "t4");
	assert_int_equal(c.nodes[5].id, 5);
	assert_int_equal(c.nodes[5].mem_mb, 64LL * 1024 * 1024);
	assert_true(c.nodes[5].nvlink_gbps == 0.0);
	assert_int_equal(c.nodes[5].gpu_mem_mb, 15 * 1024);
	struct rk_cluster d;
	assert_int_equal(rk_cluster_copy(&d, &c), 0);
	assert_memory_equal(c.nodes, d.nodes, sizeof(*c.nodes) * 6);
	rk_cluster_fini(&d);
	rk_cluster_fini(&c);
}

static void expect_error(const char *text, int code, const char *msg)
{
	struct rk_cluster c = {5, (struct rk_node *)&c}; /* garbage must be overwritten */
	struct rk_error err;
	assert_int_equal(rk_cluster_parse(&c, text, "X", &err), code);
	assert_int_equal(err.code, code);
	if (!strstr(err.msg, msg))
		fail_msg("'%s': message '%s' lacks '%s'", text, err.msg, msg);
	assert_int_equal(c.n_nodes, 0);
	assert_null(c.nodes);
}

static void parse_errors(void **state)
{
	(void)state;
	expect_error("", RK_EINVAL, "X:1:1: no node groups");
	expect_error("# only a comment\n", RK_EINVAL, "no node groups");
	expect_error("x8", RK_EINVAL, "X:1:1: expected node count");
	expect_error("0x8", RK_ERANGE, "X:1:1: node count must be in 1..");
	expect_error("8y8", RK_EINVAL, "X:1:2: expected 'x'");
	expect_error("8x", RK_EINVAL, "X:1:3: expected GPUs per node");
	expect_error("8x65", RK_ERANGE, "X:1:3: GPUs per node must be in 1..64");
	expect_error("8x8:", RK_EINVAL, "X:1:5: expected a GPU type");
	expect_error("8x8:abcdefghijklmnopq", RK_ERANGE, "X:1:5: GPU type is longer");
	/* GPU types are modelled (docs/gpus.md): a typo is an error listing the known types. */
	expect_error("8x8:foo", RK_EINVAL, "X:1:5: unknown GPU type 'foo' (known: a800, a100,");
	expect_error("2x4:t4+1x8:A1000", RK_EINVAL, "X:1:12: unknown GPU type 'a1000'");
	expect_error("8x8:aws", RK_EINVAL, "2080ti");
	expect_error("8x8,gpus=3", RK_EINVAL, "X:1:5: unknown key 'gpus'");
	expect_error("8x8,cpus=1,cpus=2", RK_EINVAL, "X:1:12: key 'cpus' given twice");
	expect_error("8x8,cpus", RK_EINVAL, "X:1:9: expected '=' after 'cpus'");
	expect_error("8x8,cpus=abc", RK_EINVAL, "X:1:10: cpus: 'abc' is not a non-negative");
	expect_error("8x8,cpus=-1", RK_EINVAL, "X:1:10: cpus: '-1' is not");
	expect_error("8x8,cpus=1000000", RK_ERANGE, "X:1:10: cpus: 1000000 is out of range");
	expect_error("8x8,mem=12Q", RK_EINVAL, "X:1:11: mem: unknown unit 'Q'");
	expect_error("8x8,mem=12GX", RK_EINVAL, "mem: unexpected 'X'");
	expect_error("8x8,mem=G", RK_EINVAL, "X:1:9: mem: 'G' is not a size");
	expect_error("8x8,mem=", RK_EINVAL, "X:1:9: mem: expected a size");
	expect_error("8x8,mem=99999999999T", RK_ERANGE, "mem: 99999999999T is out of range");
	expect_error("8x8,nvlink=fast", RK_EINVAL, "X:1:12: nvlink: 'fast' is not a number");
	expect_error("8x8,net=1e9", RK_ERANGE, "net: 1e9 GB/s is out of range");
	expect_error("8x8,net=nan", RK_EINVAL, "net: 'nan' is not a number");
	expect_error("8x8,gpumem=big", RK_EINVAL, "X:1:12: gpumem: 'big' is not a size");
	expect_error("8x8,pool=spot", RK_EINVAL, "X:1:10: pool: 'spot' is not");
	expect_error("8x8 8x8", RK_EINVAL, "X:1:5: unexpected '8'");
	expect_error("8x8+", RK_EINVAL, "X:1:5: expected a group after '+'");
	expect_error("1x8\n2x8:a800,cpus=x\n", RK_EINVAL, "X:2:15: cpus: 'x'");
	expect_error("999999x8+2x8", RK_ERANGE, "more than 1000000 nodes");
}

/* The GPU table (gpu.h): every type has its figures, aliases resolve, memory follows it. */
static void gpu_table(void **state)
{
	(void)state;
	assert_true(rk_gpu_count() >= 7);
	for (int i = 0; i < rk_gpu_count(); i++) {
		const struct rk_gpu_spec *g = rk_gpu_at(i);
		assert_non_null(g);
		assert_ptr_equal(rk_gpu_find(g->name), g);
		assert_true(g->mem_gib > 0 && g->fp32_tflops > 0 && g->mem_gbps > 0);
		assert_true(g->link_gbps > 0 && g->pcie_gbps > 0);
		assert_true(rk_gpu_train_tflops(g) >= g->fp32_tflops);
	}
	static const char *const need[] = {"a800", "a100", "v100", "p100", "k80", "t4", "2080ti"};
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		assert_non_null(rk_gpu_find(need[i]));
	assert_ptr_equal(rk_gpu_find("RTX2080Ti"), rk_gpu_find("2080ti"));
	assert_null(rk_gpu_find("foo"));
	assert_null(rk_gpu_find(NULL));
	struct rk_cluster c;
	struct rk_error err;
	assert_int_equal(rk_cluster_parse(&c, "1x4:rtx2080ti+1x8:K80", "t", &err), 0);
	assert_string_equal(c.nodes[0].gpu_type, "2080ti"); /* canonical name kept */
	assert_int_equal(c.nodes[0].gpu_mem_mb, 11 * 1024);
	assert_string_equal(c.nodes[1].gpu_type, "k80");
	assert_int_equal(c.nodes[1].gpu_mem_mb, 12 * 1024);
	rk_cluster_fini(&c);
	char buf[8];
	int need_len = rk_gpu_list(buf, sizeof(buf));
	assert_true(need_len > 7);
	assert_int_equal((int)strlen(buf), 7); /* truncated like snprintf */
}

static void alloc_ops(void **state)
{
	(void)state;
	struct rk_alloc a, b;
	rk_alloc_init(&a);
	rk_alloc_init(&b);
	assert_int_equal(rk_alloc_add(&a, 3, 2, 16, 100), 0);
	assert_int_equal(rk_alloc_add(&a, 1, 4, 32, 200), 0);
	assert_int_equal(rk_alloc_add(&a, 3, 1, 8, 50), 0);
	assert_int_equal(rk_alloc_add(&a, -1, 1, 1, 1), RK_EINVAL);
	assert_int_equal(a.n, 2);
	assert_int_equal(a.shares[0].node, 1);
	assert_int_equal(a.shares[1].node, 3);
	assert_int_equal(a.shares[1].gpus, 3);
	assert_int_equal(rk_alloc_total_gpus(&a), 7);
	assert_int_equal(rk_alloc_total_cpus(&a), 56);
	assert_int_equal(rk_alloc_total_mem_mb(&a), 350);
	struct rk_placement pl;
	assert_int_equal(rk_alloc_to_placement(&a, &pl), 0);
	assert_int_equal(pl.n_nodes, 2);
	assert_int_equal(pl.gpus[0], 4);
	assert_int_equal(pl.gpus[1], 3);
	assert_int_equal(rk_alloc_to_placement_sorted(&a, &pl), 0);
	assert_int_equal(pl.gpus[0], 3);
	assert_int_equal(pl.gpus[1], 4);
	assert_int_equal(rk_alloc_copy(&b, &a), 0);
	assert_true(rk_alloc_equal(&a, &b));
	b.shares[0].cpus = 1;
	assert_false(rk_alloc_equal(&a, &b));
	assert_true(rk_alloc_same_gpus(&a, &b));
	b.shares[0].gpus = 1;
	assert_false(rk_alloc_same_gpus(&a, &b));
	rk_alloc_fini(&b);
	assert_false(rk_alloc_same_gpus(&a, &b));
	/* A share without GPUs is not part of the placement. */
	assert_int_equal(rk_alloc_add(&a, 0, 0, 4, 0), 0);
	assert_int_equal(rk_alloc_to_placement(&a, &pl), 0);
	assert_int_equal(pl.n_nodes, 2);
	rk_alloc_fini(&a);
	/* More nodes than a placement holds. */
	for (int i = 0; i <= RK_PLACEMENT_MAX_NODES; i++)
		assert_int_equal(rk_alloc_add(&a, i, 1, 0, 0), 0);
	assert_int_equal(rk_alloc_to_placement(&a, &pl), RK_ERANGE);
	rk_alloc_fini(&a);
}

static void capacity_take_give(void **state)
{
	(void)state;
	struct rk_cluster c;
	struct rk_error err;
	assert_int_equal(rk_cluster_parse(&c, "2x8,cpus=96,mem=1000M", "c", &err), 0);
	c.nodes[1].up = 0;
	struct rk_capacity cap;
	assert_int_equal(rk_capacity_init(&cap, &c), 0);
	assert_int_equal(rk_capacity_free_gpus(&cap), 8);
	assert_int_equal(cap.free_gpus[1], 0);
	struct rk_alloc a;
	rk_alloc_init(&a);
	rk_alloc_add(&a, 0, 6, 90, 900);
	assert_int_equal(rk_capacity_take(&cap, &a, &err), 0);
	assert_int_equal(cap.free_gpus[0], 2);
	assert_int_equal(cap.free_cpus[0], 6);
	assert_int_equal(cap.free_mem_mb[0], 100);
	/* Every shortfall is refused and leaves the capacity unchanged. */
	struct rk_alloc b;
	rk_alloc_init(&b);
	rk_alloc_add(&b, 0, 3, 0, 0);
	assert_int_equal(rk_capacity_take(&cap, &b, &err), RK_EINFEASIBLE);
	assert_string_equal(err.msg, "node 0: 3 GPUs asked, 2 free");
	b.shares[0].gpus = 1;
	b.shares[0].cpus = 7;
	assert_int_equal(rk_capacity_take(&cap, &b, &err), RK_EINFEASIBLE);
	assert_string_equal(err.msg, "node 0: 7 CPUs asked, 6 free");
	b.shares[0].cpus = 1;
	b.shares[0].mem_mb = 101;
	assert_int_equal(rk_capacity_take(&cap, &b, &err), RK_EINFEASIBLE);
	assert_string_equal(err.msg, "node 0: 101 MiB memory asked, 100 MiB free");
	assert_false(rk_capacity_fits(&cap, &b));
	b.shares[0].node = 1;
	b.shares[0].mem_mb = 1;
	assert_int_equal(rk_capacity_take(&cap, &b, &err), RK_EINFEASIBLE);
	assert_string_equal(err.msg, "node 1 is down");
	b.shares[0].node = 7;
	assert_int_equal(rk_capacity_take(&cap, &b, &err), RK_EINFEASIBLE);
	assert_string_equal(err.msg, "node 7 does not exist (cluster has 2 nodes)");
	assert_int_equal(cap.free_gpus[0], 2);
	assert_int_equal(rk_capacity_free_gpus(&cap), 2);
	/* Copies are independent. */
	struct rk_capacity cp;
	assert_int_equal(rk_capacity_copy(&cp, &cap), 0);
	assert_int_equal(rk_capacity_give(&cp, &a, &err), 0);
	assert_int_equal(cp.free_gpus[0], 8);
	assert_int_equal(cap.free_gpus[0], 2);
	/* Giving back twice would exceed what is installed. */
	assert_int_equal(rk_capacity_give(&cp, &a, &err), RK_EINTERNAL);
	assert_non_null(strstr(err.msg, "double release"));
	assert_int_equal(cp.free_gpus[0], 8);
	rk_capacity_fini(&cp);

	/* Capacity from jobs: over-commit names the job. */
	struct rk_job j1, j2;
	memset(&j1, 0, sizeof(j1));
	memset(&j2, 0, sizeof(j2));
	j1.id = 1;
	j2.id = 2;
	snprintf(j1.name, sizeof(j1.name), "%s", "one");
	snprintf(j2.name, sizeof(j2.name), "%s", "two");
	rk_alloc_copy(&j1.alloc, &a);
	rk_alloc_copy(&j2.alloc, &a);
	struct rk_job *jobs[2] = {&j1, &j2};
	struct rk_capacity fj;
	assert_int_equal(rk_capacity_from_jobs(&fj, &c, jobs, 1, &err), 0);
	assert_int_equal(fj.free_gpus[0], 2);
	rk_capacity_fini(&fj);
	assert_int_equal(rk_capacity_from_jobs(&fj, &c, jobs, 2, &err), RK_EINFEASIBLE);
	assert_string_equal(err.msg, "job 2 (two): node 0: 6 GPUs asked, 2 free");
	rk_alloc_fini(&j1.alloc);
	rk_alloc_fini(&j2.alloc);
	rk_alloc_fini(&a);
	rk_alloc_fini(&b);
	rk_capacity_fini(&cap);
	rk_cluster_fini(&c);
}

/* Shares built by hand may repeat a node or be out of order (rk_alloc_add
 * keeps them sorted and unique, which lets take and give skip summing per
 * node): the node's sum is what is checked, against what is free. */
static void capacity_repeated_shares(void **state)
{
	(void)state;
	struct rk_cluster c;
	struct rk_error err;
	assert_int_equal(rk_cluster_parse(&c, "3x8,cpus=96,mem=1000M", "c", &err), 0);
	struct rk_capacity cap;
	assert_int_equal(rk_capacity_init(&cap, &c), 0);
	struct rk_share sh[3] = {
	    {.node = 2, .gpus = 5}, {.node = 0, .gpus = 1}, {.node = 2, .gpus = 4}};
	struct rk_alloc a = {.n = 3, .shares = sh};
	assert_false(rk_capacity_fits(&cap, &a));
	assert_int_equal(rk_capacity_take(&cap, &a, &err), RK_EINFEASIBLE);
	assert_string_equal(err.msg, "node 2: 9 GPUs asked, 8 free");
	assert_int_equal(rk_capacity_free_gpus(&cap), 24);
	sh[2].gpus = 3; /* 5 + 3 on node 2 fits exactly */
	assert_int_equal(rk_capacity_take(&cap, &a, &err), 0);
	assert_int_equal(cap.free_gpus[2], 0);
	assert_int_equal(cap.free_gpus[0], 7);
	/* Giving back checks the node's sum too: node 2 was taken whole. */
	sh[0].gpus = 6;
	assert_int_equal(rk_capacity_give(&cap, &a, &err), RK_EINTERNAL);
	sh[0].gpus = 5;
	assert_int_equal(rk_capacity_give(&cap, &a, &err), 0);
	assert_int_equal(rk_capacity_free_gpus(&cap), 24);
	rk_capacity_fini(&cap);
	rk_cluster_fini(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parse_testbed),
		cmocka_unit_test(parse_defaults_and_hetero),
		cmocka_unit_test(parse_errors),
		cmocka_unit_test(gpu_table),
		cmocka_unit_test(alloc_ops),
		cmocka_unit_test(capacity_take_give),
		cmocka_unit_test(capacity_repeated_shares),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
