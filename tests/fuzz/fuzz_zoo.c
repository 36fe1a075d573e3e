/*
 * libFuzzer harness for the zoo text format (rk_model_parse): any input either
 * fails with a filled message or parses to a valid model whose formatted text
 * parses back to the same struct; lookups and batch-suffix resolution never
 * misbehave on arbitrary names.
 */
#include "rubick/zoo.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rk_model m;
	struct rk_error err;
	rk_error_clear(&err);
	int rc = rk_model_parse((const char *)data, size, "fuzz", &m, &err);
	if (rc) {
		/* Every failure explains itself, naming the source. */
		if (err.code != rc || strncmp(err.msg, "fuzz", 4))
			abort();
		return 0;
	}
	if (rk_model_validate(&m, &err))
		abort();
	char text[RK_MODEL_TEXT_MAX];
	int n = rk_model_format(&m, text, sizeof(text));
	if (n <= 0 || (size_t)n >= sizeof(text))
		abort();
	struct rk_model back;
	if (rk_model_parse(text, (size_t)n, "fmt", &back, &err) || memcmp(&m, &back, sizeof(m)))
		abort();
	struct rk_zoo zoo;
	rk_zoo_init(&zoo);
	if (rk_zoo_add(&zoo, &m, &err) || rk_zoo_find(&zoo, m.name) != &zoo.models[0])
		abort();
	if (rk_zoo_add(&zoo, &back, &err) != RK_EEXIST)
		abort();
	/* The input as a (NUL-terminated) name for lookups. */
	char *name = malloc(size + 1);
	if (name) {
		memcpy(name, data, size);
		name[size] = '\0';
		const struct rk_model *found = NULL;
		int batch = 0;
		(void)rk_zoo_find(&zoo, name);
		(void)rk_zoo_alias_canonical(name);
		if (!rk_zoo_resolve(&zoo, name, &found, &batch, &err) && (!found || batch < 1))
			abort();
		free(name);
	}
	rk_zoo_fini(&zoo);
	return 0;
}
