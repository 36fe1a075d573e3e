/*
 * libFuzzer harness for the launch-command reader and the DeepSpeed config
 * reader. The input is "COMMAND\0CONFIG": the command is read with the config
 * text available as "ds.json" (and the job's GPU count from the first byte),
 * and the config is also read on its own. On success the plan invariants of
 * plan.h must hold and the model must validate.
 */
#include "rubick/launch.h"
#include "rubick/zoo.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Two zoo models, so --model_name_or_path paths are exercised. */
static const char *const zoo_text[] = {
	"name=llama7; layers=32; hidden=4096; heads=32; seq_len=2048; vocab=32000; "
	"params=6.738e9; global_batch=8; fwd_ms=1000; allow_3d=1",
	"name=roberta; layers=24; hidden=1024; heads=16; seq_len=512; vocab=50265; "
	"params=355.4e6; global_batch=64; fwd_ms=480",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct rk_zoo zoo;
	static int ready;
	struct rk_error err;
	if (!ready) {
		rk_zoo_init(&zoo);
		for (size_t i = 0; i < 2; i++)
			if (rk_zoo_add_text(&zoo, zoo_text[i], strlen(zoo_text[i]), "zoo", &err))
				abort();
		ready = 1;
	}
	const uint8_t *nul = memchr(data, 0, size);
	size_t cmd_len = nul ? (size_t)(nul - data) : size;
	const char *cfg = nul ? (const char *)nul + 1 : "";
	size_t cfg_len = nul ? size - cmd_len - 1 : 0;
	char *cmd = malloc(cmd_len + 1);
	if (!cmd)
		return 0;
	memcpy(cmd, data, cmd_len);
	cmd[cmd_len] = '\0';

	struct rk_ds_config ds;
	rk_error_clear(&err);
	int rc = rk_ds_config_parse(cfg, cfg_len, "ds.json", &ds, &err);
	if (rc && err.code != rc)
		abort();

	struct rk_launch_file files[] = {{"ds.json", cfg, cfg_len}, {NULL, NULL, 0}};
	struct rk_launch_files table = {files};
	int gpus = size ? data[0] % 17 : 0; /* 0 = take the launcher's count */
	struct rk_launch_opts o = {"fuzz", NULL, gpus, &zoo, rk_launch_files_lookup, &table};
	struct rk_launch L;
	rk_error_clear(&err);
	rc = rk_launch_parse(cmd, &o, &L, &err);
	if (rc) {
		if (err.code != rc || !err.msg[0])
			abort();
	} else {
		const struct rk_plan *p = &L.plan;
		if (p->dp < 1 || p->tp < 1 || p->pp < 1 || p->mb < 1 || p->ga < 1)
			abort();
		if ((long long)p->dp * p->tp * p->pp != L.gpus)
			abort();
		if ((long long)p->mb * p->ga * p->dp != L.global_batch)
			abort();
		if (p->zero < 0 || p->zero > 3 || (p->offload && !p->zero))
			abort();
		if ((p->tp > 1 || p->pp > 1) && (p->zero || p->offload))
			abort();
		if (gpus && L.gpus != gpus)
			abort();
		if (rk_model_validate(&L.model, &err) || L.model.global_batch != L.global_batch)
			abort();
	}
	free(cmd);
	return 0;
}
