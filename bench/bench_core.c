/*
 * bench_core: speed of the white-box core (issue 2, "Speed"):
 *   predict   one plan's iteration time (rk_perf_predict)       budget 1 us
 *   curve     one full sensitivity curve, 1..64 GPUs            budget 2 ms
 * plus, for context, plan enumeration of one placement and one memory
 * estimate. Every figure is the median of R repeated runs, printed beside the
 * in-run reference (a fixed floating-point loop of 1000 multiply-adds) so
 * numbers from different machines compare as ratios. Fitting is benched by
 * the perf area.
 *
 *   bench_core [--reps R]
 *
 * Models are LLaMA-2-7B (3D plans), GPT-2 and BERT as in data/zoo, with the
 * documented default performance parameters (fit.h): timing does not depend
 * on their values.
 */
#include "rubick/curve.h"
#include "rubick/fit.h"
#include "rubick/memory.h"
#include "rubick/perf.h"
#include "rubick/plan.h"
#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PREDICT_BUDGET_US 1.0
#define CURVE_BUDGET_MS 2.0


static struct rk_model model(const char *name, int layers, int hidden, int heads, int seq,
			     int vocab, double params, int batch, double fwd_ms, int allow_3d)
{
	struct rk_model m = {0};
	snprintf(m.name, sizeof(m.name), "%s", name);
	m.layers = layers;
	m.hidden = hidden;
	m.heads = heads;
	m.seq_len = seq;
	m.vocab = vocab;
	m.params = params;
	m.global_batch = batch;
	m.fwd_ms = fwd_ms;
	m.allow_3d = allow_3d;
	return m;
}

int main(int argc, char **argv)
{
	int reps = 31;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
			char *end;
			long r = strtol(argv[++i], &end, 10);
			if (*end || r < 1 || r > 100000) {
				fprintf(stderr, "bench_core: --reps: '%s' must be in 1..100000\n",
					argv[i]);
				return 2;
			}
			reps = (int)r;
		} else {
			fprintf(stderr, "usage: bench_core [--reps R]\n");
			return 2;
		}
	}
	struct rk_model models[] = {
		model("llama7", 32, 4096, 32, 2048, 32000, 6.738e9, 8, 1000, 1),
		model("gpt2", 48, 1600, 25, 1024, 50257, 1.558e9, 16, 1100, 1),
		model("bert", 24, 1024, 16, 512, 30522, 336.3e6, 32, 225, 0),
	};
	struct rk_perf_env env;
	rk_perf_env_a800(&env);
	struct rk_perf_params k;
	rk_perf_params_default(env.overlap, &k);
	double *t = calloc((size_t)reps, sizeof(*t));
	if (!t)
		return 1;

	for (int r = 0; r < reps; r++)
		t[r] = bench_reference_ns();
	double ref = bench_median(t, reps);
	printf("reference: 1000 multiply-adds %.0f ns (median of %d)\n\n", ref, reps);
	printf("%-9s %-8s %14s %10s %10s  %s\n", "section", "model", "median", "x ref", "budget",
	       "verdict");

	int over = 0;
	for (size_t mi = 0; mi < sizeof(models) / sizeof(models[0]); mi++) {
		const struct rk_model *m = &models[mi];
		/* predict: a multi-node plan of the model, 1000 calls per sample. */
		struct rk_placement pl;
		rk_placement_parse("8888", "bench", &pl, NULL);
		struct rk_plan p = {32, 1, 1, 1, 1, 0, 1, 0};
		if (m->global_batch % 32) /* DP cannot split: take the first feasible plan */
			p = (struct rk_plan){1, 8, 4, 1, m->global_batch, 0, 0, 0};
		for (int r = 0; r < reps; r++) {
			double t0 = bench_mono_ns(), ms = 0, acc = 0;
			for (int i = 0; i < 1000; i++) {
				rk_perf_predict(m, &k, &env, &p, &pl, 8, &ms);
				acc += ms;
			}
			bench_sink = acc;
			t[r] = (bench_mono_ns() - t0) / 1000;
		}
		double pred_ns = bench_median(t, reps);
		int bad = pred_ns / 1000 > PREDICT_BUDGET_US;
		over += bad;
		printf("%-9s %-8s %11.1f ns %10.2f %7.0f ns  %s\n", "predict", m->name, pred_ns,
		       pred_ns / ref, PREDICT_BUDGET_US * 1000, bad ? "OVER" : "ok");

		/* memory: one estimate. */
		for (int r = 0; r < reps; r++) {
			struct rk_mem_usage u;
			double t0 = bench_mono_ns(), acc = 0;
			for (int i = 0; i < 1000; i++) {
				rk_memory_estimate(m, &p, &u, NULL);
				acc += u.gpu_mb;
			}
			bench_sink = acc;
			t[r] = (bench_mono_ns() - t0) / 1000;
		}
		double mem_ns = bench_median(t, reps);
		printf("%-9s %-8s %11.1f ns %10.2f %10s  %s\n", "memory", m->name, mem_ns,
		       mem_ns / ref, "-", "-");

		/* enumerate: every plan of 8888 with the memory filter. */
		struct rk_plan buf[4096];
		size_t n = 0;
		for (int r = 0; r < reps; r++) {
			double t0 = bench_mono_ns();
			rk_plan_enumerate(m, m->global_batch, &pl, 81920, RK_MEM_UNLIMITED, buf, 4096,
					  &n, NULL);
			t[r] = bench_mono_ns() - t0;
		}
		double en_ns = bench_median(t, reps);
		printf("%-9s %-8s %11.1f us %10.2f %10s  %zu plans on 8888\n", "enumerate", m->name,
		       en_ns / 1000, en_ns / ref, "-", n);

		/* curve: 1..64 GPUs, 4 CPU levels, one bandwidth level. */
		struct rk_curve_opts o;
		rk_curve_opts_default(&env, &o);
		long preds = 0;
		for (int r = 0; r < reps; r++) {
			struct rk_curve c;
			struct rk_error err;
			double t0 = bench_mono_ns();
			if (rk_curve_build(m, &k, &env, m->global_batch, &o, &c, &err)) {
				fprintf(stderr, "bench_core: %s\n", err.msg);
				free(t);
				return 1;
			}
			t[r] = bench_mono_ns() - t0;
			preds = c.n_predictions;
			rk_curve_fini(&c);
		}
		double cv_ns = bench_median(t, reps);
		bad = cv_ns / 1e6 > CURVE_BUDGET_MS;
		over += bad;
		printf("%-9s %-8s %11.3f ms %10.0f %7.1f ms  %s (%ld predictions)\n", "curve",
		       m->name, cv_ns / 1e6, cv_ns / ref, CURVE_BUDGET_MS, bad ? "OVER" : "ok",
		       preds);
	}
	free(t);
	printf("\n%d over budget\n", over);
	return over ? 1 : 0;
}
