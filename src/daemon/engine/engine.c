/* The engine registry: a plain array, as for policies. */
#include "daemon/engine/engine.h"

#include <string.h>

static const struct rkd_engine_ops *const engines[] = {
	&rkd_engine_local,
#ifdef RKD_HAVE_SLURM
	&rkd_engine_slurm,
#endif
};

const struct rkd_engine_ops *rkd_engine_find(const char *name, int *not_built)
{
	*not_built = 0;
	for (size_t i = 0; i < sizeof(engines) / sizeof(engines[0]); i++)
		if (!strcmp(engines[i]->name, name))
			return engines[i];
	/* Known but not compiled in: libslurm-dev was absent at build time. */
	*not_built = !strcmp(name, "slurm");
	return NULL;
}
