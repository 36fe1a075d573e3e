/*
 * The change feed of rubickd's rounds decides exactly what full rounds
 * decide. Two schedulers without their thread, one sending the feed
 * (rk_sched_input.incremental) and one with full_rounds, get the same
 * seeded sequence of submissions, cancels, updates (PUT), progress reports,
 * engine events (finished, failed, lost, restart asked by the job, stop
 * acknowledged), policy switches through the API and a daemon restart
 * (recovery); after every round their decision lists and every job's state,
 * allocation, restarts, live run and GPU ids must be equal. The reference
 * also launches, compacts and accrues by walking every job, as before the feed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/sched/sched_internal.h"
#include "rubick/plan.h"
#include "rubick/zoo.h"

/* ---- a fake engine: runs are records, exits are what the test injects -------- */

#define MAX_RUNS 4096

struct fake_run {
	int64_t job;
	int run, alive, stopping;
};

struct fake {
	struct fake_run runs[MAX_RUNS];
	int n_runs;
	struct rkd_exit q[MAX_RUNS];
	int n_q;
};

/* One per scheduler (0 = feed, 1 = full rounds); kept across a daemon restart. */
static struct fake fakes[2];
static int next_fake;

static int fake_create(void **state, const struct rkd_engine_config *cfg, struct rk_error *err)
{
	(void)cfg;
	(void)err;
	*state = &fakes[next_fake];
	return 0;
}

static void fake_destroy(void *state)
{
	(void)state;
}

static struct fake_run *fake_find(struct fake *f, int64_t job, int run)
{
	for (int i = 0; i < f->n_runs; i++)
		if (f->runs[i].job == job && f->runs[i].run == run)
			return &f->runs[i];
	return NULL;
}

static void fake_exit(struct fake *f, int64_t job, int run, int status)
{
	struct fake_run *r = fake_find(f, job, run);
	if (!r || !r->alive || f->n_q == MAX_RUNS)
		return;
	r->alive = 0;
	f->q[f->n_q++] = (struct rkd_exit){.job_id = job, .run = run, .status = status};
}

static int fake_launch(void *state, const struct rkd_launch *l, struct rk_error *err)
{
	struct fake *f = state;
	if (f->n_runs == MAX_RUNS)
		return rk_error_set(err, RK_ENOMEM, "fake engine full");
	f->runs[f->n_runs++] = (struct fake_run){l->job_id, l->run, 1, 0};
	return 0;
}

/* A stop is acknowledged at once: checkpointed, or killed on a cancel. */
static int fake_stop(void *state, int64_t job_id, int run, int checkpoint, int64_t now_ms)
{
	(void)now_ms;
	fake_exit(state, job_id, run, checkpoint ? RKD_EXIT_CHECKPOINTED : -15);
	return 0;
}

static int fake_poll(void *state, int64_t now_ms, struct rkd_exit *out, int max)
{
	(void)now_ms;
	struct fake *f = state;
	int n = f->n_q < max ? f->n_q : max;
	memcpy(out, f->q, (size_t)n * sizeof(*out));
	memmove(f->q, f->q + n, (size_t)(f->n_q - n) * sizeof(*f->q));
	f->n_q -= n;
	return n;
}

static int fake_adopt(void *state, int64_t job_id, int run, struct rkd_exit *exit,
		      struct rk_error *err)
{
	(void)exit;
	(void)err;
	struct fake_run *r = fake_find(state, job_id, run);
	return r && r->alive ? RKD_ADOPT_ALIVE : RKD_ADOPT_ABSENT;
}

static int fake_running(void *state)
{
	struct fake *f = state;
	int n = 0;
	for (int i = 0; i < f->n_runs; i++)
		n += f->runs[i].alive;
	return n;
}

static const struct rkd_engine_ops fake_engine = {
	.name = "fake", .create = fake_create, .destroy = fake_destroy, .launch = fake_launch,
	.stop = fake_stop, .poll = fake_poll, .adopt = fake_adopt, .running = fake_running,
};

/* ---- the two schedulers ------------------------------------------------------- */

static struct rk_zoo zoo;
static struct rk_cluster cluster;
static char dbs[2][PATH_MAX];
static const struct rkd_caller admin = {.admin = 1, .authed = 1};
static uint64_t lcg_state;

static uint32_t lcg(void)
{
	lcg_state = lcg_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(lcg_state >> 33);
}

static void load_zoo(void)
{
	const char *data = getenv("RK_DATA_DIR");
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s/zoo", data ? data : "data");
	DIR *d = opendir(dir);
	assert_non_null(d);
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);
		if (n < 7 || strcmp(e->d_name + n - 6, ".model"))
			continue;
		char path[PATH_MAX * 2], buf[8192];
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		size_t len = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		struct rk_error err;
		rk_zoo_add_text(&zoo, buf, len, path, &err);
	}
	closedir(d);
	assert_true(zoo.n_models > 0);
}

static struct rkd_sched *open_sched(int k, const char *policy)
{
	struct rkd_sched_config cfg = {
		.db_path = dbs[k], .sync = RKD_SYNC_NORMAL, .cluster = &cluster, .cluster_spec = "4x8",
		.policy = policy, .engine = &fake_engine, .round_interval_ms = 1000, .zoo = &zoo,
		.full_rounds = k,
	};
	struct rkd_sched *s;
	struct rk_error err;
	next_fake = k;
	if (rkd_sched_create(&s, &cfg, &err))
		fail_msg("rkd_sched_create: %s", err.msg);
	return s;
}

static int deliver(struct rkd_sched *s, struct rkd_msg *m)
{
	rkd_sched_handle_now(s, m);
	free(m->body);
	m->body = NULL;
	return m->status;
}

static void submit(struct rkd_sched *s[2], int i)
{
	static const char *const models[] = {"bert", "gpt2", "roberta", "vit", "t5"};
	static const int gpus[] = {1, 2, 4, 8, 1, 2, 1, 16};
	char body[256];
	snprintf(body, sizeof(body),
		 "{\"model\":\"%s\",\"gpus\":%d,\"global_batch\":64,\"iterations\":%d,"
		 "\"command\":\"true\",\"est_duration_s\":%d}",
		 models[lcg() % 5], gpus[lcg() % 8], 100 + (int)(lcg() % 5000),
		 60 + (int)(lcg() % 7200));
	for (int k = 0; k < 2; k++) {
		struct rkd_spec sp;
		struct rkd_verr v;
		struct rk_model m;
		if (rkd_spec_parse(body, strlen(body), &sp, &v) || rkd_spec_model(&sp, &zoo, &m, &v))
			fail_msg("job %d: %s", i, v.e.msg);
		struct rkd_msg msg = {.kind = RKD_MSG_SUBMIT, .who = &admin, .spec = &sp, .model = &m};
		if (deliver(s[k], &msg) != 201)
			fail_msg("submit %s: HTTP %d %s", body, msg.status, msg.verr.e.msg);
		rkd_spec_fini(&sp);
	}
}

/* A tracked job of s[0], picked by the sequence, that passes `want`; NULL if none. */
static struct sjob *pick(struct rkd_sched *s, int (*want)(const struct sjob *))
{
	if (s->n_jobs == 0)
		return NULL;
	int start = (int)(lcg() % (uint32_t)s->n_jobs);
	for (int i = 0; i < s->n_jobs; i++) {
		struct sjob *j = s->jobs[(start + i) % s->n_jobs];
		if (want(j))
			return j;
	}
	return NULL;
}

static int is_active(const struct sjob *j)
{
	return !sched_state_terminal(j->core.state);
}

static int is_live(const struct sjob *j)
{
	return j->live_run && is_active(j);
}

static int is_holdable(const struct sjob *j)
{
	return j->core.state == RK_JOB_PENDING && !j->row.hold[0];
}

static int is_held(const struct sjob *j)
{
	return sched_job_held(j);
}

static int is_requeueable(const struct sjob *j)
{
	return is_active(j) && j->core.state != RK_JOB_PENDING;
}

static void same_decisions(struct rkd_sched *a, struct rkd_sched *b, int round)
{
	if (a->dec.n != b->dec.n)
		fail_msg("round %d (%s): %d decisions with the feed, %d without", round,
			 a->policy->name, a->dec.n, b->dec.n);
	for (int i = 0; i < a->dec.n; i++) {
		const struct rk_decision *x = &a->dec.v[i], *y = &b->dec.v[i];
		if (x->job_id != y->job_id || !rk_alloc_equal(&x->alloc, &y->alloc) ||
		    (x->alloc.n && !rk_plan_equal(&x->plan, &y->plan)))
			fail_msg("round %d (%s): decision %d: job %lld with the feed, %lld without",
				 round, a->policy->name, i, (long long)x->job_id,
				 (long long)y->job_id);
	}
}

static void same_jobs(struct rkd_sched *a, struct rkd_sched *b, int round)
{
	assert_int_equal(a->n_act, b->n_act);
	/* What reads see: the published reasons, rebuilt in part by feed rounds, in full without. */
	if (a->n_reasons_pub != b->n_reasons_pub)
		fail_msg("round %d (%s): %d published reasons with the feed, %d without", round,
			 a->policy->name, a->n_reasons_pub, b->n_reasons_pub);
	for (int i = 0; i < a->n_reasons_pub; i++)
		if (a->reasons_pub[i].id != b->reasons_pub[i].id ||
		    a->reasons_pub[i].reason != b->reasons_pub[i].reason)
			fail_msg("round %d (%s): published reason %d: job %lld (%d) with the feed, "
				 "%lld (%d) without", round, a->policy->name, i,
				 (long long)a->reasons_pub[i].id, a->reasons_pub[i].reason,
				 (long long)b->reasons_pub[i].id, b->reasons_pub[i].reason);
	for (int i = 0; i < a->n_jobs; i++) {
		const struct sjob *x = a->jobs[i];
		const struct sjob *y = sched_job_find(b, x->core.id);
		if (!y) {
			assert_true(sched_state_terminal(x->core.state));
			continue;
		}
		if (x->core.state != y->core.state || !rk_alloc_equal(&x->core.alloc, &y->core.alloc) ||
		    x->core.restarts != y->core.restarts || x->live_run != y->live_run ||
		    strcmp(x->row.gpu_ids, y->row.gpu_ids) || x->core.iters_done != y->core.iters_done ||
		    strcmp(x->row.hold, y->row.hold))
			fail_msg("round %d (%s): job %lld differs: state %d/%d restarts %d/%d", round,
				 a->policy->name, (long long)x->core.id, (int)x->core.state,
				 (int)y->core.state, x->core.restarts, y->core.restarts);
		/* Reasons too: a feed round that skips recomputing must not leave one stale. */
		if (strcmp(x->row.pending_reason, y->row.pending_reason))
			fail_msg("round %d (%s): job %lld waits for %s with the feed, %s without",
				 round, a->policy->name, (long long)x->core.id,
				 x->row.pending_reason, y->row.pending_reason);
	}
}

struct counts {
	uint64_t feed, launches, exits, preemptions, reconfigs, errors, held;
	int restarts;
};

static void add_counts(struct counts *c, const struct rkd_sched *s)
{
	c->feed += s->feed_rounds;
	c->launches += s->launches;
	c->exits += s->exits;
	c->preemptions += s->preemptions;
	c->reconfigs += s->reconfigs;
	c->errors += s->policy_errors;
	c->restarts++;
}

static void run_sequence(const char *policy, const char *switch_to, uint64_t seed, int steps)
{
	lcg_state = seed;
	memset(fakes, 0, sizeof(fakes));
	char dir[] = "/tmp/rk-feed-XXXXXX";
	assert_non_null(mkdtemp(dir));
	for (int k = 0; k < 2; k++)
		snprintf(dbs[k], sizeof(dbs[k]), "%s/%d.db", dir, k);
	struct rkd_sched *s[2] = {open_sched(0, policy), open_sched(1, policy)};
	int rounds = 0, submitted = 0;
	struct counts tot[2] = {{0}, {0}};
	tot[0].restarts = tot[1].restarts = -1; /* add_counts counts the last instance too */
	for (int step = 0; step < steps; step++) {
		uint32_t op = lcg() % 100;
		struct sjob *j;
		if (op < 45) {
			submit(s, submitted++);
		} else if (op < 52 && (j = pick(s[0], is_active))) {
			for (int k = 0; k < 2; k++) {
				struct rkd_msg m = {.kind = RKD_MSG_CANCEL, .who = &admin,
						    .job_id = j->core.id};
				assert_int_equal(deliver(s[k], &m), 200);
			}
		} else if (op < 60 && (j = pick(s[0], is_active))) {
			static const int g[] = {1, 2, 4, 8};
			struct rkd_update u = {.has_gpus = 1, .gpus = g[lcg() % 4]};
			int64_t id = j->core.id;
			int st[2];
			for (int k = 0; k < 2; k++) {
				struct rkd_msg m = {.kind = RKD_MSG_UPDATE, .who = &admin, .job_id = id,
						    .update = u};
				st[k] = deliver(s[k], &m);
			}
			assert_int_equal(st[0], st[1]);
		} else if (op < 70 && (j = pick(s[0], is_active))) {
			struct rkd_report r = {.iters_done = j->core.iters_total * (lcg() % 90) / 100.0,
					       .tput_sps = -1};
			int64_t id = j->core.id;
			for (int k = 0; k < 2; k++) {
				struct rkd_msg m = {.kind = RKD_MSG_REPORT, .who = &admin, .job_id = id,
						    .report = r};
				assert_int_equal(deliver(s[k], &m), 200);
			}
		} else if (op < 88 && (j = pick(s[0], is_live))) {
			/* finished, failed, lost, or the job asks to be restarted */
			static const int how[] = {0, 0, 1, RKD_EXIT_LOST, RKD_EXIT_CHECKPOINTED};
			int status = how[lcg() % 5];
			for (int k = 0; k < 2; k++)
				fake_exit(&fakes[k], j->core.id, j->live_run, status);
		} else if (op < 89 && switch_to) {
			const char *to = step % 2 ? switch_to : policy;
			for (int k = 0; k < 2; k++) {
				struct rkd_msg m = {.kind = RKD_MSG_POLICY_SET, .who = &admin};
				snprintf(m.policy.name, sizeof(m.policy.name), "%s", to);
				assert_int_equal(deliver(s[k], &m), 200);
			}
		} else if (op >= 91 && op < 99) {
			/* hold a pending job, release a held one, requeue (and hold) a running one */
			enum rkd_msg_kind kind = op < 94 ? RKD_MSG_HOLD : op < 97 ? RKD_MSG_RELEASE
								    : RKD_MSG_REQUEUE;
			j = pick(s[0], kind == RKD_MSG_HOLD      ? is_holdable
				       : kind == RKD_MSG_RELEASE ? is_held
								 : is_requeueable);
			int hold = (int)(lcg() % 2);
			for (int k = 0; j && k < 2; k++) {
				struct rkd_msg m = {.kind = kind, .who = &admin, .job_id = j->core.id,
						    .hold_after = kind == RKD_MSG_REQUEUE && hold};
				assert_int_equal(deliver(s[k], &m), 200);
			}
		} else if (op < 90 && lcg() % 4 == 0) {
			/* a daemon restart: recovery from the store, runs adopted */
			for (int k = 0; k < 2; k++) {
				add_counts(&tot[k], s[k]);
				rkd_sched_destroy(s[k]);
				s[k] = open_sched(k, NULL);
			}
		}
		for (int k = 0; k < 2; k++)
			rkd_sched_engine_now(s[k]);
		if (step % 3 == 0) {
			struct rk_error e[2];
			int rc[2];
			for (int k = 0; k < 2; k++)
				rc[k] = rkd_sched_round_now(s[k], NULL, &e[k]);
			assert_int_equal(rc[0], rc[1]);
			same_decisions(s[0], s[1], rounds);
			for (int k = 0; k < 2; k++)
				rkd_sched_engine_now(s[k]);
			same_jobs(s[0], s[1], rounds);
			for (int i = 0; i < s[0]->n_jobs; i++)
				tot[0].held += (uint64_t)sched_job_held(s[0]->jobs[i]);
			rounds++;
		}
	}
	/* Ended jobs are forgotten alike: compaction from the ended list misses none. */
	for (int k = 0; k < 2; k++) {
		struct rk_error e;
		rkd_sched_round_now(s[k], NULL, &e);
		rkd_sched_engine_now(s[k]);
	}
	assert_int_equal(s[0]->n_jobs, s[1]->n_jobs);
	/* The feed was used (full rounds only after start, switches and restarts), and
	 * the sequence exercised what it is meant to. */
	for (int k = 0; k < 2; k++)
		add_counts(&tot[k], s[k]);
	print_message("%s%s%s: %d rounds, %llu with the feed, %d restarts; %llu launches, "
		      "%llu exits, %llu preemptions, %llu reconfigurations, %llu policy errors\n",
		      policy, switch_to ? "/" : "", switch_to ? switch_to : "", rounds,
		      (unsigned long long)tot[0].feed, tot[0].restarts,
		      (unsigned long long)tot[0].launches, (unsigned long long)tot[0].exits,
		      (unsigned long long)tot[0].preemptions, (unsigned long long)tot[0].reconfigs,
		      (unsigned long long)tot[0].errors);
	assert_int_equal(tot[1].feed, 0);
	assert_true(tot[0].feed > (uint64_t)rounds / 2);
	assert_true(tot[0].exits > 0 && tot[0].launches > 0);
	assert_true(tot[0].held > 0); /* held jobs were there, out of rounds, in some rounds */
	for (int k = 0; k < 2; k++)
		rkd_sched_destroy(s[k]);
	char cmd[64];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

static void feed_fifo(void **st) { (void)st; run_sequence("fifo", NULL, 1, 900); }
static void feed_sjf(void **st) { (void)st; run_sequence("sjf", NULL, 2, 900); }
static void feed_srtf(void **st) { (void)st; run_sequence("srtf", NULL, 3, 900); }
static void feed_tiresias(void **st) { (void)st; run_sequence("tiresias", NULL, 4, 900); }
static void feed_sjf_bsbf(void **st) { (void)st; run_sequence("sjf-bsbf", NULL, 5, 600); }
static void feed_switch(void **st) { (void)st; run_sequence("fifo", "srtf", 6, 900); }

int main(void)
{
	rk_zoo_init(&zoo);
	load_zoo();
	struct rk_error err;
	if (rk_cluster_parse(&cluster, "4x8", "cluster", &err))
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(feed_fifo),     cmocka_unit_test(feed_sjf),
		cmocka_unit_test(feed_srtf),     cmocka_unit_test(feed_tiresias),
		cmocka_unit_test(feed_sjf_bsbf), cmocka_unit_test(feed_switch),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	rk_cluster_fini(&cluster);
	rk_zoo_fini(&zoo);
	return rc;
}
