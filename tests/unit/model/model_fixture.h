/*
 * Hand-built model descriptions the src/model tests share (plan, memory,
 * curve): a constructor for the architecture fields and the two models
 * several tests use. Performance parameters stay unfitted.
 */
#ifndef TEST_MODEL_FIXTURE_H
#define TEST_MODEL_FIXTURE_H

#include "rubick/model.h"

#include <stdio.h>

/* A model with the given architecture; fwd_ms 0 = unknown (plans and memory ignore it). */
static inline struct rk_model fx_model(const char *name, int layers, int hidden, int heads,
				       int seq_len, int vocab, double params, int global_batch,
				       double fwd_ms, int allow_3d)
{
	struct rk_model m = {0};
	snprintf(m.name, sizeof(m.name), "%s", name);
	m.layers = layers;
	m.hidden = hidden;
	m.heads = heads;
	m.seq_len = seq_len;
	m.vocab = vocab;
	m.params = params;
	m.global_batch = global_batch;
	m.fwd_ms = fwd_ms;
	m.allow_3d = allow_3d;
	return m;
}

/* A 4-layer toy, small enough for brute-force searches of the plan space. */
static inline struct rk_model fx_tiny(void)
{
	return fx_model("tiny", 4, 64, 4, 32, 100, 1e6, 8, 0, 1);
}

/* LLaMA-2-7B as data/zoo/llama7.model describes it, with the given forward time (ms). */
static inline struct rk_model fx_llama7(double fwd_ms)
{
	return fx_model("llama7", 32, 4096, 32, 2048, 32000, 6.738e9, 8, fwd_ms, 1);
}

#endif
