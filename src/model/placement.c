/*
 * Placements: GPUs per node of one job ("8888", or "16,16" for nodes with more
 * than 9 GPUs), and the topology rule a plan must meet on one (plan.h).
 */
#include "rubick/plan.h"

#include <stdio.h>
#include <string.h>

static int perr(struct rk_error *err, int code, const char *name, size_t col, const char *what,
		long long v)
{
	return rk_error_set(err, code, "%s:1:%zu: %s%lld", name ? name : "placement", col, what,
			    v);
}

static int parse_commas(const char *text, size_t n, const char *name, struct rk_placement *p,
			struct rk_error *err)
{
	size_t pos = 0;
	for (;;) {
		size_t start = pos;
		long long v = 0;
		while (pos < n && text[pos] >= '0' && text[pos] <= '9') {
			if (v <= RK_PLACEMENT_NODE_GPUS_MAX)
				v = v * 10 + (text[pos] - '0');
			pos++;
		}
		if (pos == start)
			return rk_error_set(err, RK_EINVAL,
					    "%s:1:%zu: expected a GPU count (digits) for node %d",
					    name, start + 1, p->n_nodes + 1);
		if (pos < n && text[pos] != ',')
			return rk_error_set(err, RK_EINVAL,
					    "%s:1:%zu: unexpected character '%c' (expected ',' or a "
					    "digit)",
					    name, pos + 1, text[pos]);
		if (v < 1 || v > RK_PLACEMENT_NODE_GPUS_MAX)
			return rk_error_set(err, RK_ERANGE,
					    "%s:1:%zu: GPUs on a node must be in 1..%d, got %lld",
					    name, start + 1, RK_PLACEMENT_NODE_GPUS_MAX, v);
		if (p->n_nodes == RK_PLACEMENT_MAX_NODES)
			return perr(err, RK_ERANGE, name, start + 1,
				    "too many nodes: at most ", RK_PLACEMENT_MAX_NODES);
		p->gpus[p->n_nodes++] = (int)v;
		if (pos == n)
			return RK_OK;
		pos++; /* the comma */
		if (pos == n)
			return rk_error_set(err, RK_EINVAL, "%s:1:%zu: trailing ',' (no node after it)",
					    name, pos);
	}
}

int rk_placement_parse(const char *text, const char *name, struct rk_placement *out,
		       struct rk_error *err)
{
	if (!name)
		name = "placement";
	if (!text || !out)
		return rk_error_set(err, RK_EINVAL, "%s: no placement given", name);
	size_t n = strlen(text);
	if (n == 0)
		return rk_error_set(err, RK_EINVAL,
				    "%s:1:1: empty placement (expected GPUs per node, e.g. 8888 or "
				    "16,16)",
				    name);
	struct rk_placement p = {0};
	if (memchr(text, ',', n)) {
		int rc = parse_commas(text, n, name, &p, err);
		if (rc)
			return rc;
	} else {
		for (size_t i = 0; i < n; i++) {
			char c = text[i];
			if (c == '0')
				return rk_error_set(err, RK_ERANGE,
						    "%s:1:%zu: a node with 0 GPUs (each digit is "
						    "one node's GPU count, 1..9)",
						    name, i + 1);
			if (c < '1' || c > '9')
				return rk_error_set(err, RK_EINVAL,
						    "%s:1:%zu: unexpected character '%c' (expected "
						    "digits 1..9, or a comma list like 16,16)",
						    name, i + 1, c);
			if (p.n_nodes == RK_PLACEMENT_MAX_NODES)
				return perr(err, RK_ERANGE, name, i + 1, "too many nodes: at most ",
					    RK_PLACEMENT_MAX_NODES);
			p.gpus[p.n_nodes++] = c - '0';
		}
	}
	*out = p;
	return RK_OK;
}

int rk_placement_format(const struct rk_placement *pl, char *buf, size_t cap)
{
	if (!pl || !buf || cap == 0)
		return RK_EINVAL;
	if (pl->n_nodes < 0 || pl->n_nodes > RK_PLACEMENT_MAX_NODES)
		return RK_EINVAL;
	int digits = 1;
	for (int i = 0; i < pl->n_nodes; i++) {
		if (pl->gpus[i] < 1 || pl->gpus[i] > RK_PLACEMENT_NODE_GPUS_MAX)
			return RK_EINVAL;
		if (pl->gpus[i] > 9)
			digits = 0;
	}
	size_t len = 0;
	buf[0] = '\0';
	for (int i = 0; i < pl->n_nodes; i++) {
		int w = snprintf(buf + len, cap - len, digits || i == 0 ? "%d" : ",%d",
				 pl->gpus[i]);
		if (w < 0)
			return RK_EINTERNAL;
		if ((size_t)w >= cap - len)
			return RK_ERANGE;
		len += (size_t)w;
	}
	return (int)len;
}

int rk_placement_total(const struct rk_placement *pl)
{
	int t = 0;
	for (int i = 0; pl && i < pl->n_nodes; i++)
		t += pl->gpus[i];
	return t;
}

int rk_placement_consolidated(int gpus, int node_gpus, struct rk_placement *out,
			      struct rk_error *err)
{
	if (gpus < 1 || node_gpus < 1 || node_gpus > RK_PLACEMENT_NODE_GPUS_MAX)
		return rk_error_set(err, RK_EINVAL,
				    "consolidated placement: need gpus >= 1 and node size in 1..%d "
				    "(got %d GPUs, %d per node)",
				    RK_PLACEMENT_NODE_GPUS_MAX, gpus, node_gpus);
	int nodes = (gpus + node_gpus - 1) / node_gpus;
	if (nodes > RK_PLACEMENT_MAX_NODES)
		return rk_error_set(err, RK_ERANGE,
				    "consolidated placement: %d GPUs need %d nodes of %d, more than "
				    "%d",
				    gpus, nodes, node_gpus, RK_PLACEMENT_MAX_NODES);
	struct rk_placement p = {0};
	p.n_nodes = nodes;
	for (int i = 0; i < nodes; i++)
		p.gpus[i] = i < nodes - 1 ? node_gpus : gpus - node_gpus * (nodes - 1);
	*out = p;
	return RK_OK;
}

int rk_plan_check_placement(const struct rk_plan *plan, const struct rk_placement *pl,
			    struct rk_error *err)
{
	if (!plan || !pl || pl->n_nodes < 1)
		return rk_error_set(err, RK_EINVAL, "plan/placement check: nothing given");
	int total = rk_placement_total(pl);
	long long g = (long long)plan->dp * plan->tp * plan->pp;
	if (g != total)
		return rk_error_set(err, RK_EINFEASIBLE,
				    "plan uses dp*tp*pp = %lld GPUs but the placement has %d", g,
				    total);
	/* Megatron orders ranks tensor-fastest; with tp dividing every node's GPU
	 * count each tensor group is a run of tp GPUs inside one node. */
	for (int i = 0; i < pl->n_nodes; i++)
		if (pl->gpus[i] % plan->tp)
			return rk_error_set(err, RK_EINFEASIBLE,
					    "tp=%d does not divide the %d GPUs of node %d: a "
					    "tensor-parallel group would span nodes",
					    plan->tp, pl->gpus[i], i + 1);
	return RK_OK;
}
