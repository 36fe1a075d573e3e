/*
 * Starting and stopping the scheduler: open the store, rebuild every tracked
 * job from its stored row and re-adopt its runs through the engine (crash
 * recovery), pick the policy; and the orderly shutdown.
 */
#include "daemon/sched/sched_internal.h"

#include "rubick/plan.h"
#include "rubick/zoo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_POLICY "fifo"

/* Rebuild a tracked job from its stored row (takes ownership of *row). */
static int job_from_row(struct rkd_sched *s, struct rkd_job_row *row, struct sjob **out,
			struct rk_error *err)
{
	struct sjob *j = calloc(1, sizeof(*j));
	if (!j)
		return rk_error_set(err, RK_ENOMEM, "recovery: out of memory");
	j->row = *row;
	memset(row, 0, sizeof(*row));
	struct rkd_verr v;
	int ret = rkd_spec_parse(j->row.spec_json, strlen(j->row.spec_json), &j->spec, &v);
	if (ret) {
		rk_error_set(err, ret, "job %lld: stored spec: %s", (long long)j->row.id, v.e.msg);
		goto fail;
	}
	ret = rk_model_parse(j->row.model_text, strlen(j->row.model_text), "stored model",
			     &j->model, err);
	if (ret) {
		rk_error_prefix(err, "job %lld", (long long)j->row.id);
		goto fail;
	}
	struct rk_job *c = &j->core;
	c->id = j->row.id;
	snprintf(c->name, sizeof(c->name), "%s", j->row.name);
	snprintf(c->tenant, sizeof(c->tenant), "%s", j->row.tenant);
	c->model = &j->model;
	c->global_batch = j->spec.global_batch ? j->spec.global_batch : j->model.global_batch;
	c->iters_total = j->row.iters_total;
	c->iters_done = j->row.iters_done;
	c->submit_ms = j->row.submit_ms;
	c->req_gpus = j->spec.gpus;
	c->req_cpus = j->spec.cpus;
	c->req_mem_mb = j->spec.mem_mb;
	c->req_net_gbps = j->spec.net_gbps;
	if (j->spec.has_plan)
		c->req_plan = j->spec.plan;
	else if ((ret = sched_default_plan(s, &j->model, c->global_batch, c->req_gpus, &c->req_plan,
					   err))) {
		rk_error_prefix(err, "job %lld: default plan", (long long)c->id);
		goto fail;
	}
	/* a spec stored before plan spaces has none: every plan, as when it was accepted */
	if (j->spec.has_space)
		c->space = j->spec.space;
	c->guaranteed = j->spec.guaranteed;
	c->min_gpus = j->spec.min_gpus;
	c->max_gpus = j->spec.max_gpus;
	sched_quota_clamp(s, c);
	c->est_duration_s = j->spec.est_duration_s;
	c->restarts = j->row.restarts;
	c->first_start_ms = j->row.first_start_ms;
	c->last_change_ms = j->row.last_change_ms;
	c->attained_gpu_s = j->row.attained_gpu_s;
	rk_alloc_init(&c->alloc);
	if (rkd_state_parse(j->row.state, &c->state)) {
		ret = rk_error_set(err, RK_EINVAL, "job %lld: stored state '%s' is unknown",
				   (long long)c->id, j->row.state);
		goto fail;
	}
	if (j->row.alloc[0] && (ret = rkd_alloc_parse(j->row.alloc, &c->alloc))) {
		rk_error_set(err, ret, "job %lld: stored allocation '%s' is malformed",
			     (long long)c->id, j->row.alloc);
		goto fail;
	}
	if (j->row.plan[0] && (ret = rk_plan_parse(j->row.plan, "stored plan", &c->plan, err)))
		goto fail;
	rkd_refit_recover(s, j); /* the model refitted before the restart, not the zoo's */
	*out = j;
	return 0;
fail:
	sjob_free(j);
	return ret;
}

/*
 * Re-attach a recovered job to its runs. At most one run of a job is ever
 * alive (a launch waits for the previous run to exit), and it is either the
 * stored live_run or, when the daemon died between a launch and the next
 * commit, the latest decided run row.run. Both are asked.
 */
static int job_adopt(struct rkd_sched *s, struct sjob *j, int64_t now, struct rk_error *err)
{
	enum rk_job_state st = j->core.state;
	int cand[2] = {j->row.live_run, j->row.run};
	for (int k = 0; k < 2; k++) {
		int run = cand[k];
		if (run < 1 || (k == 1 && run == cand[0]))
			continue;
		struct rkd_exit ex;
		memset(&ex, 0, sizeof(ex));
		int r = s->engine->adopt(s->engine_state, j->core.id, run, &ex, err);
		if (r < 0)
			return r;
		if (r == RKD_ADOPT_ABSENT) {
			if (run == j->row.run && st == RK_JOB_RUNNING)
				j->launch_pending = 1;
			else if (run == j->row.run && st == RK_JOB_RESTARTING) {
				j->core.state = st = RK_JOB_RUNNING;
				sched_run_next(s, j);
			}
			continue;
		}
		j->live_run = run;
		sched_ids_mark(s, ex.gpu_ids, 1);
		free(j->row.gpu_ids);
		j->row.gpu_ids = strdup(ex.gpu_ids);
		if (!j->row.gpu_ids)
			return rk_error_set(err, RK_ENOMEM, "recovery: out of memory");
		/* Why this run should stop, if it should: it was cancelled, is being
		 * reconfigured or preempted, or a newer run has been decided. */
		enum stop_kind why = sched_state_terminal(st)     ? STOP_CANCEL
				     : st == RK_JOB_RESTARTING  ? STOP_RESTART
				     : st == RK_JOB_PENDING     ? STOP_PREEMPT
				     : run < j->row.run         ? STOP_RESTART
								: STOP_NONE;
		if (run == j->row.run)
			j->launch_pending = 0;
		sched_dirty(s, j);
		char detail[128];
		snprintf(detail, sizeof(detail), "run %d %s", run,
			 r == RKD_ADOPT_ALIVE ? "alive" : "ended while rubickd was down");
		sched_event(s, j->core.id, "adopt", detail);
		if (r == RKD_ADOPT_EXITED) {
			j->stop = why;
			sched_on_exit(s, &ex, now);
		} else if (why != STOP_NONE) {
			sched_stop_run(s, j, why, now);
			if (run < j->row.run && st == RK_JOB_RUNNING)
				j->launch_pending = 1; /* the newer run starts once this one exits */
		}
	}
	return 0;
}

static int recover(struct rkd_sched *s, struct rk_error *err)
{
	struct rkd_job_row *rows = NULL;
	int n = 0;
	int ret = rkd_store_job_list_active(s->store, &rows, &n, err);
	if (ret)
		return ret;
	int64_t now = rkd_now_ms();
	for (int i = 0; i < n && !ret; i++) {
		struct sjob *j = NULL;
		ret = job_from_row(s, &rows[i], &j, err);
		if (!ret && (ret = sched_job_add(s, j)))
			sjob_free(j);
	}
	rkd_job_rows_free(rows, n);
	for (int i = 0; i < s->n_jobs && !ret; i++)
		ret = job_adopt(s, s->jobs[i], now, err);
	s->round_wanted = 1;
	s->launch_check = 1;
	s->compact_check = 1;
	return ret;
}

static int policy_choose(struct rkd_sched *s, const struct rkd_sched_config *cfg,
			 struct rk_error *err)
{
	char name[64] = DEFAULT_POLICY, opts[512] = "";
	if (cfg->policy) {
		snprintf(name, sizeof(name), "%s", cfg->policy);
		snprintf(opts, sizeof(opts), "%s", cfg->policy_options ? cfg->policy_options : "");
	} else if (rkd_store_meta_get(s->store, "policy", name, sizeof(name)) == 0) {
		if (rkd_store_meta_get(s->store, "policy_options", opts, sizeof(opts)))
			opts[0] = '\0';
	}
	/* --policy-options alone sets the options of the kept (or default) policy
	 * rather than being dropped without a word. */
	if (!cfg->policy && cfg->policy_options && cfg->policy_options[0])
		snprintf(opts, sizeof(opts), "%s", cfg->policy_options);
	s->policy = rk_policy_find(name);
	if (!s->policy)
		return rk_error_set(err, RK_ENOTFOUND, "--policy: unknown policy '%s'", name);
	int ret = s->policy->create(&s->policy_state, opts[0] ? opts : NULL, err);
	if (ret)
		return rk_error_prefix(err, "--policy %s", name);
	snprintf(s->policy_options, sizeof(s->policy_options), "%s", opts);
	if ((ret = rkd_store_meta_set(s->store, "policy", name, err)) ||
	    (ret = rkd_store_meta_set(s->store, "policy_options", opts, err)))
		return ret;
	return 0;
}

static int cluster_setup(struct rkd_sched *s, const struct rkd_sched_config *cfg,
			 struct rk_error *err)
{
	if (rk_cluster_copy(&s->cluster, cfg->cluster))
		return rk_error_set(err, RK_ENOMEM, "cluster: out of memory");
	s->cluster_spec = strdup(cfg->cluster_spec ? cfg->cluster_spec : "");
	if (s->engine->describe) {
		/* The engine's nodes are the truth (issue 13): a given spec is checked, not used. */
		char diff[512];
		int d = s->engine->describe(s->engine_state, &s->cluster, diff, sizeof(diff), err);
		if (d < 0)
			return d;
		if (d > 0 && cfg->cluster_given)
			fprintf(stderr, "rubickd: warning: --cluster %s does not match the %s engine (%d "
				"nodes differ; first: %s): using the engine's nodes\n",
				cfg->cluster_spec ? cfg->cluster_spec : "", s->engine->name, d, diff);
		char spec[64];
		snprintf(spec, sizeof(spec), "%s: %d nodes, %d GPUs", s->engine->name,
			 s->cluster.n_nodes, rk_cluster_total_gpus(&s->cluster));
		free(s->cluster_spec);
		s->cluster_spec = strdup(cfg->cluster_given ? cfg->cluster_spec : spec);
	}
	int n = s->cluster.n_nodes;
	s->gpu_base = calloc((size_t)(n ? n : 1), sizeof(*s->gpu_base));
	if (!s->cluster_spec || !s->gpu_base)
		return rk_error_set(err, RK_ENOMEM, "cluster: out of memory");
	int base = 0;
	for (int i = 0; i < n; i++) {
		if (s->cluster.nodes[i].gpus > 64)
			return rk_error_set(err, RK_ERANGE,
					    "--cluster: node %d has %d GPUs; the local engine handles"
					    " at most 64 per node", i, s->cluster.nodes[i].gpus);
		s->gpu_base[i] = base;
		base += s->cluster.nodes[i].gpus;
	}
	s->n_gpus = base;
	s->gpu_holders = calloc((size_t)(base ? base : 1), 1);
	if (!s->gpu_holders)
		return rk_error_set(err, RK_ENOMEM, "cluster: out of memory");
	/* The calibrated constants the simulator decides with too (perf.h). */
	rk_perf_env_a800(&s->env);
	return rkd_store_meta_set(s->store, "cluster", s->cluster_spec, err);
}

int rkd_sched_create(struct rkd_sched **out, const struct rkd_sched_config *cfg,
		     struct rk_error *err)
{
	struct rkd_sched *s = calloc(1, sizeof(*s));
	if (!s)
		return rk_error_set(err, RK_ENOMEM, "out of memory");
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->wake, NULL);
	pthread_mutex_init(&s->store_mu, NULL);
	pthread_mutex_init(&s->sub_mu, NULL);
	pthread_cond_init(&s->sub_wake, NULL);
	sched_reasons_init(s);
	s->sync = cfg->sync;
	s->db_path = strdup(cfg->db_path);
	s->state_dir = strdup(cfg->engine_cfg.state_dir ? cfg->engine_cfg.state_dir : "");
	if (!s->db_path || !s->state_dir) {
		rkd_sched_destroy(s);
		return rk_error_set(err, RK_ENOMEM, "out of memory");
	}
	rk_decisions_init(&s->dec);
	s->engine = cfg->engine;
	s->zoo = cfg->zoo;
	s->full_rounds = cfg->full_rounds;
	s->round_interval_ms = cfg->round_interval_ms > 0 ? cfg->round_interval_ms : 1000;
	s->ids = cfg->ids;
	int ret = rkd_store_open(&s->store, cfg->db_path, cfg->sync, err);
	char key_path[4200];
	if (!ret && (size_t)snprintf(key_path, sizeof(key_path), "%s.key", cfg->db_path) >=
			    sizeof(key_path))
		ret = rk_error_set(err, RK_ERANGE, "%s: path too long", cfg->db_path);
	if (!ret)
		ret = rkd_secret_load(key_path, s->token_key, err);
	if (!ret) /* before the cluster: the engine may say what it is (describe) */
		ret = s->engine->create(&s->engine_state, &cfg->engine_cfg, err);
	if (!ret)
		ret = cluster_setup(s, cfg, err);
	if (!ret && cfg->n_tenants > 0) {
		s->tenants = calloc((size_t)cfg->n_tenants, sizeof(*s->tenants));
		if (!s->tenants)
			ret = rk_error_set(err, RK_ENOMEM, "out of memory");
		else
			memcpy(s->tenants, cfg->tenants, (size_t)cfg->n_tenants * sizeof(*s->tenants));
		s->n_tenants = cfg->n_tenants;
		s->chg_budget = ret ? NULL : calloc((size_t)cfg->n_tenants, sizeof(*s->chg_budget));
		s->chg_ms = ret ? NULL : calloc((size_t)cfg->n_tenants, sizeof(*s->chg_ms));
		if (!ret && (!s->chg_budget || !s->chg_ms))
			ret = rk_error_set(err, RK_ENOMEM, "out of memory");
		/* Both quotas as every round's input receives them (and the driver applies them). */
		s->quotas = ret ? NULL : calloc((size_t)cfg->n_tenants, sizeof(*s->quotas));
		if (!ret && !s->quotas)
			ret = rk_error_set(err, RK_ENOMEM, "out of memory");
		for (int i = 0; i < cfg->n_tenants && !ret; i++) {
			const struct rkd_tenant_cfg *t = &cfg->tenants[i];
			if (t->guaranteed_gpu_quota < 0 && t->gpu_quota < 0)
				continue;
			struct rk_tenant_quota *q = &s->quotas[s->n_quotas++];
			snprintf(q->tenant, sizeof(q->tenant), "%s", t->name);
			q->guaranteed_gpus = t->guaranteed_gpu_quota; /* -1 = none */
			q->has_gpu_quota = t->gpu_quota >= 0;
			q->gpu_quota = t->gpu_quota;
		}
		for (int i = 0; i < cfg->n_tenants && !ret; i++)
			ret = rkd_store_tenant_set(s->store, cfg->tenants[i].name,
						   cfg->tenants[i].gpu_quota,
						   cfg->tenants[i].guaranteed_gpu_quota, err);
	}
	if (!ret)
		ret = policy_choose(s, cfg, err);
	if (!ret) {
		atomic_store(&s->next_id, rkd_store_max_job_id(s->store) + 1);
		atomic_store(&s->gpus_up, rk_cluster_total_gpus(&s->cluster));
		for (int i = 0; i < s->cluster.n_nodes; i++) {
			s->cpus_total += s->cluster.nodes[i].cpus;
			s->mem_mb_total += s->cluster.nodes[i].mem_mb;
		}
		ret = recover(s, err);
	}
	/* Before any request thread exists: they read s->readers without a lock. */
	if (!ret)
		ret = sched_readers_init(s, err);
	if (ret) {
		rkd_sched_destroy(s);
		return ret;
	}
	*out = s;
	return 0;
}

int rkd_sched_set_url(struct rkd_sched *s, const char *url)
{
	char *u = strdup(url);
	if (!u)
		return RK_ENOMEM;
	free(s->url);
	s->url = u;
	return 0;
}

void rkd_sched_destroy(struct rkd_sched *s)
{
	if (!s)
		return;
	sched_submit_stop(s); /* first: it hands jobs to the scheduler thread */
	if (s->started) {
		pthread_mutex_lock(&s->mu);
		s->stopping = 1;
		pthread_cond_signal(&s->wake);
		pthread_mutex_unlock(&s->mu);
		pthread_join(s->thread, NULL);
	}
	if (s->store && s->in_txn) {
		rkd_store_rollback(s->store);
		s->in_txn = 0;
		pthread_mutex_unlock(&s->store_mu); /* taken on this thread (no scheduler thread) */
	}
	for (int i = 0; i < s->n_jobs; i++)
		sjob_free(s->jobs[i]);
	for (struct sjob *j = s->adopt_head, *next; j; j = next) {
		next = j->adopt_next;
		sjob_free(j);
	}
	free(s->jobs);
	sched_feed_free(s);
	free(s->dirty);
	if (s->policy && s->policy_state)
		s->policy->destroy(s->policy_state);
	if (s->engine && s->engine_state)
		s->engine->destroy(s->engine_state);
	rk_decisions_fini(&s->dec);
	sched_readers_fini(s);
	rkd_store_close(s->store);
	rk_cluster_fini(&s->cluster);
	rk_cluster_fini(&s->view);
	free(s->fgn_gpus);
	free(s->fgn_cpus);
	free(s->cluster_spec);
	free(s->gpu_base);
	free(s->gpu_holders);
	free(s->tenants);
	free(s->chg_budget);
	free(s->chg_ms);
	free(s->quotas);
	free(s->url);
	free(s->db_path);
	free(s->state_dir);
	sched_reasons_fini(s);
	pthread_cond_destroy(&s->sub_wake);
	pthread_mutex_destroy(&s->sub_mu);
	pthread_mutex_destroy(&s->store_mu);
	pthread_cond_destroy(&s->wake);
	pthread_mutex_destroy(&s->mu);
	free(s);
}
