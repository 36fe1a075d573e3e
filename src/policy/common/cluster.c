/*
 * Cluster spec: parse "NODESxGPUS[:TYPE][,key=value...]" groups joined by '+'
 * or written one per line, into rk_cluster. Grammar and defaults are in
 * include/rubick/cluster.h. Every error names "NAME:LINE:COL".
 */
#include "rubick/cluster.h"

#include "rubick/gpu.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Defaults scale the Rubick testbed node (8 x A800, 96 vCPUs, 1600 GB RAM,
 * 400 GB/s NVLink, 100 GB/s RDMA; docs/references.md §1.9) per GPU.
 */
#define DEFAULT_CPUS_PER_GPU 12
#define DEFAULT_MEM_MB_PER_GPU (200LL * 1024)
#define DEFAULT_NVLINK_GBPS 400.0
#define DEFAULT_NET_GBPS 100.0
#define MAX_CPUS_PER_NODE 100000
#define MAX_MEM_MB_PER_NODE (1LL << 40) /* 1 EiB in MiB: anything above is a typo */
#define MAX_GBPS 1e6

int64_t rk_gpu_type_mem_mb(const char *type)
{
	const struct rk_gpu_spec *g = rk_gpu_find(type);
	return (int64_t)(g ? g->mem_gib : 80) * 1024;
}

/* Cursor over the spec text; line and column are 1-based for messages. */
struct cursor {
	const char *p;
	const char *name;
	int line;
	const char *line_start;
};

static int col(const struct cursor *c, const char *at)
{
	return (int)(at - c->line_start) + 1;
}

/* Fill err with "NAME:LINE:COL: " and the message; yields `code`. */
#define FAIL(cur, at, err, code, ...)                                                          \
	(rk_error_set((err), (code), "%s:%d:%d: ", (cur)->name, (cur)->line, col((cur), (at))), \
	 append_msg((err), __VA_ARGS__), (code))

static void append_msg(struct rk_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void append_msg(struct rk_error *err, const char *fmt, ...)
{
	if (!err)
		return;
	size_t len = strlen(err->msg);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->msg + len, sizeof(err->msg) - len, fmt, ap);
	va_end(ap);
}

/* End of the current field: ',', '+', '#', newline or NUL. */
static int field_end(char ch)
{
	return ch == ',' || ch == '+' || ch == '#' || ch == '\n' || ch == '\r' || ch == '\0';
}

static void skip_blanks(struct cursor *c)
{
	while (*c->p == ' ' || *c->p == '\t')
		c->p++;
}

/* A positive integer in [1, max] at the cursor. */
static int parse_count(struct cursor *c, long max, const char *what, long *out,
		       struct rk_error *err)
{
	const char *at = c->p;
	if (!isdigit((unsigned char)*at))
		return FAIL(c, at, err, RK_EINVAL, "expected %s (a positive integer)", what);
	errno = 0;
	char *end;
	long v = strtol(at, &end, 10);
	if (errno || v < 1 || v > max)
		return FAIL(c, at, err, RK_ERANGE, "%s must be in 1..%ld", what, max);
	c->p = end;
	*out = v;
	return 0;
}

/* The value text of "key=value" up to the field end, trailing blanks trimmed. */
static size_t value_len(const char *v)
{
	size_t n = 0;
	while (!field_end(v[n]))
		n++;
	while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t'))
		n--;
	return n;
}

static int parse_int_value(struct cursor *c, const char *v, size_t n, long max, const char *key,
			   long *out, struct rk_error *err)
{
	char buf[32];
	if (n == 0 || n >= sizeof(buf))
		return FAIL(c, v, err, RK_EINVAL, "%s: expected a non-negative integer", key);
	memcpy(buf, v, n);
	buf[n] = '\0';
	char *end;
	errno = 0;
	long x = strtol(buf, &end, 10);
	if (*end != '\0' || !isdigit((unsigned char)buf[0]))
		return FAIL(c, v, err, RK_EINVAL, "%s: '%s' is not a non-negative integer", key,
			    buf);
	if (errno || x < 0 || x > max)
		return FAIL(c, v, err, RK_ERANGE, "%s: %s is out of range 0..%ld", key, buf, max);
	*out = x;
	return 0;
}

static int parse_gbps_value(struct cursor *c, const char *v, size_t n, const char *key,
			    double *out, struct rk_error *err)
{
	char buf[32];
	if (n == 0 || n >= sizeof(buf))
		return FAIL(c, v, err, RK_EINVAL, "%s: expected a bandwidth in GB/s", key);
	memcpy(buf, v, n);
	buf[n] = '\0';
	char *end;
	errno = 0;
	double x = strtod(buf, &end);
	if (*end != '\0' || end == buf || !(isdigit((unsigned char)buf[0]) || buf[0] == '.'))
		return FAIL(c, v, err, RK_EINVAL, "%s: '%s' is not a number (GB/s)", key, buf);
	if (errno || !isfinite(x) || x < 0 || x > MAX_GBPS)
		return FAIL(c, v, err, RK_ERANGE, "%s: %s GB/s is out of range 0..%g", key, buf,
			    MAX_GBPS);
	*out = x;
	return 0;
}

/* Memory with an optional binary suffix K, M, G or T (bare number = MiB). */
static int parse_mem_value(struct cursor *c, const char *v, size_t n, const char *key,
			   int64_t *out_mb, struct rk_error *err)
{
	char buf[32];
	if (n == 0 || n >= sizeof(buf))
		return FAIL(c, v, err, RK_EINVAL, "%s: expected a size such as 1600G", key);
	memcpy(buf, v, n);
	buf[n] = '\0';
	char *end;
	errno = 0;
	double x = strtod(buf, &end);
	if (end == buf || !(isdigit((unsigned char)buf[0]) || buf[0] == '.'))
		return FAIL(c, v, err, RK_EINVAL, "%s: '%s' is not a size such as 1600G", key, buf);
	double mb_per_unit = 1.0;
	if (*end) {
		switch (toupper((unsigned char)*end)) {
		case 'K': mb_per_unit = 1.0 / 1024; break;
		case 'M': mb_per_unit = 1.0; break;
		case 'G': mb_per_unit = 1024.0; break;
		case 'T': mb_per_unit = 1024.0 * 1024; break;
		default:
			return FAIL(c, v + (end - buf), err, RK_EINVAL,
				    "%s: unknown unit '%c' (use K, M, G or T)", key, *end);
		}
		end++;
		/* Accept "G", "GB" and "GiB" alike. */
		if (toupper((unsigned char)*end) == 'I')
			end++;
		if (toupper((unsigned char)*end) == 'B')
			end++;
		if (*end)
			return FAIL(c, v + (end - buf), err, RK_EINVAL,
				    "%s: unexpected '%s' after the unit", key, end);
	}
	double mb = x * mb_per_unit;
	if (errno || !isfinite(mb) || mb < 0 || mb > (double)MAX_MEM_MB_PER_NODE)
		return FAIL(c, v, err, RK_ERANGE, "%s: %s is out of range", key, buf);
	*out_mb = (int64_t)floor(mb);
	return 0;
}

/* One group "NxG[:type][,k=v...]" at the cursor, appended to the node list. */
static int parse_group(struct cursor *c, struct rk_cluster *cl, int *cap, struct rk_error *err)
{
	long nodes, gpus;
	int rc = parse_count(c, RK_CLUSTER_MAX_NODES, "node count", &nodes, err);
	if (rc)
		return rc;
	if (*c->p != 'x' && *c->p != 'X')
		return FAIL(c, c->p, err, RK_EINVAL, "expected 'x' between node count and GPUs per "
				     "node (e.g. 8x8)");
	c->p++;
	rc = parse_count(c, RK_NODE_MAX_GPUS, "GPUs per node", &gpus, err);
	if (rc)
		return rc;
	struct rk_node proto = {
		.gpus = (int)gpus,
		.cpus = DEFAULT_CPUS_PER_GPU * (int)gpus,
		.mem_mb = DEFAULT_MEM_MB_PER_GPU * gpus,
		.nvlink_gbps = DEFAULT_NVLINK_GBPS,
		.net_gbps = DEFAULT_NET_GBPS,
		.pool = RK_POOL_TRAINING,
		.up = 1,
	};
	snprintf(proto.gpu_type, sizeof(proto.gpu_type), "%s", RK_CLUSTER_DEFAULT_GPU_TYPE);
	if (*c->p == ':') {
		c->p++;
		const char *t = c->p;
		size_t n = 0;
		while (isalnum((unsigned char)t[n]) || t[n] == '_' || t[n] == '-')
			n++;
		if (n == 0)
			return FAIL(c, t, err, RK_EINVAL, "expected a GPU type after ':'");
		if (n >= RK_GPU_TYPE_MAX)
			return FAIL(c, t, err, RK_ERANGE, "GPU type is longer than %d characters",
				    RK_GPU_TYPE_MAX - 1);
		char want[RK_GPU_TYPE_MAX];
		for (size_t i = 0; i < n; i++)
			want[i] = (char)tolower((unsigned char)t[i]);
		want[n] = '\0';
		/* Types are a modelled resource (docs/gpus.md): a typo must not run as an A800. */
		const struct rk_gpu_spec *g = rk_gpu_find(want);
		if (!g) {
			char known[256];
			rk_gpu_list(known, sizeof(known));
			return FAIL(c, t, err, RK_EINVAL, "unknown GPU type '%s' (known: %s)", want,
				    known);
		}
		snprintf(proto.gpu_type, sizeof(proto.gpu_type), "%s", g->name);
		c->p += n;
	}
	unsigned seen = 0;
	int64_t gpumem = -1;
	static const char *const keys[] = {"cpus", "mem", "nvlink", "net", "pool", "gpumem"};
	for (skip_blanks(c); *c->p == ','; skip_blanks(c)) {
		c->p++;
		skip_blanks(c);
		const char *k = c->p;
		size_t kn = 0;
		while (isalpha((unsigned char)k[kn]))
			kn++;
		/* "8x8," and "8x8,,cpus=96" are typos, not a group without keys. */
		if (kn == 0 && field_end(*k))
			return FAIL(c, k, err, RK_EINVAL, "empty item after ',' (drop the extra ',')");
		int key = -1;
		for (int i = 0; i < 6; i++)
			if (strlen(keys[i]) == kn && !strncmp(k, keys[i], kn))
				key = i;
		if (key < 0)
			return FAIL(c, k, err, RK_EINVAL,
				    "unknown key '%.*s' (expected cpus, mem, nvlink, net, gpumem or pool)",
				    (int)(kn ? kn : 1), kn ? k : "?");
		if (seen & (1u << key))
			return FAIL(c, k, err, RK_EINVAL, "key '%s' given twice", keys[key]);
		seen |= 1u << key;
		if (k[kn] != '=')
			return FAIL(c, k + kn, err, RK_EINVAL, "expected '=' after '%s'", keys[key]);
		const char *v = k + kn + 1;
		size_t vn = value_len(v);
		long iv;
		switch (key) {
		case 0:
			rc = parse_int_value(c, v, vn, MAX_CPUS_PER_NODE, "cpus", &iv, err);
			proto.cpus = (int)iv;
			break;
		case 1: rc = parse_mem_value(c, v, vn, "mem", &proto.mem_mb, err); break;
		case 2: rc = parse_gbps_value(c, v, vn, "nvlink", &proto.nvlink_gbps, err); break;
		case 3: rc = parse_gbps_value(c, v, vn, "net", &proto.net_gbps, err); break;
		case 5: rc = parse_mem_value(c, v, vn, "gpumem", &gpumem, err); break;
		default:
			if (vn == 8 && !strncmp(v, "training", 8))
				proto.pool = RK_POOL_TRAINING;
			else if (vn == 6 && !strncmp(v, "loaned", 6))
				proto.pool = RK_POOL_LOANED;
			else
				rc = FAIL(c, v, err, RK_EINVAL,
					  "pool: '%.*s' is not 'training' or 'loaned'", (int)vn, v);
		}
		if (rc)
			return rc;
		c->p = v + vn;
	}
	proto.gpu_mem_mb = gpumem >= 0 ? gpumem : rk_gpu_type_mem_mb(proto.gpu_type);
	if (!field_end(*c->p))
		return FAIL(c, c->p, err, RK_EINVAL, "unexpected '%c' (groups read NxG[:type],key=value"
				     " and are joined by '+')", *c->p);
	if ((long)cl->n_nodes + nodes > RK_CLUSTER_MAX_NODES)
		return FAIL(c, c->p, err, RK_ERANGE, "cluster has more than %d nodes",
			    RK_CLUSTER_MAX_NODES);
	int need = cl->n_nodes + (int)nodes;
	if (need > *cap) {
		int ncap = *cap ? *cap : 8;
		while (ncap < need)
			ncap *= 2;
		struct rk_node *nn = realloc(cl->nodes, (size_t)ncap * sizeof(*nn));
		if (!nn)
			return rk_error_set(err, RK_ENOMEM, "%s: out of memory", c->name);
		cl->nodes = nn;
		*cap = ncap;
	}
	for (long i = 0; i < nodes; i++) {
		proto.id = cl->n_nodes;
		cl->nodes[cl->n_nodes++] = proto;
	}
	return 0;
}

int rk_cluster_parse(struct rk_cluster *out, const char *text, const char *name,
		     struct rk_error *err)
{
	struct rk_cluster cl = {0, NULL};
	int cap = 0, rc = 0;
	struct cursor c = {text ? text : "", name ? name : "cluster", 1, text ? text : ""};
	out->n_nodes = 0;
	out->nodes = NULL;
	for (;;) {
		skip_blanks(&c);
		if (*c.p == '#')
			while (*c.p && *c.p != '\n')
				c.p++;
		if (*c.p == '\r')
			c.p++;
		if (*c.p == '\n') {
			c.p++;
			c.line++;
			c.line_start = c.p;
			continue;
		}
		if (!*c.p)
			break;
		rc = parse_group(&c, &cl, &cap, err);
		if (rc)
			goto fail;
		skip_blanks(&c);
		if (*c.p == '+') {
			c.p++;
			skip_blanks(&c);
			if (field_end(*c.p) && *c.p != '+') {
				rc = FAIL(&c, c.p, err, RK_EINVAL, "expected a group after '+'");
				goto fail;
			}
		}
	}
	if (cl.n_nodes == 0) {
		rc = rk_error_set(err, RK_EINVAL, "%s:%d:%d: no node groups (expected e.g. "
				  "8x8:a800,cpus=96,mem=1600G,nvlink=400,net=100)",
				  c.name, c.line, col(&c, c.p));
		goto fail;
	}
	*out = cl;
	return 0;
fail:
	free(cl.nodes);
	return rc;
}

void rk_cluster_fini(struct rk_cluster *c)
{
	if (!c)
		return;
	free(c->nodes);
	c->nodes = NULL;
	c->n_nodes = 0;
}

int rk_cluster_copy(struct rk_cluster *dst, const struct rk_cluster *src)
{
	struct rk_node *n = NULL;
	if (src->n_nodes > 0) {
		n = malloc((size_t)src->n_nodes * sizeof(*n));
		if (!n)
			return RK_ENOMEM;
		memcpy(n, src->nodes, (size_t)src->n_nodes * sizeof(*n));
	}
	dst->n_nodes = src->n_nodes;
	dst->nodes = n;
	return 0;
}

int rk_cluster_total_gpus(const struct rk_cluster *c)
{
	int total = 0;
	for (int i = 0; i < c->n_nodes; i++)
		if (c->nodes[i].up)
			total += c->nodes[i].gpus;
	return total;
}

static int same_kind(const struct rk_node *a, const struct rk_node *b)
{
	return a->gpus == b->gpus && a->cpus == b->cpus && a->mem_mb == b->mem_mb &&
	       a->gpu_mem_mb == b->gpu_mem_mb &&
	       a->nvlink_gbps == b->nvlink_gbps && a->net_gbps == b->net_gbps &&
	       a->pool == b->pool && !strcmp(a->gpu_type, b->gpu_type);
}

int rk_cluster_format(const struct rk_cluster *c, char *buf, size_t size)
{
	size_t len = 0;
	for (int i = 0; i < c->n_nodes;) {
		int j = i + 1;
		while (j < c->n_nodes && same_kind(&c->nodes[i], &c->nodes[j]))
			j++;
		const struct rk_node *n = &c->nodes[i];
		int w = snprintf(len < size ? buf + len : NULL, len < size ? size - len : 0,
				 "%s%dx%d:%s,cpus=%d,mem=%lldM,nvlink=%g,net=%g,gpumem=%lldM%s",
				 i ? "+" : "", j - i, n->gpus, n->gpu_type, n->cpus,
				 (long long)n->mem_mb, n->nvlink_gbps, n->net_gbps,
				 (long long)n->gpu_mem_mb,
				 n->pool == RK_POOL_LOANED ? ",pool=loaned" : "");
		if (w < 0)
			return w;
		len += (size_t)w;
		i = j;
	}
	if (size > 0 && len == 0)
		buf[0] = '\0';
	return (int)len;
}
