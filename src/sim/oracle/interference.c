/*
 * Gavel-layout co-location throughput tables into the interference table
 * (interference.h). xi_a = isolated / paired throughput of a, per GPU type:
 * the paired throughput is the first element of the pair's [self, other]
 * array (Gavel's scheduler/utils.py read_all_throughputs_json_v2 layout).
 */
#include "rubick/interference.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int rk_xi_parse_key(const char *key, char type[RK_XI_TYPE_MAX], int *sf)
{
	/* "('TYPE', SF)": TYPE may itself hold parentheses; the last "'," ends it. */
	size_t n = strlen(key);
	if (n < 7 || key[0] != '(' || key[1] != '\'' || key[n - 1] != ')')
		return RK_EINVAL;
	const char *end = strstr(key + 2, "',");
	for (const char *p = end; p; p = strstr(p + 1, "',"))
		end = p;
	if (!end || end == key + 2 || (size_t)(end - (key + 2)) >= RK_XI_TYPE_MAX)
		return RK_EINVAL;
	memcpy(type, key + 2, (size_t)(end - (key + 2)));
	type[end - (key + 2)] = '\0';
	char *stop = NULL;
	long v = strtol(end + 2, &stop, 10);
	if (!stop || stop == end + 2 || *stop != ')' || stop[1] != '\0' || v < 1 || v > 1 << 20)
		return RK_EINVAL;
	*sf = (int)v;
	return 0;
}

static int bad(struct rk_error *err, const char *name, const char *gpu, const char *key,
	       const char *what)
{
	return rk_error_set(err, RK_EINVAL, "%s: %s/%s: %s", name, gpu, key, what);
}

static int add_row(struct rk_xi_table *t, const char *name, const char *gpu, const char *key,
		   json_t *row, struct rk_xi_parse_report *rep, struct rk_error *err)
{
	struct rk_xi_entry e = {0};
	if (strlen(gpu) >= RK_XI_GPU_MAX)
		return bad(err, name, gpu, key, "GPU type name too long");
	memcpy(e.gpu_type, gpu, strlen(gpu) + 1);
	if (rk_xi_parse_key(key, e.a, &e.sf_a))
		return bad(err, name, gpu, key, "expected a key \"('JOB TYPE', GPUS)\"");
	if (!json_is_object(row))
		return bad(err, name, gpu, key, "expected an object of throughputs");
	json_t *iso = json_object_get(row, "null");
	if (!json_is_number(iso) || !(json_number_value(iso) >= 0) ||
	    !isfinite(json_number_value(iso)))
		return bad(err, name, gpu, key, "missing or negative isolated throughput \"null\"");
	double iso_tput = json_number_value(iso);
	if (iso_tput == 0) {
		rep->no_isolated++; /* the job cannot run on this GPU type at all (e.g. OOM on k80) */
		return 0;
	}
	/*
	 * A row with no pair above 0 steps/s was never measured co-located
	 * (Gavel's 2-8 GPU rows: every pair 0): its zeros say nothing, the
	 * fallback chain answers. In a measured row a 0 is a measured failure
	 * (out of memory together): the pair never shares (rk_xi_corun).
	 */
	int measured = 0;
	const char *other;
	json_t *v;
	json_object_foreach(row, other, v)
	{
		if (strcmp(other, "null") && json_is_array(v) && json_array_size(v) == 2 &&
		    json_is_number(json_array_get(v, 0)) &&
		    json_number_value(json_array_get(v, 0)) > 0)
			measured = 1;
	}
	json_object_foreach(row, other, v) {
		if (!strcmp(other, "null"))
			continue;
		if (rk_xi_parse_key(other, e.b, &e.sf_b))
			return bad(err, name, gpu, other, "expected a partner key \"('JOB TYPE', GPUS)\"");
		if (!json_is_array(v) || json_array_size(v) != 2 ||
		    !json_is_number(json_array_get(v, 0)) || !json_is_number(json_array_get(v, 1)))
			return bad(err, name, gpu, other, "expected [throughput self, throughput other]");
		double paired = json_number_value(json_array_get(v, 0));
		if (!(paired > 0) || !isfinite(paired)) {
			if (!measured) {
				rep->unmeasured++;
				continue;
			}
			rep->no_corun++; /* measured as unable to co-run: never share this pair */
			int rc = rk_xi_table_add_nocorun(t, &e, err);
			if (rc)
				return rc;
			continue;
		}
		e.xi_a = iso_tput / paired;
		if (e.xi_a < 1.0) {
			/* Faster when shared than alone is measurement noise: no speed-up. */
			e.xi_a = 1.0;
			rep->clamped++;
		}
		int rc = rk_xi_table_add(t, &e, err);
		if (rc)
			return rc;
		rep->pairs++;
	}
	return 0;
}

int rk_xi_parse_gavel(struct rk_xi_table *t, const char *text, size_t len, const char *name,
		      struct rk_xi_parse_report *rep, struct rk_error *err)
{
	memset(rep, 0, sizeof(*rep));
	json_error_t je;
	json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!root)
		return rk_error_set(err, RK_EINVAL, "%s:%d:%d: %s", name, je.line, je.column, je.text);
	int rc = 0;
	if (!json_is_object(root)) {
		rc = rk_error_set(err, RK_EINVAL, "%s:1:1: expected an object of GPU types", name);
		goto out;
	}
	const char *gpu;
	json_t *rows;
	json_object_foreach(root, gpu, rows) {
		if (!json_is_object(rows)) {
			rc = rk_error_set(err, RK_EINVAL, "%s: %s: expected an object of job types",
					  name, gpu);
			goto out;
		}
		const char *key;
		json_t *row;
		json_object_foreach(rows, key, row) {
			rc = add_row(t, name, gpu, key, row, rep, err);
			if (rc)
				goto out;
		}
	}
out:
	json_decref(root);
	return rc;
}
