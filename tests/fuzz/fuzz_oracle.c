/*
 * libFuzzer harness for the throughput oracle's table readers (oracle.h): the
 * first byte picks the format (Rubick placements.csv, Sia/Pollux placements,
 * Sia/Pollux scalability, a Gavel/Shockwave throughput JSON answering job type
 * "A"), the rest is the file text. A text that loads must
 * then answer a few lookups with a finite positive time or an explained
 * error; a text that does not load must leave a message.
 */
#include "rubick/oracle.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void ask(struct rk_oracle *o, struct rk_job *job, const char *digits, struct rk_plan p)
{
	struct rk_node nodes[8];
	struct rk_share shares[8];
	memset(nodes, 0, sizeof(nodes));
	int n = (int)strlen(digits), g = 0;
	for (int i = 0; i < n; i++) {
		nodes[i].id = i;
		memcpy(nodes[i].gpu_type, "a800", 5);
		nodes[i].gpus = 8;
		nodes[i].cpus = 64;
		nodes[i].up = 1;
		shares[i] = (struct rk_share){
			.node = i, .gpus = digits[i] - '0', .cpus = 4 * (digits[i] - '0')};
		g += digits[i] - '0';
	}
	struct rk_cluster cl = {.n_nodes = n, .nodes = nodes};
	struct rk_alloc a = {.n = n, .shares = shares};
	if (p.tp * p.pp * p.dp != g)
		p.dp = g / (p.tp * p.pp);
	struct rk_oracle_result res;
	struct rk_error err;
	err.msg[0] = '\0';
	int rc = rk_oracle_lookup(o, job, &p, &a, &cl, &res, &err);
	if (rc == 0 && !(isfinite(res.iter_s) && res.iter_s > 0))
		abort();
	if (rc != 0 && err.msg[0] == '\0')
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	int kind = data[0] % 4;
	const char *text = (const char *)data + 1;
	size_t len = size - 1;
	struct rk_oracle *o = NULL;
	struct rk_error err;
	if (rk_oracle_create_measured(&o, NULL, RK_ORACLE_FALLBACK_NONE, &err))
		abort();
	err.msg[0] = '\0';
	int rc = kind == 3   ? rk_oracle_add_gavel_throughputs(o, text, len, "fuzz.json", "v100",
								       &err)
		 : kind == 0 ? rk_oracle_add_rubick_table(o, "m", 0, text, len, "fuzz.csv", &err)
			     : rk_oracle_add_sia_profile(o, "m", "", kind == 1 ? RK_SIA_PLACEMENTS
										: RK_SIA_SCALABILITY,
							 text, len, "fuzz.csv", &err);
	if (rc != 0 && err.msg[0] == '\0')
		abort();
	if (rc == 0) {
		struct rk_model m = {.name = "m", .global_batch = 64};
		struct rk_job job = {.id = 1, .model = &m, .global_batch = 64, .job_type = "A"};
		struct rk_plan dp = {.dp = 1, .tp = 1, .pp = 1, .mb = 4, .ga = 2};
		struct rk_plan z = {.dp = 1, .tp = 1, .pp = 1, .mb = 8, .ga = 1, .zero = 2, .offload = 1};
		struct rk_plan t = {.dp = 2, .tp = 2, .pp = 2, .mb = 1, .ga = 32};
		ask(o, &job, "1", dp);
		ask(o, &job, "44", dp);
		ask(o, &job, "3221", z);
		ask(o, &job, "8", t);
		ask(o, &job, "44", t);
		ask(o, &job, "7", dp);
	}
	rk_oracle_destroy(o);
	return 0;
}
