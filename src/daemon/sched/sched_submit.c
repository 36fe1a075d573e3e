/*
 * Submissions and their group commit (see sched.h, rkd_sched_submit).
 *
 * A submission needs no other job's state unless it carries an idempotency
 * key or its tenant has a quota. Such plain submissions never reach the
 * scheduler thread's queue: the request thread validates and builds the job
 * (JSON, default plan, stored row) in parallel with the others, and the
 * submit writer thread inserts every submission that arrived meanwhile in
 * one transaction on its own SQLite connection, commits (fsync under
 * synchronous=FULL), hands the jobs to the scheduler thread and only then
 * answers 201. A policy round, an engine launch or a slow GET on the
 * scheduler thread therefore never delays a submission's reply; the two
 * threads only take turns for SQLite's single write lock (store_mu).
 *
 * Durability is unchanged: a 201 is sent only after the row is committed;
 * a crash between the commit and the hand-over loses nothing, recovery reads
 * every active job back from the store.
 */
#include "daemon/sched/sched_internal.h"

#include "rubick/plan.h"
#include "rubick/zoo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

void sched_quota_clamp(const struct rkd_sched *s, struct rk_job *c)
{
	const struct rkd_tenant_cfg *tc = sched_tenant_find(s, c->tenant);
	if (!tc)
		return;
	int cap = tc->gpu_quota;
	if (c->guaranteed && tc->guaranteed_gpu_quota >= 0 &&
	    (cap < 0 || tc->guaranteed_gpu_quota < cap))
		cap = tc->guaranteed_gpu_quota;
	int floor = c->req_gpus > c->min_gpus ? c->req_gpus : c->min_gpus;
	if (cap >= 0 && c->max_gpus > cap)
		c->max_gpus = cap > floor ? cap : floor;
}

int sched_submit_fits(const struct rkd_sched *s, struct rkd_msg *m)
{
	const struct rkd_spec *sp = m->spec;
	char msg[160];
	if (sp->cpus > 0 && sp->cpus > s->cpus_total) {
		snprintf(msg, sizeof(msg),
		         "cpus: %d CPUs can never be allocated: the cluster has %lld", sp->cpus,
		         (long long)s->cpus_total);
		sched_set_err(m, RK_EINFEASIBLE, "cpus", msg);
		return RK_EINFEASIBLE;
	}
	if (sp->mem_mb > 0 && sp->mem_mb > s->mem_mb_total) {
		snprintf(msg, sizeof(msg),
		         "mem_mb: %lld MiB can never be allocated: the cluster has %lld MiB",
		         (long long)sp->mem_mb, (long long)s->mem_mb_total);
		sched_set_err(m, RK_EINFEASIBLE, "mem_mb", msg);
		return RK_EINFEASIBLE;
	}
	return 0;
}

int sched_submit_build(struct rkd_sched *s, struct rkd_msg *m, const char *tenant, int64_t now,
		       struct sjob **out)
{
	struct rkd_spec *sp = m->spec;
	const struct rkd_ident *ident;
	struct rk_error ie;
	if (s->ids && rkd_idmap_find(s->ids, tenant, &ident, &ie)) {
		sched_set_err(m, ie.code, "tenant", ie.msg); /* never run as root by default */
		return ie.code;
	}
	int total = atomic_load(&s->gpus_up);
	if (sp->min_gpus > total) {
		char msg[128];
		snprintf(msg, sizeof(msg), "gpus: %d GPUs can never be allocated: the cluster has %d",
			 sp->min_gpus, total);
		sched_set_err(m, RK_EINFEASIBLE, sp->min_gpus == sp->gpus ? "gpus" : "min_gpus", msg);
		return RK_EINFEASIBLE;
	}
	if (sched_submit_fits(s, m))
		return RK_EINFEASIBLE;
	if (sched_slurm_opts_check(sched_tenant_find(s, tenant), tenant, sp, m))
		return RK_EPERM; /* both submit paths come here */
	int batch = sp->global_batch ? sp->global_batch : m->model->global_batch;
	if (batch <= 0) {
		sched_set_err(m, RK_EINVAL, "global_batch",
			      "global_batch: required (the model gives no default)");
		return RK_EINVAL;
	}
	struct rk_error e;
	rk_error_clear(&e);
	rkd_spec_default_space(sp); /* stored with the spec: a restart reads the same space */
	struct rk_plan req_plan = sp->plan;
	if (sp->has_plan && rk_plan_validate(&sp->plan, batch, sp->gpus, &e)) {
		sched_set_err(m, RK_EINVAL, "plan", e.msg);
		return RK_EINVAL;
	}
	if (!sp->has_plan && sched_default_plan(s, m->model, batch, sp->gpus, &req_plan, &e)) {
		char msg[600];
		snprintf(msg, sizeof(msg), "global_batch: no plan runs %d samples on %d GPUs: %s",
			 batch, sp->gpus, e.msg);
		sched_set_err(m, RK_EINFEASIBLE, "global_batch", msg);
		return RK_EINFEASIBLE;
	}
	char model_text[RK_MODEL_TEXT_MAX];
	if (rk_model_format(m->model, model_text, sizeof(model_text)) >= (int)sizeof(model_text)) {
		sched_set_err(m, RK_ERANGE, "model_spec", "model_spec: the model description is too long");
		return RK_ERANGE;
	}
	struct sjob *j = calloc(1, sizeof(*j));
	if (!j)
		goto oom;
	snprintf(sp->tenant, sizeof(sp->tenant), "%s", tenant);
	sp->global_batch = batch;
	char *spec_json = rkd_spec_encode(sp);
	if (!spec_json)
		goto oom;
	j->spec = *sp; /* take the spec's strings */
	memset(sp, 0, sizeof(*sp));
	j->model = *m->model;
	struct rk_job *c = &j->core;
	/* ids in commit order are not needed: they only have to be unique */
	c->id = atomic_fetch_add(&s->next_id, 1);
	snprintf(c->name, sizeof(c->name), "%s", j->spec.name);
	snprintf(c->tenant, sizeof(c->tenant), "%s", tenant);
	c->model = &j->model;
	c->global_batch = batch;
	c->iters_total = j->spec.iterations;
	c->submit_ms = now;
	c->req_gpus = j->spec.gpus;
	c->req_cpus = j->spec.cpus;
	c->req_mem_mb = j->spec.mem_mb;
	c->req_net_gbps = j->spec.net_gbps;
	c->req_plan = req_plan;
	c->space = j->spec.space;
	c->guaranteed = j->spec.guaranteed;
	c->min_gpus = j->spec.min_gpus;
	c->max_gpus = j->spec.max_gpus;
	sched_quota_clamp(s, c);
	c->est_duration_s = j->spec.est_duration_s;
	c->state = RK_JOB_PENDING;
	c->first_start_ms = -1;
	c->last_change_ms = now;
	rk_alloc_init(&c->alloc);
	/* The database keeps only the token's hash (secrets.h). */
	char token[RKD_TOKEN_HEX], token_hash[RKD_TOKEN_HEX];
	rkd_token_derive(s->token_key, c->id, token);
	rkd_token_hash(token, token_hash);
	struct rkd_job_row *r = &j->row;
	r->id = c->id;
	r->name = strdup(c->name);
	r->tenant = strdup(tenant);
	r->state = strdup("pending");
	r->spec_json = spec_json;
	r->model_text = strdup(model_text);
	r->alloc = strdup("");
	r->plan = strdup("");
	r->reason = strdup("");
	r->idem_key = strdup(j->spec.key);
	r->job_token = strdup(token_hash);
	r->gpu_ids = strdup("");
	r->submit_ms = now;
	r->first_start_ms = -1;
	r->last_change_ms = now;
	r->end_ms = -1;
	r->iters_total = c->iters_total;
	r->req_gpus = c->req_gpus;
	r->exit_status = -1;
	/* Held from the start (sbatch --hold): out of every round until released. */
	if (j->spec.hold)
		snprintf(r->hold, sizeof(r->hold), "%s", m->who->admin ? "admin" : "user");
	if (!r->name || !r->tenant || !r->state || !r->model_text || !r->alloc || !r->plan ||
	    !r->reason || !r->idem_key || !r->job_token || !r->gpu_ids)
		goto oom;
	*out = j;
	return 0;
oom:
	sjob_free(j);
	sched_set_err(m, RK_ENOMEM, "", "out of memory");
	return RK_ENOMEM;
}

void sched_adopt(struct rkd_sched *s, struct sjob *list)
{
	for (struct sjob *j = list, *next; j; j = next) {
		next = j->adopt_next;
		j->adopt_next = NULL;
		if (sched_job_add(s, j)) {
			/* It is stored: a restart recovers it. Until then we cannot track it. */
			struct rk_error e;
			rk_error_set(&e, RK_ENOMEM, "out of memory tracking job %lld",
				     (long long)j->core.id);
			sched_fail(s, &e);
			sjob_free(j);
			continue;
		}
		s->submits++;
		s->round_wanted = 1;
	}
}

/* Insert and commit one batch, hand the jobs over, then wake every sender. */
static void commit_batch(struct rkd_sched *s, struct sub_req *batch)
{
	struct rk_error e;
	rk_error_clear(&e);
	int ret = rkd_sched_failed(s) ? RK_EUNAVAIL : 0;
	if (!ret) {
		pthread_mutex_lock(&s->store_mu);
		ret = rkd_store_begin(s->sub_store, &e);
		for (struct sub_req *r = batch; r && !ret; r = r->next)
			ret = rkd_store_job_insert(s->sub_store, &r->job->row, &e);
		if (!ret)
			ret = rkd_store_commit(s->sub_store, &e); /* rolls back on failure */
		else
			rkd_store_rollback(s->sub_store);
		pthread_mutex_unlock(&s->store_mu);
		if (ret)
			sched_fail(s, &e);
	}
	if (!ret) {
		/* Before any reply: a request that follows a 201 finds the job tracked. */
		pthread_mutex_lock(&s->mu);
		for (struct sub_req *r = batch; r; r = r->next) {
			if (s->adopt_tail)
				s->adopt_tail->adopt_next = r->job;
			else
				s->adopt_head = r->job;
			s->adopt_tail = r->job;
		}
		pthread_cond_signal(&s->wake);
		pthread_mutex_unlock(&s->mu);
	}
	for (struct sub_req *r = batch, *next; r; r = next) {
		next = r->next; /* the sender may free r as soon as it wakes */
		r->ok = !ret;
		if (ret)
			sjob_free(r->job);
		sem_post(&r->done);
	}
}

static void *sub_main(void *arg)
{
	struct rkd_sched *s = arg;
	prctl(PR_SET_NAME, "rkd-submit"); /* visible in top -H, perf and gdb */
	for (;;) {
		pthread_mutex_lock(&s->sub_mu);
		while (!s->sub_head && !s->sub_stopping)
			pthread_cond_wait(&s->sub_wake, &s->sub_mu);
		/* everything that queued while the last commit's fsync ran: one transaction */
		struct sub_req *batch = s->sub_head;
		s->sub_head = s->sub_tail = NULL;
		int stop = s->sub_stopping;
		pthread_mutex_unlock(&s->sub_mu);
		if (batch)
			commit_batch(s, batch);
		else if (stop)
			break;
	}
	return NULL;
}

void rkd_sched_submit(struct rkd_sched *s, struct rkd_msg *m)
{
	struct rkd_spec *sp = m->spec;
	const struct rkd_caller *who = m->who;
	char tenant[RK_TENANT_MAX];
	snprintf(tenant, sizeof(tenant), "%s", sp->tenant[0] ? sp->tenant
				       : who->admin ? "default" : who->tenant);
	m->status = 0;
	m->body = NULL;
	/* First, so that a tenant learns nothing of which other tenants exist. */
	if (!who->admin && strcmp(tenant, who->tenant)) {
		sched_set_err(m, RK_EPERM, "tenant",
			      "tenant: your token may only submit for its own tenant");
		return;
	}
	const struct rkd_tenant_cfg *tc = sched_tenant_find(s, tenant);
	/*
	 * A tenant exists when the config names it ([tenant NAME]), or is "default". An
	 * unknown name would otherwise make a tenant out of a typo: its jobs escape every
	 * quota and Slurm default the intended tenant has, as sbatch --account refuses an
	 * account Slurm does not know.
	 */
	if (!tc && strcmp(tenant, "default")) {
		char msg[2 * RK_TENANT_MAX + 128];
		snprintf(msg, sizeof(msg),
			 "tenant: no tenant '%s' in rubickd's config (a [tenant %s] section); "
			 "jobs without one are 'default'", tenant, tenant);
		sched_set_err(m, RK_EINVAL, "tenant", msg);
		return;
	}
	/* Keys and quotas are checked against the other jobs: the scheduler thread's state. */
	if (sp->key[0] ||
	    (tc && (tc->gpu_quota >= 0 || (sp->guaranteed && tc->guaranteed_gpu_quota >= 0)))) {
		rkd_sched_call(s, m);
		return;
	}
	struct sjob *j;
	if (sched_submit_build(s, m, tenant, rkd_now_ms(), &j))
		return;
	sched_row_sync(j);
	char *body = rkd_job_json(&j->row, 0, NULL, 0); /* j is the scheduler's after the commit */
	if (!body) {
		sjob_free(j);
		sched_set_err(m, RK_ENOMEM, "", "out of memory");
		return;
	}
	struct sub_req r = {.job = j};
	sem_init(&r.done, 0, 0);
	pthread_mutex_lock(&s->sub_mu);
	if (s->sub_stopping) {
		pthread_mutex_unlock(&s->sub_mu);
		sem_destroy(&r.done);
		sjob_free(j);
		free(body);
		sched_set_err(m, RK_EUNAVAIL, "", "rubickd is shutting down");
		return;
	}
	if (s->sub_tail)
		s->sub_tail->next = &r;
	else
		s->sub_head = &r;
	s->sub_tail = &r;
	pthread_cond_signal(&s->sub_wake);
	pthread_mutex_unlock(&s->sub_mu);
	while (sem_wait(&r.done))
		; /* EINTR */
	sem_destroy(&r.done);
	if (r.ok) {
		m->status = 201;
		m->body = body;
		return;
	}
	free(body);
	m->status = 503;
	rkd_verr_set(&m->verr, RK_EUNAVAIL, "", "storage failure");
}

int sched_submit_start(struct rkd_sched *s, struct rk_error *err)
{
	int ret = rkd_store_open(&s->sub_store, s->db_path, s->sync, err);
	if (ret)
		return ret;
	if (pthread_create(&s->sub_thread, NULL, sub_main, s)) {
		rkd_store_close(s->sub_store);
		s->sub_store = NULL;
		return rk_error_set(err, RK_EIO, "cannot start the submit writer thread");
	}
	s->sub_started = 1;
	return 0;
}

/* Stop the writer once every queued submission has its answer. */
void sched_submit_stop(struct rkd_sched *s)
{
	pthread_mutex_lock(&s->sub_mu);
	s->sub_stopping = 1;
	pthread_cond_signal(&s->sub_wake);
	pthread_mutex_unlock(&s->sub_mu);
	if (s->sub_started) {
		pthread_join(s->sub_thread, NULL);
		s->sub_started = 0;
	}
	/* queued before a start that never came: refused, not left waiting */
	for (struct sub_req *r = s->sub_head, *next; r; r = next) {
		next = r->next;
		r->ok = 0;
		sjob_free(r->job);
		sem_post(&r->done);
	}
	s->sub_head = s->sub_tail = NULL;
	rkd_store_close(s->sub_store);
	s->sub_store = NULL;
}

/*
 * The plan a job without one asks for: plain data parallelism with gradient
 * accumulation on a consolidated placement, the largest micro-batch that
 * fits the GPU memory (rk_plan_from_artifact "ga", as the simulator does for
 * traces without a plan).
 */
int sched_default_plan(const struct rkd_sched *s, const struct rk_model *model, int batch, int gpus,
                       struct rk_plan *out, struct rk_error *err)
{
	if (s->cluster.n_nodes < 1)
		return rk_error_set(err, RK_EINFEASIBLE, "the cluster has no node");
	const struct rk_node *n0 = &s->cluster.nodes[0];
	struct rk_placement pl;
	int ret = rk_placement_consolidated(gpus, n0->gpus, &pl, err);
	if (!ret)
		ret = rk_plan_from_artifact("ga", "plan", model, batch, &pl, n0->gpu_mem_mb, out,
		                            err);
	if (!ret)
		ret = rk_plan_validate(out, batch, gpus, err);
	return ret;
}
