/*
 * The model zoo: the bundled data/zoo files, the text format round trip, name
 * and alias lookup, and one test per documented error of docs/zoo.md.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/util.h"
#include "rubick/zoo.h"

static const char *data_dir(void)
{
	const char *d = getenv("RK_DATA_DIR");
	return d ? d : RK_DEFAULT_DATA_DIR;
}

static const char *good =
	"# a comment line\n"
	"name = tiny\n"
	"layers = 2   # trailing comment\n"
	"hidden = 64\n"
	"heads = 4\n"
	"seq_len = 128\n"
	"vocab = 1000\n"
	"params = 1.5e5\n"
	"global_batch = 8\n";

/* Parse `text`; expect failure `code` and a message containing `want`. */
static void expect_error(const char *text, int code, const char *want)
{
	struct rk_model m;
	memset(&m, 0x5a, sizeof(m));
	struct rk_model before = m;
	struct rk_error err;
	rk_error_clear(&err);
	int rc = rk_model_parse(text, strlen(text), "t.model", &m, &err);
	if (rc != code || !strstr(err.msg, want))
		fail_msg("text [%s]: rc %d (want %d), msg [%s] (want [%s])", text, rc, code,
			 err.msg, want);
	/* No side effect on failure. */
	assert_memory_equal(&m, &before, sizeof(m));
}

static void load_bundled(struct rk_zoo *zoo)
{
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s/zoo", data_dir());
	struct rk_error err;
	rk_error_clear(&err);
	int rc = rk_cli_zoo_load(dir, zoo, &err);
	if (rc)
		fail_msg("%s", err.msg);
}

static void bundled_zoo_loads(void **state)
{
	(void)state;
	struct rk_zoo zoo;
	rk_zoo_init(&zoo);
	load_bundled(&zoo);
	/* Exactly the evaluation's models, with the traces' application names. */
	const char *names[] = {"bert", "gpt2", "llama30", "llama7", "roberta", "t5", "t5_3b", "vit"};
	const int batch[] = {32, 16, 4, 8, 64, 16, 4, 64};
	const int is3d[] = {0, 1, 1, 1, 0, 1, 1, 0};
	assert_int_equal(zoo.n_models, 8);
	for (int i = 0; i < 8; i++) {
		const struct rk_model *m = rk_zoo_find(&zoo, names[i]);
		assert_non_null(m);
		assert_string_equal(m->name, names[i]);
		assert_int_equal(m->global_batch, batch[i]);
		assert_int_equal(m->allow_3d, is3d[i]);
		assert_int_equal(m->hidden % m->heads, 0);
		/* Parameter counts are the published / profiled ones. The 12*L*h^2 + V*h
		 * estimate holds within 3% for single-stack models; T5's two stacks and
		 * wide FFN (d_ff 16384 in T5-3B) put it only below (docs/zoo.md). */
		double est = rk_model_params_estimate(m->layers, m->hidden, m->vocab);
		if (strncmp(m->name, "t5", 2))
			assert_true(fabs(m->params / est - 1) < 0.03);
		else
			assert_true(m->params > est);
	}
	const struct rk_model *l30 = rk_zoo_find(&zoo, "llama30");
	assert_int_equal(l30->layers, 60);
	assert_int_equal(l30->hidden, 6656);
	assert_int_equal(l30->heads, 52);
	assert_true(l30->params == 32.5e9);
	assert_true(rk_zoo_find(&zoo, "llama7")->fwd_ms == 1000);
	rk_zoo_fini(&zoo);
}

static void aliases_and_resolve(void **state)
{
	(void)state;
	struct rk_zoo zoo;
	rk_zoo_init(&zoo);
	load_bundled(&zoo);
	struct {
		const char *alias, *canonical;
	} cases[] = {
		{"LLaMA7b", "llama7"},   {"llama-2-7b", "llama7"}, {"meta-llama/Llama-2-7b-hf", "llama7"},
		{"t5_3B", "t5_3b"},      {"T5-3B", "t5_3b"},       {"gpt-2", "gpt2"},
		{"GPT2-XL", "gpt2"},     {"llama30b", "llama30"},  {"bert-large-uncased", "bert"},
		{"roberta-large", "roberta"}, {"VIT", "vit"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct rk_model *m = rk_zoo_find(&zoo, cases[i].alias);
		if (!m)
			fail_msg("alias %s not found", cases[i].alias);
		assert_string_equal(m->name, cases[i].canonical);
	}
	assert_null(rk_zoo_find(&zoo, "resnet50"));
	assert_null(rk_zoo_find(&zoo, ""));
	assert_null(rk_zoo_find(&zoo, NULL));
	assert_null(rk_zoo_alias_canonical("roberta-base"));

	const struct rk_model *m = NULL;
	int b = 0;
	struct rk_error err;
	assert_int_equal(rk_zoo_resolve(&zoo, "llama7b_bsz16", &m, &b, &err), 0);
	assert_string_equal(m->name, "llama7");
	assert_int_equal(b, 16);
	assert_int_equal(rk_zoo_resolve(&zoo, "t5_3B", &m, &b, &err), 0);
	assert_string_equal(m->name, "t5_3b");
	assert_int_equal(b, 4);
	/* Errors: unknown model, malformed batch suffix. */
	assert_int_equal(rk_zoo_resolve(&zoo, "resnet_bsz4", &m, &b, &err), RK_ENOTFOUND);
	assert_non_null(strstr(err.msg, "'resnet' is not in the zoo"));
	assert_int_equal(rk_zoo_resolve(&zoo, "llama7b_bsz0", &m, &b, &err), RK_ENOTFOUND);
	assert_non_null(strstr(err.msg, "positive global batch"));
	assert_int_equal(rk_zoo_resolve(&zoo, "llama7b_bszx", &m, &b, &err), RK_ENOTFOUND);
	rk_zoo_fini(&zoo);
}

static void parse_format_round_trip(void **state)
{
	(void)state;
	struct rk_zoo zoo;
	rk_zoo_init(&zoo);
	load_bundled(&zoo);
	for (size_t i = 0; i < zoo.n_models; i++) {
		char buf[RK_MODEL_TEXT_MAX];
		const struct rk_model *m = &zoo.models[i];
		int n = rk_model_format(m, buf, sizeof(buf));
		assert_true(n > 0 && (size_t)n < sizeof(buf));
		struct rk_model back;
		struct rk_error err;
		assert_int_equal(rk_model_parse(buf, (size_t)n, "fmt", &back, &err), 0);
		assert_memory_equal(m, &back, sizeof(back));
	}
	rk_zoo_fini(&zoo);
	/* A fitted model with awkward doubles survives the trip bit for bit. */
	struct rk_model m;
	struct rk_error err;
	assert_int_equal(rk_model_parse(good, strlen(good), "g", &m, &err), 0);
	m.perf_fitted = 1;
	m.perf = (struct rk_perf_params){0.1 + 0.2, 1.0 / 3.0, 1e-8, 4.400603962116795,
					 15.257464643432971, 37.288983000053264, 1000, 2.5};
	char buf[RK_MODEL_TEXT_MAX];
	int n = rk_model_format(&m, buf, sizeof(buf));
	struct rk_model back;
	assert_int_equal(rk_model_parse(buf, (size_t)n, "fmt", &back, &err), 0);
	assert_memory_equal(&m, &back, sizeof(m));
	/* snprintf contract: the needed length comes back when the buffer is short. */
	char small[16];
	assert_int_equal(rk_model_format(&m, small, sizeof(small)), n);
	assert_int_equal(strlen(small), sizeof(small) - 1);
	assert_int_equal(rk_model_format(&m, NULL, 0), n);
	assert_int_equal(rk_model_format(NULL, buf, sizeof(buf)), RK_EINVAL);
}

static void inline_spec_on_one_line(void **state)
{
	(void)state;
	const char *t = "name=Inline; layers=4; hidden=256; heads=8; seq_len=512; vocab=0; "
			"params=3.2e6; global_batch=16; allow_3d = yes";
	struct rk_model m;
	struct rk_error err;
	assert_int_equal(rk_model_parse(t, strlen(t), "job 7", &m, &err), 0);
	assert_string_equal(m.name, "inline"); /* names are stored lower case */
	assert_int_equal(m.allow_3d, 1);
	assert_int_equal(m.perf_fitted, 0);
	assert_true(m.fwd_ms == 0);
	/* Column numbers count within the line, across ';' statements. */
	const char *bad = "name=x; layers=4; hidden=250; heads=8; seq_len=1; vocab=0; params=1; "
			  "global_batch=1";
	assert_int_equal(rk_model_parse(bad, strlen(bad), "job 7", &m, &err), RK_EINVAL);
	assert_string_equal(err.msg, "job 7:1:31: key 'heads': 8 heads do not divide hidden "
				     "size 250");
	/* Without the NUL: the parser honours len. */
	assert_int_equal(rk_model_parse(good, strlen(good) - 1, "g", &m, &err), 0);
	assert_int_equal(m.global_batch, 8);
}

static void every_parse_error(void **state)
{
	(void)state;
	char buf[2048];
	expect_error("= 3\n", RK_EINVAL, "t.model:1:1: expected 'key = value', found '= 3'");
	expect_error("name\n", RK_EINVAL, "t.model:1:5: key 'name': expected '='");
	expect_error("\n\n  hiden = 3\n", RK_EINVAL, "t.model:3:3: unknown key 'hiden'");
	snprintf(buf, sizeof(buf), "%slayers = 3\n", good);
	expect_error(buf, RK_EINVAL, "t.model:10:1: key 'layers': given twice");
	expect_error("name =   # nothing\n", RK_EINVAL, "t.model:1:10: key 'name': missing value");
	expect_error("params = 1111111111111111111111111111111111111111111111111111111111111111111\n",
		     RK_EINVAL, "key 'params': value longer than 64 characters");
	expect_error("layers = 12x\n", RK_EINVAL, "t.model:1:10: key 'layers': value '12x' is not an integer");
	expect_error("layers = 0\n", RK_ERANGE, "key 'layers': value '0' is out of range [1, 100000]");
	expect_error("layers = 99999999999999999999\n", RK_ERANGE, "is out of range");
	expect_error("params = lots\n", RK_EINVAL, "key 'params': value 'lots' is not a number");
	expect_error("params = inf\n", RK_ERANGE, "key 'params': value 'inf' is out of range");
	expect_error("fwd_ms = nan\n", RK_ERANGE, "key 'fwd_ms': value 'nan' is out of range");
	expect_error("fwd_ms = -1\n", RK_ERANGE, "key 'fwd_ms'");
	expect_error("allow_3d = maybe\n", RK_EINVAL, "key 'allow_3d': value 'maybe' is not a boolean");
	expect_error("name = bad name!\n", RK_EINVAL, "key 'name': value 'bad name!' is not a model name");
	expect_error("name = abcdefghijabcdefghijabcdefghijab\n", RK_EINVAL, "is too long");
	/* Whole-spec errors name the source. */
	expect_error("name = x\n", RK_EINVAL, "t.model: missing required key 'layers'");
	snprintf(buf, sizeof(buf), "%sperf_k_bwd = 2\n", good);
	expect_error(buf, RK_EINVAL, "t.model: key 'perf_k_bwd' given but 'perf_k_sync' missing");
	expect_error("name=x\nlayers=1\nhidden=10\nheads=3\nseq_len=1\nvocab=0\nparams=1\nglobal_batch=1\n",
		     RK_EINVAL, "t.model:4:1: key 'heads': 3 heads do not divide hidden size 10");
	/* A NUL byte inside a value. */
	struct rk_model m;
	struct rk_error err;
	const char nul[] = "name = a\0b\n";
	assert_int_equal(rk_model_parse(nul, sizeof(nul) - 1, "t.model", &m, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "NUL byte"));
	assert_int_equal(rk_model_parse(NULL, 3, "t.model", &m, &err), RK_EINVAL);
	assert_int_equal(rk_model_parse(good, strlen(good), "t.model", NULL, &err), RK_EINVAL);
	/* Empty text: everything required is missing. */
	assert_int_equal(rk_model_parse("", 0, NULL, &m, &err), RK_EINVAL);
	assert_string_equal(err.msg, "<model>: missing required key 'name'");
}

static void validate_and_add_errors(void **state)
{
	(void)state;
	struct rk_model m;
	struct rk_error err;
	assert_int_equal(rk_model_parse(good, strlen(good), "g", &m, &err), 0);
	assert_int_equal(rk_model_validate(&m, &err), 0);
	struct rk_model bad = m;
	bad.heads = 5;
	assert_int_equal(rk_model_validate(&bad, &err), RK_EINVAL);
	assert_string_equal(err.msg, "model 'tiny': key 'heads': 5 heads do not divide hidden size 64");
	bad = m;
	bad.seq_len = -4;
	assert_int_equal(rk_model_validate(&bad, &err), RK_ERANGE);
	assert_non_null(strstr(err.msg, "key 'seq_len': -4 is outside"));
	bad = m;
	bad.params = NAN;
	assert_int_equal(rk_model_validate(&bad, &err), RK_ERANGE);
	bad = m;
	memcpy(bad.name, "Upper", 6);
	assert_int_equal(rk_model_validate(&bad, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "key 'name'"));
	bad = m;
	memset(bad.name, 'a', sizeof(bad.name)); /* no terminator inside the array */
	assert_int_equal(rk_model_validate(&bad, &err), RK_EINVAL);
	bad = m;
	bad.perf_fitted = 1;
	bad.perf.k_sync = -1;
	assert_int_equal(rk_model_validate(&bad, &err), RK_ERANGE);
	assert_non_null(strstr(err.msg, "perf_k_sync"));
	assert_int_equal(rk_model_validate(NULL, &err), RK_EINVAL);

	struct rk_zoo zoo;
	rk_zoo_init(&zoo);
	assert_int_equal(rk_zoo_add(&zoo, &m, &err), 0);
	assert_int_equal(rk_zoo_add_text(&zoo, good, strlen(good), "again.model", &err), RK_EEXIST);
	assert_string_equal(err.msg, "again.model: model 'tiny' is already in the zoo");
	bad = m;
	bad.heads = 5;
	memcpy(bad.name, "other", 6);
	assert_int_equal(rk_zoo_add(&zoo, &bad, &err), RK_EINVAL);
	assert_int_equal(zoo.n_models, 1);
	assert_int_equal(rk_zoo_add_text(&zoo, "x", 1, "x.model", &err), RK_EINVAL);
	assert_int_equal(rk_zoo_add(NULL, &m, &err), RK_EINVAL);
	/* Growth past the first allocation keeps earlier entries. */
	for (int i = 0; i < 20; i++) {
		snprintf(bad.name, sizeof(bad.name), "m%d", i);
		bad.heads = 4;
		assert_int_equal(rk_zoo_add(&zoo, &bad, &err), 0);
	}
	assert_int_equal(zoo.n_models, 21);
	assert_string_equal(rk_zoo_find(&zoo, "TINY")->name, "tiny");
	assert_string_equal(rk_zoo_find(&zoo, "m19")->name, "m19");
	rk_zoo_fini(&zoo);
	assert_int_equal(zoo.n_models, 0);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void cli_loader_errors(void **state)
{
	(void)state;
	char dir[] = "/tmp/rk_zoo_test_XXXXXX";
	assert_non_null(mkdtemp(dir));
	struct rk_zoo zoo;
	struct rk_error err;
	char path[256];
	rk_zoo_init(&zoo);
	assert_int_equal(rk_cli_zoo_load(dir, &zoo, &err), RK_ENOTFOUND);
	assert_non_null(strstr(err.msg, "no .model files"));
	snprintf(path, sizeof(path), "%s/wrong.model", dir);
	write_file(path, good);
	assert_int_equal(rk_cli_zoo_load(dir, &zoo, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "wrong.model: key 'name': 'tiny' differs from the file name 'wrong'"));
	unlink(path);
	snprintf(path, sizeof(path), "%s/tiny.model", dir);
	write_file(path, "name = tiny\nlayers = x\n");
	assert_int_equal(rk_cli_zoo_load(dir, &zoo, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "tiny.model:2:10: key 'layers'"));
	write_file(path, good);
	assert_int_equal(rk_cli_zoo_load(dir, &zoo, &err), 0);
	assert_int_equal(zoo.n_models, 1);
	/* Loading the same directory twice: duplicates are rejected, naming the file. */
	assert_int_equal(rk_cli_zoo_load(dir, &zoo, &err), RK_EEXIST);
	assert_non_null(strstr(err.msg, "tiny.model: model 'tiny' is already in the zoo"));
	unlink(path);
	rmdir(dir);
	assert_int_equal(rk_cli_zoo_load(dir, &zoo, &err), RK_EIO);
	assert_non_null(strstr(err.msg, "zoo directory"));
	char *text;
	size_t len;
	assert_int_equal(rk_cli_read_file(path, &text, &len, &err), RK_EIO);
	assert_non_null(strstr(err.msg, "tiny.model"));
	rk_zoo_fini(&zoo);

	/* --zoo beats RUBICK_ZOO beats the compiled-in default. */
	assert_string_equal(rk_cli_zoo_dir("/flag"), "/flag");
	setenv("RUBICK_ZOO", "/env", 1);
	assert_string_equal(rk_cli_zoo_dir(NULL), "/env");
	unsetenv("RUBICK_ZOO");
	assert_string_equal(rk_cli_zoo_dir(NULL), RK_DEFAULT_DATA_DIR "/zoo");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(bundled_zoo_loads),
		cmocka_unit_test(aliases_and_resolve),
		cmocka_unit_test(parse_format_round_trip),
		cmocka_unit_test(inline_spec_on_one_line),
		cmocka_unit_test(every_parse_error),
		cmocka_unit_test(validate_and_add_errors),
		cmocka_unit_test(cli_loader_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
