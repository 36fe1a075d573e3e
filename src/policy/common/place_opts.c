/*
 * The baseline policies' option walker (place_opts.h): each of them lets a
 * researcher choose where its jobs go with `placement=MODE`, the default
 * being the placement its authors' simulator uses (docs/policies.md).
 */
#include "policy/common/place_opts.h"

#include <string.h>

int rk_place_opts_parse(const char *options, const char *name, enum rk_place_mode *mode,
                        rk_place_opt_fn extra, void *ctx, const char *extra_known,
                        struct rk_error *err)
{
	enum rk_place_mode m = *mode;
	const char *kv = options ? options : "";
	while (*kv) {
		size_t len = strcspn(kv, ",");
		char item[128];
		if (len >= sizeof(item))
			return rk_error_set(err, RK_EINVAL, "policy %s: option '%.*s' is too long",
			                    name, (int)len, kv);
		memcpy(item, kv, len);
		item[len] = '\0';
		kv += len + (kv[len] == ',');
		char *eq = strchr(item, '=');
		if (!eq)
			return rk_error_set(err, RK_EINVAL,
			                    "policy %s: option '%s' is not key=value", name, item);
		*eq = '\0';
		const char *k = item, *v = eq + 1;
		if (!strcmp(k, "placement")) {
			if (rk_place_mode_parse(v, &m))
				return rk_error_set(err, RK_EINVAL,
				                    "policy %s: placement=%s: unknown placement "
				                    "(known: %s)",
				                    name, v, RK_PLACE_MODE_NAMES);
			continue;
		}
		int rc = extra ? extra(ctx, k, v, err) : 1;
		if (rc < 0)
			return rc;
		if (rc > 0)
			return rk_error_set(err, RK_EINVAL,
			                    "policy %s: unknown option '%s' (known: "
			                    "placement%s%s)",
			                    name, k, extra_known ? ", " : "",
			                    extra_known ? extra_known : "");
	}
	*mode = m;
	return 0;
}
