/*
 * libFuzzer harness for plan and placement text (plan.h): the canonical plan
 * form, placements, and the Rubick artifact's plan names. Whatever parses must
 * format and parse back to the same value; failures must explain themselves.
 */
#include "rubick/plan.h"
#include "rubick/model.h"
#include "rubick/zoo.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct rk_model model;
	static int ready;
	struct rk_error err;
	if (!ready) {
		const char *spec = "name=gpt2; layers=48; hidden=1600; heads=25; seq_len=1024; "
				   "vocab=50257; params=1.558e9; global_batch=16; allow_3d=1";
		if (rk_model_parse(spec, strlen(spec), "spec", &model, &err))
			abort();
		ready = 1;
	}
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';

	struct rk_plan plan, back;
	char buf[RK_PLAN_TEXT_MAX];
	rk_error_clear(&err);
	int rc = rk_plan_parse(text, "fuzz", &plan, &err);
	if (rc) {
		if (err.code != rc || !err.msg[0])
			abort();
	} else {
		int n = rk_plan_format(&plan, buf, sizeof(buf));
		if (n <= 0 || rk_plan_parse(buf, "fmt", &back, &err) || !rk_plan_equal(&plan, &back))
			abort();
	}

	struct rk_placement pl, plb;
	char pbuf[RK_PLACEMENT_MAX_NODES * 6 + 8];
	rk_error_clear(&err);
	rc = rk_placement_parse(text, "fuzz", &pl, &err);
	if (rc) {
		if (err.code != rc || !err.msg[0])
			abort();
	} else {
		int n = rk_placement_format(&pl, pbuf, sizeof(pbuf));
		if (n <= 0 || rk_placement_parse(pbuf, "fmt", &plb, &err) ||
		    plb.n_nodes != pl.n_nodes ||
		    memcmp(plb.gpus, pl.gpus, sizeof(int) * (size_t)pl.n_nodes))
			abort();
	}

	/* Artifact plan names on a fixed 2 x 8 GPU placement. */
	struct rk_placement p88 = {2, {8, 8}};
	rk_error_clear(&err);
	rc = rk_plan_from_artifact(text, "fuzz", &model, 16, &p88, 80 * 1024, &plan, &err);
	if (rc) {
		if (err.code != rc || !err.msg[0])
			abort();
	} else if (rk_plan_validate(&plan, 16, 16, &err)) {
		abort();
	}
	free(text);
	return 0;
}
