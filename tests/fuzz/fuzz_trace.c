/*
 * libFuzzer harness for the trace readers. Byte 0 picks the format (0 = auto,
 * 1.. = rk_trace_formats() in order; bit 7 also passes a two-model zoo, so
 * Gavel commands reach the launch-command reader), byte 1 the options (bit 0 skip_bad,
 * bit 1 a time window, bit 2 max_jobs, bit 3 a one-model zoo, high bits the
 * seed); the rest is the trace text. Any crash, leak or UB is a bug; so is
 * a success whose records break the documented invariants.
 */
#include "rubick/trace.h"
#include "rubick/zoo.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Two zoo entries in data/zoo's format, built once. */
static struct rk_zoo zoo;
static int zoo_ready;

static void zoo_build(void)
{
	static const char *const text[] = {
		"name = gpt2\nlayers = 48\nhidden = 1600\nheads = 25\nseq_len = 1024\n"
		"vocab = 50257\nparams = 1.558e9\nglobal_batch = 16\nfwd_ms = 1100\nallow_3d = 1\n",
		"name = t5\nlayers = 16\nhidden = 1280\nheads = 16\nseq_len = 768\n"
		"vocab = 30622\nparams = 1.241e9\nglobal_batch = 16\nfwd_ms = 410\nallow_3d = 1\n",
	};
	rk_zoo_init(&zoo);
	for (int i = 0; i < 2; i++)
		if (rk_zoo_add_text(&zoo, text[i], strlen(text[i]), "fuzz-zoo", NULL) != 0)
			abort();
	zoo_ready = 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	const char *const *names = rk_trace_formats();
	size_t n_names = 0;
	while (names[n_names])
		n_names++;
	size_t pick = (data[0] & 0x7f) % (n_names + 1);
	const char *format = pick == 0 ? "auto" : names[pick - 1];
	static const char *const one_model[] = {"gpt2", NULL};
	struct rk_trace_options o = rk_trace_options_default();
	o.skip_bad = data[1] & 1;
	if (data[1] & 2) {
		o.window_start_ms = 1000;
		o.window_end_ms = 1000000;
	}
	if (data[1] & 4)
		o.max_jobs = 3;
	if (data[1] & 8)
		o.models = one_model;
	o.seed = data[1] >> 4;
	if (data[0] & 0x80) {
		if (!zoo_ready)
			zoo_build();
		o.zoo = &zoo;
	}
	struct rk_trace t;
	struct rk_error err;
	int rc = rk_trace_parse((const char *)data + 2, size - 2, "fuzz", format, &o, &t, &err);
	if (rc != 0) {
		/* Failure: an empty result and a message naming the input. */
		int named = strncmp(err.msg, "fuzz", 4) == 0 || strncmp(err.msg, "--format", 8) == 0;
		if (t.jobs || t.n || err.code != rc || !named)
			abort();
		return 0;
	}
	for (size_t i = 0; i < t.n; i++) {
		const struct rk_trace_job *j = &t.jobs[i];
		if (j->gpus < 1 || j->min_gpus > j->gpus || j->max_gpus < j->gpus || !j->model[0] ||
		    !j->name[0] || j->submit_ms < 0 ||
		    (i > 0 && j->submit_ms < t.jobs[i - 1].submit_ms))
			abort();
	}
	if (t.n_skipped && !o.skip_bad)
		abort();
	rk_trace_fini(&t);
	return 0;
}
