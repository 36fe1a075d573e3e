/*
 * DeepSpeed JSON config: the few keys that decide a job's plan (batch sizes,
 * ZeRO stage, optimizer offload). The only file of src/model that includes
 * jansson. Key names and meaning: DeepSpeed configuration reference
 * (https://www.deepspeed.ai/docs/config-json/): train_batch_size =
 * train_micro_batch_size_per_gpu * gradient_accumulation_steps * data-parallel
 * size; "auto" values are filled by the Hugging Face integration from its flags.
 */
#include "rubick/launch.h"

#include <jansson.h>
#include <limits.h>
#include <string.h>

/* Read an optional positive integer (or "auto" = absent) at obj[key] into *out. */
static int get_count(json_t *obj, const char *key, const char *path, const char *src, int *out,
		     struct rk_error *err)
{
	json_t *v = json_object_get(obj, key);
	if (!v || json_is_null(v))
		return 0;
	if (json_is_string(v) && !strcmp(json_string_value(v), "auto"))
		return 0;
	if (!json_is_integer(v))
		return rk_error_set(err, RK_EINVAL, "%s: %s: must be a positive integer or \"auto\"",
				    src, path);
	json_int_t x = json_integer_value(v);
	if (x < 1 || x > RK_PLAN_DEGREE_MAX * (json_int_t)RK_PLAN_DEGREE_MAX / 4096)
		return rk_error_set(err, RK_ERANGE, "%s: %s: %lld is out of range [1, %lld]", src,
				    path, (long long)x,
				    (long long)RK_PLAN_DEGREE_MAX * RK_PLAN_DEGREE_MAX / 4096);
	*out = (int)x;
	return 0;
}

/*
 * An offload block {"device": "cpu"|"none"|"nvme", ...}: 1 for cpu, 0 for none
 * or absent device; nvme is outside rubick's plan space (host-memory offload only).
 */
static int get_offload(json_t *blk, const char *path, const char *src, int *out,
		       struct rk_error *err)
{
	if (!blk || json_is_null(blk))
		return 0;
	if (!json_is_object(blk))
		return rk_error_set(err, RK_EINVAL, "%s: %s: must be an object", src, path);
	json_t *dev = json_object_get(blk, "device");
	if (!dev || json_is_null(dev)) {
		*out = 0;
		return 0;
	}
	const char *d = json_is_string(dev) ? json_string_value(dev) : NULL;
	if (d && !strcmp(d, "cpu"))
		*out = 1;
	else if (d && !strcmp(d, "none"))
		*out = 0;
	else if (d && !strcmp(d, "nvme"))
		return rk_error_set(err, RK_EINVAL,
				    "%s: %s.device: \"nvme\" offload is not modelled (only \"cpu\" "
				    "or \"none\")",
				    src, path);
	else
		return rk_error_set(err, RK_EINVAL,
				    "%s: %s.device: must be \"cpu\" or \"none\"", src, path);
	return 0;
}

int rk_ds_config_parse(const char *text, size_t len, const char *src, struct rk_ds_config *out,
		       struct rk_error *err)
{
	if (!src)
		src = "<deepspeed config>";
	if (!out || (!text && len))
		return rk_error_set(err, RK_EINVAL, "%s: no text to parse", src);
	json_error_t jerr;
	json_t *root = json_loadb(text ? text : "", len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root)
		return rk_error_set(err, RK_EINVAL, "%s:%d:%d: invalid JSON: %s", src, jerr.line,
				    jerr.column, jerr.text);
	struct rk_ds_config c = {0, 0, 0, -1, -1};
	int rc = 0;
	if (!json_is_object(root)) {
		rc = rk_error_set(err, RK_EINVAL, "%s: the config must be a JSON object", src);
		goto out;
	}
	if ((rc = get_count(root, "train_batch_size", "train_batch_size", src,
			    &c.train_batch_size, err)) ||
	    (rc = get_count(root, "train_micro_batch_size_per_gpu",
			    "train_micro_batch_size_per_gpu", src, &c.micro_batch, err)) ||
	    (rc = get_count(root, "gradient_accumulation_steps", "gradient_accumulation_steps",
			    src, &c.grad_accum, err)))
		goto out;
	json_t *zo = json_object_get(root, "zero_optimization");
	if (zo && !json_is_null(zo)) {
		if (json_is_boolean(zo)) {
			/* Legacy form "zero_optimization": true means stage 1. */
			c.zero_stage = json_is_true(zo) ? 1 : 0;
		} else if (!json_is_object(zo)) {
			rc = rk_error_set(err, RK_EINVAL, "%s: zero_optimization: must be an object",
					  src);
			goto out;
		} else {
			json_t *st = json_object_get(zo, "stage");
			if (st && !json_is_null(st)) {
				if (!json_is_integer(st) || json_integer_value(st) < 0 ||
				    json_integer_value(st) > 3) {
					char shown[32] = "a non-integer";
					if (json_is_integer(st))
						snprintf(shown, sizeof(shown), "%lld",
							 (long long)json_integer_value(st));
					rc = rk_error_set(err, RK_EINVAL,
							  "%s: zero_optimization.stage: %s is not a "
							  "ZeRO stage (0-3)",
							  src, shown);
					goto out;
				}
				c.zero_stage = (int)json_integer_value(st);
			} else {
				/* DeepSpeed's default stage when the block is present is 0. */
				c.zero_stage = 0;
			}
			int opt = -1, par = -1;
			if ((rc = get_offload(json_object_get(zo, "offload_optimizer"),
					      "zero_optimization.offload_optimizer", src, &opt, err)) ||
			    (rc = get_offload(json_object_get(zo, "offload_param"),
					      "zero_optimization.offload_param", src, &par, err)))
				goto out;
			json_t *legacy = json_object_get(zo, "cpu_offload");
			if (legacy && !json_is_null(legacy)) {
				if (!json_is_boolean(legacy)) {
					rc = rk_error_set(err, RK_EINVAL,
							  "%s: zero_optimization.cpu_offload: must be "
							  "true or false",
							  src);
					goto out;
				}
				/* Pre-0.3.x spelling of offload_optimizer.device = cpu. */
				if (opt < 0)
					opt = json_is_true(legacy);
			}
			/* rubick models optimizer offload (ZeRO-Offload); parameter offload
			 * alone (ZeRO-Infinity style) is not a plan it can predict. */
			if (par == 1 && opt != 1) {
				rc = rk_error_set(err, RK_EINVAL,
						  "%s: zero_optimization.offload_param: parameter "
						  "offload without offload_optimizer is not modelled",
						  src);
				goto out;
			}
			c.offload = opt;
			if (c.offload == 1 && c.zero_stage == 0) {
				rc = rk_error_set(err, RK_EINVAL,
						  "%s: zero_optimization.offload_optimizer: offload "
						  "needs ZeRO stage 1-3, stage is 0",
						  src);
				goto out;
			}
		}
	}
	if (c.train_batch_size && c.micro_batch && c.grad_accum &&
	    (long long)c.train_batch_size % ((long long)c.micro_batch * c.grad_accum)) {
		rc = rk_error_set(err, RK_EINVAL,
				  "%s: train_batch_size %d is not a multiple of "
				  "train_micro_batch_size_per_gpu %d x gradient_accumulation_steps %d",
				  src, c.train_batch_size, c.micro_batch, c.grad_accum);
		goto out;
	}
	*out = c;
out:
	json_decref(root);
	return rc;
}
