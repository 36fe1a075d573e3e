/*
 * One rubickd scheduling round with 1,000 queued jobs (issue 7: <= 20 ms).
 * Builds a real scheduler (SQLite store on a temporary folder, local engine,
 * bundled zoo) without its thread, submits 1,000 jobs through the same
 * handler the API uses, then times rounds: the first places every job that
 * fits (decisions applied and committed), the next ones find a full cluster
 * and 1,000 - placed jobs still queued. Reports median and max per policy.
 *
 * --full: every round without the change feed (rk_sched_input.incremental = 0),
 * the daemon's rounds before it fed the policies.
 *
 * usage: bench_daemon_round [--jobs N] [--cluster SPEC] [--rounds N] [--full] [POLICY...]
 */
#include "daemon/engine/engine.h"
#include "daemon/job/jobspec.h"
#include "daemon/sched/sched.h"
#include "rubick/cluster.h"
#include "rubick/zoo.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int load_zoo(const char *dir, struct rk_zoo *zoo)
{
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);
		if (n < 7 || strcmp(e->d_name + n - 6, ".model"))
			continue;
		char path[PATH_MAX], buf[8192];
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		size_t len = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		struct rk_error err;
		rk_zoo_add_text(zoo, buf, len, path, &err);
	}
	closedir(d);
	return zoo->n_models ? 0 : -1;
}

static double mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static int bench(const char *policy, int n_jobs, const char *spec, int rounds,
		 const struct rk_zoo *zoo, int full)
{
	char dir[] = "/tmp/rubick-bench-XXXXXX";
	if (!mkdtemp(dir))
		return 1;
	char db[PATH_MAX], state[PATH_MAX], self[PATH_MAX];
	snprintf(db, sizeof(db), "%s/state.db", dir);
	snprintf(state, sizeof(state), "%s/jobs", dir);
	ssize_t sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[sl > 0 ? sl : 0] = '\0';
	struct rk_cluster cl = {0};
	struct rk_error err;
	if (rk_cluster_parse(&cl, spec, "--cluster", &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return 2;
	}
	struct rkd_sched_config cfg = {
		.db_path = db, .cluster = &cl, .cluster_spec = spec, .policy = policy,
		.engine = &rkd_engine_local,
		.engine_cfg = {.state_dir = state, .self_exe = self, .grace_ms = 1000},
		.round_interval_ms = 1000, .zoo = zoo, .full_rounds = full,
	};
	struct rkd_sched *s;
	if (rkd_sched_create(&s, &cfg, &err)) {
		fprintf(stderr, "bench: %s\n", err.msg);
		rk_cluster_fini(&cl);
		return 1;
	}
	static const char *const models[] = {"bert", "gpt2", "roberta", "vit", "t5", "llama7"};
	static const int gpus[] = {1, 2, 4, 8, 1, 2, 1, 16};
	struct rkd_caller admin = {.admin = 1, .authed = 1};
	for (int i = 0; i < n_jobs; i++) {
		char body[256];
		snprintf(body, sizeof(body),
			 "{\"model\":\"%s\",\"gpus\":%d,\"global_batch\":64,\"iterations\":%d,\"command\":\"true\","
			 "\"est_duration_s\":%d}",
			 models[i % 6], gpus[i % 8], 100 + 37 * i % 5000, 60 + 13 * i % 7200);
		struct rkd_spec sp;
		struct rkd_verr v;
		struct rk_model m;
		if (rkd_spec_parse(body, strlen(body), &sp, &v) || rkd_spec_model(&sp, zoo, &m, &v)) {
			fprintf(stderr, "bench: job %d: %s\n", i, v.e.msg);
			return 1;
		}
		struct rkd_msg msg = {.kind = RKD_MSG_SUBMIT, .who = &admin, .spec = &sp, .model = &m};
		rkd_sched_handle_now(s, &msg);
		if (msg.status != 201) {
			fprintf(stderr, "bench: job %d: HTTP %d %s\n", i, msg.status, msg.verr.e.msg);
			return 1;
		}
		free(msg.body);
		rkd_spec_fini(&sp);
	}
	/* policy + applying decisions (what /metrics reports), and the whole
	 * round including the commit of its history and job rows */
	double *lat = calloc((size_t)rounds, sizeof(double)), *wall = calloc((size_t)rounds, sizeof(double));
	double first = 0, first_wall = 0;
	int ret = 0;
	for (int r = 0; r <= rounds && !ret; r++) {
		double ms;
		double t0 = mono_ms();
		if (rkd_sched_round_now(s, &ms, &err)) {
			fprintf(stderr, "bench: round: %s\n", err.msg);
			ret = 1;
		}
		double w = mono_ms() - t0;
		if (r == 0) {
			first = ms;
			first_wall = w;
		} else {
			lat[r - 1] = ms;
			wall[r - 1] = w;
		}
	}
	qsort(lat, (size_t)rounds, sizeof(double), cmp_d);
	qsort(wall, (size_t)rounds, sizeof(double), cmp_d);
	printf("%-9s%s %d queued jobs on %s: first round (places jobs) %.3f ms, %.3f ms with its commit;"
	       " later rounds median %.3f ms (%.3f with commit), max %.3f ms  [budget 20 ms]\n",
	       policy, full ? " (full)" : "", n_jobs, spec, first, first_wall, lat[rounds / 2], wall[rounds / 2],
	       wall[rounds - 1]);
	free(lat);
	free(wall);
	rkd_sched_destroy(s);
	rk_cluster_fini(&cl);
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "bench: could not remove %s\n", dir);
	return ret;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "--supervise"))
		return rkd_supervise_main(argc, argv);
	int n_jobs = 1000, rounds = 21, full = 0;
	const char *spec = "16x8";
	const char *policies[16];
	int n_pol = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--jobs") && i + 1 < argc)
			n_jobs = (int)strtol(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--cluster") && i + 1 < argc)
			spec = argv[++i];
		else if (!strcmp(argv[i], "--full"))
			full = 1; /* rounds without the change feed, as before it */
		else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = (int)strtol(argv[++i], NULL, 10);
		else if (argv[i][0] != '-' && n_pol < 16)
			policies[n_pol++] = argv[i];
		else {
			fprintf(stderr, "usage: bench_daemon_round [--jobs N] [--cluster SPEC] [--rounds N] [--full] [POLICY...]\n");
			return 2;
		}
	}
	if (n_jobs < 1 || rounds < 1)
		return 2;
	if (!n_pol) {
		policies[n_pol++] = "fifo";
		policies[n_pol++] = "sjf";
		policies[n_pol++] = "tiresias";
	}
	struct rk_zoo zoo;
	rk_zoo_init(&zoo);
	if (load_zoo(RK_DEFAULT_DATA_DIR "/zoo", &zoo)) {
		fprintf(stderr, "bench: no zoo at %s\n", RK_DEFAULT_DATA_DIR "/zoo");
		return 1;
	}
	int ret = 0;
	for (int i = 0; i < n_pol; i++)
		ret |= bench(policies[i], n_jobs, spec, rounds, &zoo, full);
	rk_zoo_fini(&zoo);
	return ret;
}
