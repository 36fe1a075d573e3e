/*
 * `rubick trace`: read a job trace in any supported format (docs/trace-format.md)
 * and print what the simulator would replay: the detected format, line and job
 * counts, skipped lines with their reasons, the models the seeded mapping
 * chose, GPU sizes and the time span. `--native` writes the jobs instead as
 * rubick's native CSV, so a mapped workload can be kept, edited and shared.
 */
#include "cli/commands.h"
#include "cli/trace_arrivals.h"
#include "cli/sim_native.h"
#include "cli/util.h"
#include "rubick/trace.h"
#include "rubick/zoo.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int rk_cmd_trace(int argc, char **argv);

struct opts {
	const char *file, *format, *zoo;
	const char *cluster, *throughputs; /* pricing step counts (work at the request) */
	int skip_bad, native, json;
	uint64_t seed;
	double window_start_s, window_end_s;
	size_t max_jobs;
	double load;         /* --load F: inter-arrival times / F (0 = unchanged) */
	const char *poisson; /* --poisson RATE|mean: Poisson arrivals (NULL = the trace's) */
};

static void help(FILE *out)
{
	fprintf(out,
		"usage: rubick trace FILE [--format auto|NAME] [--seed N] [--skip-bad]\n"
		"                    [--window START:END] [--max-jobs N] [--zoo DIR]\n"
		"                    [--load F] [--poisson RATE|mean] [--cluster SPEC]\n"
		"                    [--throughputs SRC] [--native | --json]\n\n"
		"Read a job trace and summarise the jobs the simulator would replay.\n"
		"  --format NAME   force a format (default auto: detected from the first line)\n"
		"  --seed N        seed of the workload: the model mapping for traces without zoo\n"
		"                  models, duration draws, --poisson (alias --workload-seed)\n"
		"  --skip-bad      skip and count bad lines instead of failing on the first\n"
		"  --window S:E    keep jobs submitted in [S, E) seconds (E empty = no end),\n"
		"                  shifted to start at 0\n"
		"  --max-jobs N    keep the first N jobs by submit time\n"
		"  --zoo DIR       model zoo (default data/zoo, or $RUBICK_ZOO)\n"
		"  --load F        load factor: inter-arrival times divided by F (2 = twice the\n"
		"                  arrival rate, half the span; Pollux's 0.5x-2x workloads)\n"
		"  --poisson R     Poisson arrivals of R jobs per hour ('mean' = the trace's mean\n"
		"                  rate), seeded by --seed; applied before --load, which scales it\n"
		"  --cluster SPEC  cluster whose consolidated placements price step counts of zoo\n"
		"                  models in the work figure (default 8x8: 8 A800 nodes, the\n"
		"                  Rubick testbed the measured tables come from)\n"
		"%s"
		"  --native        print the jobs as rubick's native CSV\n"
		"  --json          print the summary as one JSON object\n\n"
		"formats:\n", rk_cli_native_help);
	for (const char *const *f = rk_trace_formats(); *f; f++)
		fprintf(out, "  %-9s %s\n", *f, rk_trace_format_summary(*f));
	fputs("\n" RK_EXIT_HELP, out);
}

static int usage_error(const char *flag, const char *what)
{
	fprintf(stderr, "rubick trace: %s: %s (rubick trace --help)\n", flag, what);
	return RK_EXIT_USAGE;
}

/* Non-negative seconds, finite. */
static int parse_seconds(const char *flag, const char *v, double *out)
{
	char *end;
	errno = 0;
	double s = strtod(v, &end);
	if (end == v || *end || errno || !(s >= 0) || s > 1e12)
		return usage_error(flag, "expected seconds >= 0");
	*out = s;
	return 0;
}

static int parse_window(const char *v, struct opts *o)
{
	const char *colon = strchr(v, ':');
	if (!colon)
		return usage_error("--window", "expected START:END seconds");
	char start[64];
	size_t n = (size_t)(colon - v);
	if (n == 0 || n >= sizeof(start))
		return usage_error("--window", "START must be a number of seconds");
	memcpy(start, v, n);
	start[n] = '\0';
	if (parse_seconds("--window", start, &o->window_start_s))
		return RK_EXIT_USAGE;
	if (colon[1] && parse_seconds("--window", colon + 1, &o->window_end_s))
		return RK_EXIT_USAGE;
	if (colon[1] && o->window_end_s <= o->window_start_s)
		return usage_error("--window", "END must be after START");
	return 0;
}

static int parse_count(const char *flag, const char *v, unsigned long long max,
		       unsigned long long *out)
{
	char *end;
	errno = 0;
	unsigned long long x = strtoull(v, &end, 10);
	if (end == v || *end || errno || v[0] == '-' || x > max)
		return usage_error(flag, "expected a non-negative integer");
	*out = x;
	return 0;
}

/* 0 = run, -1 = help printed, else an exit code. */
static int parse_args(int argc, char **argv, struct opts *o)
{
	memset(o, 0, sizeof(*o));
	o->format = "auto";
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int used = rk_cli_native_arg("rubick trace", &o->throughputs, argc, argv, &i);
		if (used == 1)
			continue;
		if (used)
			return used;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			help(stdout);
			return -1;
		}
		int *flag = !strcmp(a, "--skip-bad") ? &o->skip_bad
			    : !strcmp(a, "--native") ? &o->native
			    : !strcmp(a, "--json")   ? &o->json
						     : NULL;
		if (flag) {
			*flag = 1;
			continue;
		}
		if (a[0] != '-') {
			if (o->file)
				return usage_error(a, "only one trace file");
			o->file = a;
			continue;
		}
		if (strcmp(a, "--format") && strcmp(a, "--seed") && strcmp(a, "--window") &&
		    strcmp(a, "--max-jobs") && strcmp(a, "--zoo") && strcmp(a, "--workload-seed") &&
		    strcmp(a, "--load") && strcmp(a, "--poisson") && strcmp(a, "--cluster"))
			return usage_error(a, "unknown option");
		if (i + 1 >= argc)
			return usage_error(a, "needs a value");
		const char *v = argv[++i];
		unsigned long long x;
		int rc = 0;
		if (!strcmp(a, "--format"))
			o->format = v;
		else if (!strcmp(a, "--zoo"))
			o->zoo = v;
		else if (!strcmp(a, "--cluster"))
			o->cluster = v;
		else if (!strcmp(a, "--window"))
			rc = parse_window(v, o);
		else if (!strcmp(a, "--load") || !strcmp(a, "--poisson"))
			rc = rk_cli_trace_arrivals_arg("rubick trace", a, v, &o->load, &o->poisson);
		else if (!strcmp(a, "--seed") || !strcmp(a, "--workload-seed")) {
			rc = parse_count(a, v, UINT64_MAX, &x);
			o->seed = x;
		} else {
			rc = parse_count(a, v, SIZE_MAX, &x);
			o->max_jobs = (size_t)x;
		}
		if (rc)
			return rc;
	}
	if (!o->file)
		return usage_error("FILE", "a trace file is required");
	if (o->native && o->json)
		return usage_error("--native", "cannot be combined with --json");
	return 0;
}

/* Jobs per zoo model, in first-seen order. */
struct model_count {
	char name[RK_MODEL_NAME_MAX];
	size_t jobs, mapped;
};

static int count_models(const struct rk_trace *t, struct model_count *mc, int cap)
{
	int n = 0;
	for (size_t i = 0; i < t->n; i++) {
		int k = 0;
		while (k < n && strcmp(mc[k].name, t->jobs[i].model))
			k++;
		if (k == n) {
			if (n == cap)
				continue;
			memset(&mc[n], 0, sizeof(mc[n]));
			memcpy(mc[n].name, t->jobs[i].model, sizeof(mc[n].name));
			n++;
		}
		mc[k].jobs++;
		mc[k].mapped += (size_t)t->jobs[i].model_mapped;
	}
	return n;
}

/* GPU-size buckets: 1, 2, 3-4, 5-8, ..., > 256. */
#define GPU_BUCKETS 10
static int gpu_bucket(int gpus)
{
	int b = 0;
	while (b < GPU_BUCKETS - 1 && gpus > (1 << b))
		b++;
	return b;
}

static const char *bucket_label(int b, char *buf, size_t cap)
{
	if (b == 0)
		snprintf(buf, cap, "1");
	else if (b == GPU_BUCKETS - 1)
		snprintf(buf, cap, ">%d", 1 << (b - 1));
	else if (b == 1)
		snprintf(buf, cap, "2");
	else
		snprintf(buf, cap, "%d-%d", (1 << (b - 1)) + 1, 1 << b);
	return buf;
}

static int print_json(const struct opts *o, const struct rk_trace *t,
		      const struct model_count *mc, int n_models, const size_t *gb,
		      double gpu_hours, size_t with_duration, size_t estimated,
		      const struct rk_cli_work *w)
{
	json_t *root = json_object(), *models = json_object(), *gpus = json_object(),
	       *reasons = json_array();
	if (!root || !models || !gpus || !reasons)
		goto oom;
	for (int k = 0; k < n_models; k++)
		json_object_set_new(models, mc[k].name, json_integer((json_int_t)mc[k].jobs));
	for (int b = 0; b < GPU_BUCKETS; b++) {
		char label[32];
		if (gb[b])
			json_object_set_new(gpus, bucket_label(b, label, sizeof(label)),
					    json_integer((json_int_t)gb[b]));
	}
	for (int r = 0; r < t->n_reasons; r++)
		json_array_append_new(reasons, json_string(t->reasons[r]));
	json_object_set_new(root, "trace", json_string(o->file));
	json_object_set_new(root, "format", json_string(t->format));
	json_object_set_new(root, "jobs", json_integer((json_int_t)t->n));
	json_object_set_new(root, "lines", json_integer((json_int_t)t->n_lines));
	json_object_set_new(root, "skipped", json_integer((json_int_t)t->n_skipped));
	json_object_set_new(root, "no_gpu", json_integer((json_int_t)t->n_no_gpu));
	json_object_set_new(root, "filtered", json_integer((json_int_t)t->n_filtered));
	json_object_set_new(root, "mapped", json_integer((json_int_t)t->n_mapped));
	json_object_set_new(root, "renamed", json_integer((json_int_t)t->n_renamed));
	json_object_set_new(root, "steps", json_integer((json_int_t)t->n_steps));
	json_object_set_new(root, "unfinished", json_integer((json_int_t)t->n_unfinished));
	json_object_set_new(root, "unstarted", json_integer((json_int_t)t->n_unstarted));
	double bb_h = 0, all_h = 0;
	size_t bb = rk_trace_black_box(t, &bb_h, &all_h);
	json_object_set_new(root, "black_box_jobs", json_integer((json_int_t)bb));
	json_object_set_new(root, "black_box_gpu_hours", json_real(bb_h));
	json_object_set_new(root, "seed", json_integer((json_int_t)o->seed));
	json_object_set_new(root, "span_s",
			    json_real(t->n ? t->jobs[t->n - 1].submit_ms / 1000.0 : 0.0));
	json_object_set_new(root, "with_duration", json_integer((json_int_t)with_duration));
	json_object_set_new(root, "estimated_duration", json_integer((json_int_t)estimated));
	json_object_set_new(root, "gpu_hours", json_real(gpu_hours));
	json_object_set_new(root, "work_gpu_hours", json_real(w->gpu_hours));
	json_object_set_new(root, "work_from_duration_gpu_hours", json_real(w->from_duration));
	json_object_set_new(root, "work_from_throughputs_gpu_hours", json_real(w->from_gavel));
	json_object_set_new(root, "work_from_oracle_gpu_hours", json_real(w->from_oracle));
	json_object_set_new(root, "work_unpriced", json_integer((json_int_t)w->n_unpriced));
	json_object_set_new(root, "models", models);
	json_object_set_new(root, "gpus", gpus);
	json_object_set_new(root, "skip_reasons", reasons);
	char *s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(root);
	if (!s)
		return RK_EXIT_FAILURE;
	puts(s);
	free(s);
	return RK_EXIT_OK;
oom:
	json_decref(root);
	json_decref(models);
	json_decref(gpus);
	json_decref(reasons);
	fprintf(stderr, "rubick trace: out of memory\n");
	return RK_EXIT_FAILURE;
}

static int summarise(const struct opts *o, const struct rk_trace *t, const struct rk_cli_work *w)
{
	struct model_count mc[64];
	int n_models = count_models(t, mc, 64);
	size_t gb[GPU_BUCKETS] = {0}, with_duration = 0, estimated = 0;
	double gpu_hours = 0;
	for (size_t i = 0; i < t->n; i++) {
		const struct rk_trace_job *j = &t->jobs[i];
		gb[gpu_bucket(j->gpus)]++;
		if (j->duration_s > 0) {
			with_duration++;
			estimated += (size_t)j->duration_estimated;
			gpu_hours += j->duration_s * j->gpus * (j->gpu_milli / 1000.0) / 3600.0;
		}
	}
	if (o->json)
		return print_json(o, t, mc, n_models, gb, gpu_hours, with_duration, estimated, w);
	printf("trace      %s\n", o->file);
	printf("format     %s\n", t->format);
	printf("jobs       %zu (data lines %zu, skipped %zu, no GPU %zu, outside window %zu, "
	       "renamed %zu)\n",
	       t->n, t->n_lines, t->n_skipped, t->n_no_gpu, t->n_filtered, t->n_renamed);
	for (int r = 0; r < t->n_reasons; r++)
		printf("  skipped: %s\n", t->reasons[r]);
	if (t->n_steps || t->n_unfinished || t->n_unstarted)
		printf("not jobs   %zu unfinished (pending or running when exported), %zu never ran, "
		       "%zu job steps folded into their jobs\n",
		       t->n_unfinished, t->n_unstarted, t->n_steps);
	if (rk_trace_format_is_history(t->format)) {
		double bb_h = 0, all_h = 0;
		size_t bb = rk_trace_black_box(t, &bb_h, &all_h);
		printf("black box  %zu of %zu jobs, %.1f%% of %.2f GPU-hours: no zoo model, their run "
		       "time at the request replayed through a stand-in (docs/replay.md)\n",
		       bb, t->n, all_h > 0 ? 100.0 * bb_h / all_h : 0.0, all_h);
	}
	printf("span       %.3f s of arrivals\n", t->n ? t->jobs[t->n - 1].submit_ms / 1000.0 : 0);
	printf("durations  %zu of %zu jobs (%zu estimated), %.1f GPU-hours\n", with_duration, t->n,
	       estimated, gpu_hours);
	printf("work       %.1f GPU-hours at the request (%zu jobs by run time %.1f, %zu by "
	       "throughput file steps %.1f, %zu by oracle-priced steps %.1f, %zu unpriced)\n",
	       w->gpu_hours, w->n_duration, w->from_duration, w->n_gavel, w->from_gavel,
	       w->n_oracle, w->from_oracle, w->n_unpriced);
	printf("models     %zu from the seeded mapping (seed %llu)\n", t->n_mapped,
	       (unsigned long long)o->seed);
	for (int k = 0; k < n_models; k++)
		printf("  %-10s %8zu jobs (%zu mapped)\n", mc[k].name, mc[k].jobs, mc[k].mapped);
	printf("gpus\n");
	for (int b = 0; b < GPU_BUCKETS; b++) {
		char label[32];
		if (gb[b])
			printf("  %-10s %8zu jobs\n", bucket_label(b, label, sizeof(label)), gb[b]);
	}
	return RK_EXIT_OK;
}

int rk_cmd_trace(int argc, char **argv)
{
	struct opts o;
	int rc = parse_args(argc, argv, &o);
	if (rc)
		return rc < 0 ? RK_EXIT_OK : rc;
	struct rk_error err;
	struct rk_zoo zoo;
	rk_zoo_init(&zoo);
	if (rk_cli_zoo_load(rk_cli_zoo_dir(o.zoo), &zoo, &err)) {
		fprintf(stderr, "rubick trace: zoo: %s\n", err.msg);
		rk_zoo_fini(&zoo);
		return RK_EXIT_FAILURE;
	}
	char *text = NULL;
	size_t len;
	if (rk_cli_read_file(o.file, &text, &len, &err)) {
		fprintf(stderr, "rubick trace: %s\n", err.msg);
		rk_zoo_fini(&zoo);
		return RK_EXIT_FAILURE;
	}
	struct rk_trace_options topt = rk_trace_options_default();
	topt.skip_bad = o.skip_bad;
	topt.seed = o.seed;
	topt.zoo = &zoo;
	topt.window_start_ms = (int64_t)(o.window_start_s * 1000.0 + 0.5);
	topt.window_end_ms = (int64_t)(o.window_end_s * 1000.0 + 0.5);
	topt.max_jobs = o.max_jobs;
	struct rk_trace t;
	rc = rk_trace_parse(text, len, o.file, o.format, &topt, &t, &err);
	free(text);
	if (rc) {
		fprintf(stderr, "rubick trace: %s\n", err.msg);
		rk_zoo_fini(&zoo);
		return rc == RK_ENOTFOUND && !strncmp(err.msg, "--format", 8) ? RK_EXIT_USAGE
									       : RK_EXIT_FAILURE;
	}
	char arrivals[256] = "";
	if (rk_cli_trace_arrivals_apply("rubick trace", &t, o.load, o.poisson, o.seed, arrivals,
					sizeof(arrivals))) {
		rk_trace_fini(&t);
		rk_zoo_fini(&zoo);
		return RK_EXIT_FAILURE;
	}
	if (o.native) {
		char *csv;
		size_t n;
		rc = rk_trace_write_native(&t, &csv, &n, &err);
		if (rc == 0) {
			if (arrivals[0])
				printf("# arrivals: %s\n", arrivals);
			fwrite(csv, 1, n, stdout);
			free(csv);
		} else {
			fprintf(stderr, "rubick trace: %s\n", err.msg);
		}
		rc = rc ? RK_EXIT_FAILURE : RK_EXIT_OK;
	} else {
		struct rk_cli_work w;
		rc = rk_cli_native_price("rubick trace", o.file, o.cluster, o.throughputs, &t, &zoo,
					     &w);
		if (!rc)
			rc = summarise(&o, &t, &w);
		if (!rc && !o.json && arrivals[0])
			printf("arrivals   %s\n", arrivals);
	}
	rk_trace_fini(&t);
	rk_zoo_fini(&zoo);
	return rc;
}
