/*
 * Text and JSON forms the daemon stores and serves: allocations as
 * "node:gpus:cpus:mem_mb[:gpu_mask];..." (shares in node order; the hex GPU
 * mask only when a GPU-sharing policy named the GPUs) and the JSON of a job
 * (docs/api.md, "Job object").
 */
#include "daemon/job/codec.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int rkd_alloc_format(const struct rk_alloc *a, char *buf, size_t cap)
{
	size_t len = 0;
	buf[0] = '\0';
	for (int i = 0; i < a->n; i++) {
		const struct rk_share *s = &a->shares[i];
		int n = s->gpu_mask
				? snprintf(buf + len, cap - len, "%s%d:%d:%d:%lld:%llx", i ? ";" : "",
					   s->node, s->gpus, s->cpus, (long long)s->mem_mb,
					   (unsigned long long)s->gpu_mask)
				: snprintf(buf + len, cap - len, "%s%d:%d:%d:%lld", i ? ";" : "", s->node,
					   s->gpus, s->cpus, (long long)s->mem_mb);
		if (n < 0 || (size_t)n >= cap - len)
			return RK_ERANGE;
		len += (size_t)n;
	}
	return (int)len;
}

int rkd_alloc_parse(const char *text, struct rk_alloc *out)
{
	struct rk_alloc a;
	rk_alloc_init(&a);
	const char *p = text;
	while (*p) {
		int node, gpus, cpus, used = 0;
		long long mem;
		if (sscanf(p, "%d:%d:%d:%lld%n", &node, &gpus, &cpus, &mem, &used) != 4 || node < 0 ||
		    gpus < 0 || cpus < 0 || mem < 0 || rk_alloc_add(&a, node, gpus, cpus, mem)) {
			rk_alloc_fini(&a);
			return RK_EINVAL;
		}
		p += used;
		if (*p == ':') { /* the GPUs a sharing policy named */
			char *end;
			unsigned long long mask = strtoull(p + 1, &end, 16);
			if (end == p + 1) {
				rk_alloc_fini(&a);
				return RK_EINVAL;
			}
			for (int k = 0; k < a.n; k++)
				if (a.shares[k].node == node)
					a.shares[k].gpu_mask = mask;
			p = end;
		}
		if (*p == ';')
			p++;
		else if (*p) {
			rk_alloc_fini(&a);
			return RK_EINVAL;
		}
	}
	rk_alloc_fini(out);
	*out = a;
	return 0;
}

static json_t *alloc_json(const char *text)
{
	json_t *arr = json_array();
	const char *p = text;
	while (p && *p) {
		int node, gpus, cpus, used = 0;
		long long mem;
		if (sscanf(p, "%d:%d:%d:%lld%n", &node, &gpus, &cpus, &mem, &used) != 4)
			break;
		json_t *o = json_object();
		json_object_set_new(o, "node", json_integer(node));
		json_object_set_new(o, "gpus", json_integer(gpus));
		json_object_set_new(o, "cpus", json_integer(cpus));
		json_object_set_new(o, "mem_mb", json_integer(mem));
		p += used;
		if (*p == ':') {
			char *end;
			unsigned long long mask = strtoull(p + 1, &end, 16);
			json_object_set_new(o, "gpu_mask", json_integer((json_int_t)mask));
			p = end;
		}
		json_array_append_new(arr, o);
		if (*p == ';')
			p++;
	}
	return arr;
}

static json_t *opt_str(const char *s)
{
	return (s && *s) ? json_string(s) : json_null();
}

char *rkd_job_json(const struct rkd_job_row *r, int with_hist, const struct rkd_hist_row *hist,
		   int n_hist)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	json_object_set_new(o, "id", json_integer(r->id));
	json_object_set_new(o, "name", json_string(r->name));
	json_object_set_new(o, "tenant", json_string(r->tenant));
	json_object_set_new(o, "state", json_string(r->state));
	json_object_set_new(o, "gpus", json_integer(r->req_gpus));
	json_object_set_new(o, "iterations", json_real(r->iters_total));
	json_object_set_new(o, "iters_done", json_real(r->iters_done));
	json_object_set_new(o, "throughput_sps", json_real(r->tput_sps));
	json_object_set_new(o, "alloc", alloc_json(r->alloc));
	json_object_set_new(o, "plan", opt_str(r->plan));
	json_object_set_new(o, "gpu_ids", opt_str(r->gpu_ids));
	json_object_set_new(o, "run", json_integer(r->run));
	json_object_set_new(o, "restarts", json_integer(r->restarts));
	json_object_set_new(o, "submit_ms", json_integer(r->submit_ms));
	json_object_set_new(o, "first_start_ms",
			    r->first_start_ms >= 0 ? json_integer(r->first_start_ms) : json_null());
	json_object_set_new(o, "end_ms", r->end_ms >= 0 ? json_integer(r->end_ms) : json_null());
	json_object_set_new(o, "attained_gpu_s", json_real(r->attained_gpu_s));
	json_object_set_new(o, "reason", opt_str(r->reason));
	/* squeue's %r: why a pending job waits; "None" until a round has looked at it */
	int pending = !strcmp(r->state, "pending");
	json_object_set_new(o, "pending_reason",
			    !pending                ? json_null()
			    : r->hold[0]            ? json_string("Held")
			    : r->pending_reason[0]  ? json_string(r->pending_reason)
						    : json_string("None"));
	json_object_set_new(o, "hold", opt_str(r->hold));
	json_object_set_new(o, "exit_status",
			    r->exit_status != -1 ? json_integer(r->exit_status) : json_null());
	json_t *spec = json_loads(r->spec_json, 0, NULL);
	/* the plans the job's script runs; a spec stored before plan spaces keeps every plan */
	json_t *space = spec ? json_object_get(spec, "plan_space") : NULL;
	json_object_set_new(o, "plan_space",
			    json_is_string(space) ? json_copy(space) : json_string("all"));
	json_object_set_new(o, "spec", spec ? spec : json_null());
	if (with_hist) {
		json_t *h = json_array();
		for (int i = 0; i < n_hist; i++) {
			json_t *e = json_object();
			json_object_set_new(e, "t_ms", json_integer(hist[i].t_ms));
			json_object_set_new(e, "run", json_integer(hist[i].run));
			json_object_set_new(e, "reason", json_string(hist[i].reason));
			json_object_set_new(e, "alloc", alloc_json(hist[i].alloc));
			json_object_set_new(e, "plan", opt_str(hist[i].plan));
			json_array_append_new(h, e);
		}
		json_object_set_new(o, "history", h);
	}
	char *text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	return text;
}
