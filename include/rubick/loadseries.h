/*
 * Inference-load series (issue 5, docs/aryl.md): how many inference servers
 * inference needs over time; the rest of the inference cluster may be loaned
 * to training (Aryl/Lyra, docs/references.md §2.2). Piecewise constant: sample i
 * holds from t_s[i] until t_s[i+1] (the last one forever).
 *
 * File format, one sample a line, '#' starts a comment, blank lines ignored,
 * an optional first line "t_s,servers_needed":
 *
 *   t_s,servers_needed
 *   0,12
 *   900,14
 *
 * t_s: seconds from the simulation start (integer >= 0), strictly increasing
 * with one fixed step (the first interval): a larger interval is a gap, a
 * smaller one an irregular sample, both rejected. servers_needed: integer >= 0.
 */
#ifndef RUBICK_LOADSERIES_H
#define RUBICK_LOADSERIES_H

#include "rubick/error.h"

#include <stdint.h>

struct rk_load_series {
	int n;
	int64_t *t_ms; /* owned, strictly increasing */
	int *need;     /* owned, servers needed from t_ms[i] on */
};

/*
 * Parse `text` (NUL-terminated; `name` labels messages) into *out (OUT; free
 * with rk_load_series_fini). Errors "NAME:LINE:COL: what is wrong" (RK_EINVAL).
 */
int rk_load_series_parse(struct rk_load_series *out, const char *text, const char *name,
			 struct rk_error *err);

/* A seeded diurnal load (docs/aryl.md). */
struct rk_diurnal {
	int servers;       /* inference cluster size (servers) */
	double peak;       /* fraction of servers needed at the daily peak, 0..1 */
	double trough;     /* fraction needed at the trough, 0..peak */
	int64_t period_s;  /* one cycle (86400 = a day) */
	int64_t step_s;    /* sample spacing */
	double noise;      /* +- fraction of servers of uniform noise per sample */
	uint64_t seed;
};

/* Defaults: 32 servers, peak 0.9, trough 0.3, period 86400 s, step 900 s, noise 0.05, seed 1. */
void rk_diurnal_default(struct rk_diurnal *d);

/*
 * Parse "servers=N,peak=F,trough=F,period=S,step=S,noise=F,seed=N" (any
 * subset, any order) onto *d; `name` labels messages (e.g. "--inference").
 */
int rk_diurnal_parse(struct rk_diurnal *d, const char *text, const char *name,
		     struct rk_error *err);

/*
 * Samples 0, step, 2 step, ... up to `horizon_s` of
 *   need(t) = servers x (trough + (peak - trough) x (1 - cos(2 pi t / period)) / 2)
 *             + servers x noise x U(-1, 1),  rounded, clamped to 0..servers
 * (trough at t = 0, i.e. midnight; peak at period/2). OUT: *out.
 */
int rk_diurnal_generate(const struct rk_diurnal *d, int64_t horizon_s,
			struct rk_load_series *out, struct rk_error *err);

/* Servers needed at time t (the sample in force; 0 before the first). */
int rk_load_series_at(const struct rk_load_series *s, int64_t t_ms);

void rk_load_series_fini(struct rk_load_series *s);

#endif
