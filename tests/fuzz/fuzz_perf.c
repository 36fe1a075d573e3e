/*
 * libFuzzer harness for the perf area's readers: the measured placements.csv
 * reader (rk_measured_parse), the artifact profile pair
 * (rk_profile_parse_artifact; the input is split at its first 0x01 byte into
 * config.csv and data.csv) and rubick's profile format (rk_profile_parse).
 * The first byte picks the reader. Any input either fails with a message
 * naming the source or yields rows whose values are sane; parsed profile
 * samples are fed to rk_perf_predict, which must answer or refuse cleanly.
 */
#include "rubick/fit.h"
#include "rubick/measured.h"
#include "rubick/perf.h"
#include "rubick/profile.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_samples(const struct rk_profile *p)
{
	struct rk_model m = {.layers = 24, .hidden = 1024, .heads = 16, .seq_len = 512,
			     .params = 336.3e6, .global_batch = 32, .fwd_ms = 225};
	struct rk_perf_params k;
	rk_perf_params_default(RK_OVERLAP_PNORM, &k);
	struct rk_perf_env env;
	rk_perf_env_a800(&env);
	for (int i = 0; i < p->n; i++) {
		const struct rk_perf_sample *s = &p->samples[i];
		if (!(s->iter_ms > 0) || !isfinite(s->iter_ms) || s->cpus_per_gpu < 1)
			abort();
		double t;
		int rc = rk_perf_predict(&m, &k, &env, &s->plan, &s->placement, s->cpus_per_gpu, &t);
		if (rc == 0 && !(t > 0 && isfinite(t)))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	int which = data[0] % 3;
	const char *text = (const char *)data + 1;
	size_t len = size - 1;
	struct rk_error err;
	rk_error_clear(&err);
	if (which == 0) {
		struct rk_measured t;
		int rc = rk_measured_parse(text, len, "fuzz", &t, &err);
		if (rc) {
			if (err.code != rc || strncmp(err.msg, "fuzz", 4) || t.rows)
				abort();
			return 0;
		}
		for (int i = 0; i < t.n_rows; i++) {
			const struct rk_measured_row *r = &t.rows[i];
			if (!(r->iter_s >= 0) || !isfinite(r->iter_s) || r->failed != (r->iter_s == 0) ||
			    r->placement.n_nodes < 1 || rk_measured_row_gpus(r) < 1 || !r->plan[0])
				abort();
		}
		rk_measured_fini(&t);
		return 0;
	}
	struct rk_profile p;
	int rc;
	if (which == 1) {
		const char *sep = memchr(text, 0x01, len);
		size_t cl = sep ? (size_t)(sep - text) : len;
		const char *d = sep ? sep + 1 : "";
		size_t dl = sep ? len - cl - 1 : 0;
		rc = rk_profile_parse_artifact(text, cl, "fuzz-config", d, dl, "fuzz-data", 32, &p,
					       &err);
	} else {
		rc = rk_profile_parse(text, len, "fuzz", &p, &err);
	}
	if (rc) {
		if (err.code != rc || strncmp(err.msg, "fuzz", 4) || p.samples)
			abort();
		return 0;
	}
	check_samples(&p);
	rk_profile_fini(&p);
	return 0;
}
