/*
 * Request handlers of the scheduler thread: one function per message kind.
 * Each fills m->status and m->body (JSON) or m->verr. Writes go into the
 * batch's open transaction; the reply is released only after it commits.
 */
#include "daemon/sched/sched_internal.h"

#include "rubick/plan.h"
#include "rubick/zoo.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void set_json(struct rkd_msg *m, int status, json_t *o)
{
	m->body = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	m->status = m->body ? status : 503;
	if (!m->body)
		rkd_verr_set(&m->verr, RK_ENOMEM, "", "out of memory");
}

/*
 * Guaranteed-GPU quota (docs/references.md §1.7): whether `gpus` more GPUs for a
 * guaranteed job of `tenant` exceed its guaranteed_gpu_quota, counting the
 * requests of its other active guaranteed jobs (not `self`); best-effort
 * jobs never count. Fills `msg` with the reason when they do.
 */
static int over_guaranteed_quota(struct rkd_sched *s, const char *tenant, int gpus,
                                 const struct sjob *self, char *msg, size_t cap)
{
	const struct rkd_tenant_cfg *tc = sched_tenant_find(s, tenant);
	if (!tc || tc->guaranteed_gpu_quota < 0)
		return 0;
	long long held = 0;
	for (int i = 0; i < s->n_jobs; i++) {
		const struct sjob *o = s->jobs[i];
		if (o != self && o->core.guaranteed && !sched_state_terminal(o->core.state) &&
		    !strcmp(o->core.tenant, tenant))
			held += o->core.req_gpus;
	}
	if (held + gpus <= tc->guaranteed_gpu_quota)
		return 0;
	snprintf(msg, cap,
	         "gpus: tenant '%s' guaranteed quota is %d GPUs; %lld held by active "
	         "guaranteed jobs, %d requested",
	         tenant, tc->guaranteed_gpu_quota, held, gpus);
	return 1;
}

/*
 * Tenant GPU quota for an update: whether `gpus` for `self` exceed the
 * tenant's gpu_quota beside the requests of its other active jobs, as a
 * submission is checked. Fills `msg` naming the quota when they do.
 */
static int over_gpu_quota(struct rkd_sched *s, const struct sjob *self, int gpus, char *msg,
                          size_t cap)
{
	const struct rkd_tenant_cfg *tc = sched_tenant_find(s, self->core.tenant);
	if (!tc || tc->gpu_quota < 0)
		return 0;
	long long used = 0;
	for (int i = 0; i < s->n_jobs; i++) {
		const struct sjob *o = s->jobs[i];
		if (o != self && !sched_state_terminal(o->core.state) &&
		    !strcmp(o->core.tenant, self->core.tenant))
			used += o->core.req_gpus;
	}
	if (used + gpus <= tc->gpu_quota)
		return 0;
	snprintf(msg, cap,
	         "gpus: tenant '%s' quota (gpu_quota) is %d GPUs; %lld requested by its"
	         " other active jobs, %d requested",
	         self->core.tenant, tc->gpu_quota, used, gpus);
	return 1;
}

/* Whether the caller may change `j` (its own tenant's jobs, or admin). */
static int may_modify(const struct rkd_caller *who, const struct sjob *j)
{
	return who->admin || (who->authed && !strcmp(who->tenant, j->core.tenant));
}

static void on_submit(struct rkd_sched *s, struct rkd_msg *m, int64_t now)
{
	struct rkd_spec *sp = m->spec;
	const struct rkd_caller *who = m->who;
	char tenant[RK_TENANT_MAX];
	snprintf(tenant, sizeof(tenant), "%s",
	         sp->tenant[0] ? sp->tenant
	         : who->admin  ? "default"
	                       : who->tenant);
	if (!who->admin && strcmp(tenant, who->tenant)) {
		sched_set_err(m, RK_EPERM, "tenant",
		              "tenant: your token may only submit for its own tenant");
		return;
	}
	if (sp->key[0]) {
		int64_t id = rkd_store_job_by_key(s->store, tenant, sp->key);
		if (id) {
			sched_reply_job(s, m, 200, id, 0);
			return;
		}
	}
	int total = rk_cluster_total_gpus(&s->cluster); /* before quotas, as always */
	if (sp->min_gpus > total) {
		char msg[128];
		snprintf(msg, sizeof(msg),
		         "gpus: %d GPUs can never be allocated: the cluster has %d", sp->min_gpus,
		         total);
		sched_set_err(m, RK_EINFEASIBLE, sp->min_gpus == sp->gpus ? "gpus" : "min_gpus",
		              msg);
		return;
	}
	if (sched_submit_fits(s, m))
		return;
	const struct rkd_tenant_cfg *tc = sched_tenant_find(s, tenant);
	if (tc && tc->gpu_quota >= 0) {
		int used = 0;
		for (int i = 0; i < s->n_jobs; i++)
			if (!sched_state_terminal(s->jobs[i]->core.state) &&
			    !strcmp(s->jobs[i]->core.tenant, tenant))
				used += s->jobs[i]->core.req_gpus;
		if (used + sp->gpus > tc->gpu_quota) {
			char msg[160];
			snprintf(msg, sizeof(msg),
			         "gpus: tenant '%s' quota is %d GPUs; %d requested by active jobs",
			         tenant, tc->gpu_quota, used);
			sched_set_err(m, RK_EPERM, "gpus", msg);
			return;
		}
	}
	char gmsg[200];
	if (sp->guaranteed &&
	    over_guaranteed_quota(s, tenant, sp->gpus, NULL, gmsg, sizeof(gmsg))) {
		sched_set_err(m, RK_EPERM, "gpus", gmsg);
		return;
	}
	struct sjob *j;
	if (sched_submit_build(s, m, tenant, now, &j))
		return;
	struct rk_error e;
	rk_error_clear(&e);
	if (sched_txn(s) || rkd_store_job_insert(s->store, &j->row, &e)) {
		if (s->in_txn)
			sched_fail(s, &e);
		sched_set_err(m, RK_EUNAVAIL, "", "storage failure");
		sjob_free(j);
		return;
	}
	if (sched_job_add(s, j)) {
		sched_set_err(m, RK_ENOMEM, "", "out of memory");
		sjob_free(j);
		return;
	}
	s->submits++;
	s->round_wanted = 1;
	sched_reply_job(s, m, 201, j->core.id, 0);
}

static void on_cancel(struct rkd_sched *s, struct rkd_msg *m, int64_t now)
{
	struct sjob *j = sched_job_for_change(s, m);
	if (!j)
		return;
	if (!may_modify(m->who, j)) {
		sched_set_err(m, RK_EPERM, "id", "job belongs to another tenant");
		return;
	}
	char reason[96];
	snprintf(reason, sizeof(reason), "cancelled by %s",
	         m->who->admin ? "admin" : m->who->tenant);
	sched_stop_run(s, j, STOP_CANCEL, now);
	j->core.state = RK_JOB_CANCELLED;
	s->compact_check = 1;
	rk_alloc_fini(&j->core.alloc);
	j->row.end_ms = now;
	j->core.last_change_ms = now;
	free(j->row.reason);
	j->row.reason = strdup(reason);
	sched_history(s, j, now, "cancel");
	sched_job_write(s, j);
	s->round_wanted = 1;
	sched_reply_job(s, m, 200, j->core.id, 0);
}

static void on_update(struct rkd_sched *s, struct rkd_msg *m, int64_t now)
{
	struct sjob *j = sched_job_for_change(s, m);
	if (!j)
		return;
	if (!may_modify(m->who, j)) {
		sched_set_err(m, RK_EPERM, "id", "job belongs to another tenant");
		return;
	}
	const struct rkd_update *u = &m->update;
	int gpus = u->has_gpus ? u->gpus : j->core.req_gpus;
	int mn = u->has_min_gpus ? u->min_gpus : (u->has_gpus ? gpus : j->core.min_gpus);
	int mx = u->has_max_gpus ? u->max_gpus : (u->has_gpus ? gpus : j->spec.max_gpus);
	int has_plan = u->has_plan ? !u->clear_plan : j->spec.has_plan;
	struct rk_plan plan = u->has_plan && !u->clear_plan ? u->plan : j->spec.plan;
	char msg[800];
	struct rk_error e;
	rk_error_clear(&e);
	if (mn > gpus || mx < gpus) {
		snprintf(msg, sizeof(msg), "%s: need min_gpus <= gpus <= max_gpus (%d <= %d <= %d)",
		         mn > gpus ? "min_gpus" : "max_gpus", mn, gpus, mx);
		sched_set_err(m, RK_ERANGE, mn > gpus ? "min_gpus" : "max_gpus", msg);
		return;
	}
	if (mn > rk_cluster_total_gpus(&s->cluster)) {
		sched_set_err(m, RK_EINFEASIBLE, "gpus", "gpus: more than the cluster has");
		return;
	}
	/* Becoming guaranteed or growing as one is a new claim on the quota. */
	int guaranteed = u->has_guaranteed ? u->guaranteed : j->core.guaranteed;
	if (guaranteed && (!j->core.guaranteed || gpus > j->core.req_gpus) &&
	    over_guaranteed_quota(s, j->core.tenant, gpus, j, msg, sizeof(msg))) {
		sched_set_err(m, RK_EPERM, "gpus", msg);
		return;
	}
	if ((gpus > j->core.req_gpus || mn > j->core.min_gpus) &&
	    over_gpu_quota(s, j, gpus > mn ? gpus : mn, msg, sizeof(msg))) {
		sched_set_err(m, RK_EPERM, "gpus", msg);
		return;
	}
	if (u->has_gpus && !u->has_plan && j->spec.has_plan) {
		has_plan = 0; /* the old plan was for the old GPU count */
	}
	if (has_plan && rk_plan_validate(&plan, j->core.global_batch, gpus, &e)) {
		sched_set_err(m, RK_EINVAL, "plan", e.msg);
		return;
	}
	struct rkd_verr sv;
	if (has_plan && u->has_plan && rkd_spec_plan_check(&j->spec, &plan, &sv)) {
		sched_set_err(m, sv.e.code, sv.field, sv.e.msg);
		return;
	}
	struct rk_plan req_plan = plan;
	if (!has_plan &&
	    sched_default_plan(s, &j->model, j->core.global_batch, gpus, &req_plan, &e)) {
		snprintf(msg, sizeof(msg), "gpus: no plan runs the job's batch on %d GPUs: %s",
		         gpus, e.msg);
		sched_set_err(m, RK_EINFEASIBLE, "gpus", msg);
		return;
	}
	int changed = gpus != j->core.req_gpus || mn != j->core.min_gpus ||
	              mx != j->spec.max_gpus || has_plan != j->spec.has_plan ||
	              (has_plan && !rk_plan_equal(&plan, &j->spec.plan));
	j->core.req_gpus = j->spec.gpus = gpus;
	j->core.min_gpus = j->spec.min_gpus = mn;
	j->core.max_gpus = j->spec.max_gpus = mx;
	j->spec.has_plan = has_plan;
	if (has_plan)
		j->spec.plan = plan;
	j->core.req_plan = req_plan;
	if (u->has_guaranteed)
		j->core.guaranteed = j->spec.guaranteed = u->guaranteed;
	sched_quota_clamp(s, &j->core); /* after guaranteed: its quota may be the tighter */
	char *spec_json = rkd_spec_encode(&j->spec);
	if (spec_json) {
		free(j->row.spec_json);
		j->row.spec_json = spec_json;
	}
	/*
	 * A running job whose request changed is checkpointed and requeued: the
	 * policy restarts it on the new request (the forced reconfiguration of
	 * docs/api.md), keeping its global batch.
	 */
	if (changed && j->core.state != RK_JOB_PENDING) {
		s->reconfigs++;
		sched_preempt(s, j, now, "request changed");
	}
	snprintf(msg, sizeof(msg), "gpus %d min %d max %d", gpus, mn, mx);
	sched_event(s, j->core.id, "update", msg);
	sched_job_write(s, j);
	s->round_wanted = 1;
	sched_reply_job(s, m, 200, j->core.id, 0);
}

/*
 * A job's own report token: its hash is the stored one, or it is the token
 * derived for the job now (the stored hash of a job whose plaintext token
 * was migrated, schema 4, is the old token's; its relaunches get the new one).
 */
static int job_token_ok(const struct rkd_sched *s, int64_t id, const char *hash, const char *bearer)
{
	if (!bearer || !hash || !hash[0])
		return 0;
	char h[RKD_TOKEN_HEX], t[RKD_TOKEN_HEX];
	rkd_token_hash(bearer, h);
	rkd_token_derive(s->token_key, id, t);
	return rkd_token_eq(h, hash) | rkd_token_eq(bearer, t);
}

/*
 * A bearer that is no tenant's or admin's token must be the job's own before
 * anything about the job is said: a wrong token, another job's, and a job
 * that ended or never existed all get this one 404, byte for byte (no id in
 * it), so that such a caller cannot tell which ids exist or have ended.
 */
static int report_caller_ok(struct rkd_sched *s, struct rkd_msg *m)
{
	if (m->who->authed)
		return 1; /* a tenant's or the admin's token: sched_job_for_change decides */
	const struct sjob *j = sched_job_find(s, m->job_id);
	int ok = 0;
	if (j)
		ok = job_token_ok(s, j->core.id, j->row.job_token, m->who->bearer);
	else {
		struct rkd_job_row row;
		struct rk_error e;
		if (!rkd_store_job_get(s->store, m->job_id, &row, &e)) {
			ok = job_token_ok(s, row.id, row.job_token, m->who->bearer);
			rkd_job_row_fini(&row);
		}
	}
	if (!ok)
		sched_set_err(m, RK_ENOTFOUND, "id",
		              "id: no such job for this token (reports need the job's"
		              " RUBICK_JOB_TOKEN or its tenant's token)");
	return ok;
}

/* Whether j is over its report rate (then m is the 429); else one report is spent. */
static int report_throttled(struct sjob *j, struct rkd_msg *m, int64_t now)
{
	if (!j->rep_ms) {
		j->rep_budget = RKD_REPORT_BURST;
		j->rep_ms = now;
	}
	j->rep_budget += (double)(now - j->rep_ms) * RKD_REPORT_PER_S / 1e3;
	if (j->rep_budget > RKD_REPORT_BURST)
		j->rep_budget = RKD_REPORT_BURST;
	j->rep_ms = now;
	if (j->rep_budget >= 1) {
		j->rep_budget -= 1;
		return 0;
	}
	char msg[160];
	snprintf(msg, sizeof(msg),
	         "job %lld reports more than %d times a second (bursts of %d);"
	         " retry after 1 s",
	         (long long)j->core.id, RKD_REPORT_PER_S, RKD_REPORT_BURST);
	rkd_verr_set(&m->verr, RK_EUNAVAIL, "", "%s", msg);
	m->status = 429;
	m->retry_after_s = 1;
	return 1;
}

static void on_report(struct rkd_sched *s, struct rkd_msg *m, int64_t now)
{
	if (!report_caller_ok(s, m))
		return;
	struct sjob *j = sched_job_for_change(s, m);
	if (!j)
		return;
	int own = job_token_ok(s, j->core.id, j->row.job_token, m->who->bearer);
	if (!own && !may_modify(m->who, j)) {
		sched_set_err(m, m->who->authed ? RK_EPERM : RK_EPERM, "id",
		              "reports need the job's RUBICK_JOB_TOKEN or its tenant's token");
		return;
	}
	if (report_throttled(j, m, now))
		return;
	const struct rkd_report *r = &m->report;
	char msg[160];
	if (r->run && r->run != j->row.run) {
		snprintf(msg, sizeof(msg), "run: %d is not the job's current run (%d)", r->run,
		         j->row.run);
		sched_set_err(m, RK_ECONFLICT, "run", msg);
		return;
	}
	if (r->iters_done > j->core.iters_total) {
		snprintf(msg, sizeof(msg), "iters_done: %g exceeds the job's iterations (%g)",
		         r->iters_done, j->core.iters_total);
		sched_set_err(m, RK_ERANGE, "iters_done", msg);
		return;
	}
	j->core.iters_done = r->iters_done;
	sched_feed_mark(s, j); /* remaining work orders SRTF's queue, even while it waits */
	if (r->tput_sps >= 0)
		j->row.tput_sps = r->tput_sps;
	struct rk_error fe;
	if (rkd_refit_report(s, j, r->tput_sps, &fe)) { /* out of memory only */
		sched_set_err(m, fe.code, "", fe.msg);
		return;
	}
	char plan[RK_PLAN_TEXT_MAX] = "";
	if (j->core.alloc.n)
		rk_plan_format(&j->core.plan, plan, sizeof(plan));
	struct rk_error e;
	if (sched_txn(s))
		return;
	if (rkd_store_sample_add(s->store, j->core.id, now, j->row.run, r->iters_done,
	                         r->tput_sps >= 0 ? r->tput_sps : 0,
	                         rk_alloc_total_gpus(&j->core.alloc), plan, &e) ||
	    (r->tput_sps > 0 && rkd_refit_save(s, j, now, &e)))
		sched_fail(s, &e);
	sched_dirty(s, j);
	sched_job_write(s, j);
	sched_reply_job(s, m, 200, j->core.id, 0);
}

static json_t *node_json(struct rkd_sched *s, int i, const int *used_g, const int *used_c)
{
	const struct rk_node *n = &s->cluster.nodes[i];
	json_t *o = json_object();
	int busy = 0;
	for (int g = 0; g < n->gpus; g++)
		busy += s->gpu_holders[s->gpu_base[i] + g] > 0;
	json_object_set_new(o, "id", json_integer(n->id));
	/* the engine's host name, else n<id>: what `rubick queue` lists, as squeue's NODELIST */
	const char *name = s->engine->node_name ? s->engine->node_name(s->engine_state, i) : NULL;
	char dflt[24];
	snprintf(dflt, sizeof(dflt), "n%d", n->id);
	json_object_set_new(o, "name", json_string(name ? name : dflt));
	json_object_set_new(o, "gpu_type", json_string(n->gpu_type));
	json_object_set_new(o, "gpus", json_integer(n->gpus));
	json_object_set_new(o, "gpus_allocated", json_integer(used_g[i]));
	json_object_set_new(o, "gpus_busy", json_integer(busy));
	json_object_set_new(o, "first_gpu_id", json_integer(s->gpu_base[i]));
	json_object_set_new(o, "cpus", json_integer(n->cpus));
	json_object_set_new(o, "cpus_allocated", json_integer(used_c[i]));
	json_object_set_new(o, "mem_mb", json_integer(n->mem_mb));
	json_object_set_new(o, "nvlink_gbps", json_real(n->nvlink_gbps));
	json_object_set_new(o, "net_gbps", json_real(n->net_gbps));
	json_object_set_new(o, "pool",
	                    json_string(n->pool == RK_POOL_LOANED ? "loaned" : "training"));
	json_object_set_new(o, "up", json_boolean(n->up));
	/* the engine's word (Slurm: drain, draining, down, ...), else up/down */
	const char *st = s->engine->node_state ? s->engine->node_state(s->engine_state, i) : NULL;
	json_object_set_new(o, "state", json_string(st ? st : n->up ? "up" : "down"));
	json_object_set_new(o, "gpus_foreign", json_integer(s->fgn_gpus ? s->fgn_gpus[i] : 0));
	return o;
}

/* GPUs and CPUs allocated per node, and job counts by state. */
static void usage(struct rkd_sched *s, int *used_g, int *used_c, int *pending, int *running)
{
	*pending = *running = 0;
	for (int i = 0; i < s->n_jobs; i++) {
		const struct rk_job *c = &s->jobs[i]->core;
		*pending += c->state == RK_JOB_PENDING;
		*running += c->state == RK_JOB_RUNNING || c->state == RK_JOB_RESTARTING;
		for (int k = 0; k < c->alloc.n; k++) {
			const struct rk_share *sh = &c->alloc.shares[k];
			if (sh->node >= 0 && sh->node < s->cluster.n_nodes) {
				used_g[sh->node] += sh->gpus;
				used_c[sh->node] += sh->cpus;
			}
		}
	}
}

static void on_nodes(struct rkd_sched *s, struct rkd_msg *m, int whole)
{
	int n = s->cluster.n_nodes;
	int *used_g = calloc((size_t)(n ? n : 1), sizeof(int));
	int *used_c = calloc((size_t)(n ? n : 1), sizeof(int));
	if (!used_g || !used_c) {
		free(used_g);
		free(used_c);
		sched_set_err(m, RK_ENOMEM, "", "out of memory");
		return;
	}
	int pending, running, alloc_total = 0;
	usage(s, used_g, used_c, &pending, &running);
	json_t *arr = json_array();
	for (int i = 0; i < n; i++) {
		json_array_append_new(arr, node_json(s, i, used_g, used_c));
		alloc_total += used_g[i];
	}
	json_t *o = json_object();
	if (whole) {
		json_object_set_new(o, "spec", json_string(s->cluster_spec));
		json_object_set_new(o, "gpus", json_integer(rk_cluster_total_gpus(&s->cluster)));
		json_object_set_new(o, "gpus_allocated", json_integer(alloc_total));
		json_object_set_new(o, "jobs_pending", json_integer(pending));
		json_object_set_new(o, "jobs_running", json_integer(running));
		json_object_set_new(o, "policy", json_string(s->policy->name));
		json_object_set_new(o, "engine", json_string(s->engine->name));
	}
	json_object_set_new(o, "nodes", arr);
	free(used_g);
	free(used_c);
	set_json(m, 200, o);
}

static void policy_reply(struct rkd_sched *s, struct rkd_msg *m)
{
	json_t *o = json_object();
	json_object_set_new(o, "name", json_string(s->policy->name));
	json_object_set_new(o, "options", json_string(s->policy_options));
	json_object_set_new(o, "summary",
	                    json_string(s->policy->summary ? s->policy->summary : ""));
	int n = 0;
	const struct rk_policy_ops *const *all = rk_policy_list(&n);
	json_t *arr = json_array();
	for (int i = 0; i < n; i++)
		json_array_append_new(arr, json_string(all[i]->name));
	json_object_set_new(o, "available", arr);
	set_json(m, 200, o);
}

static void on_policy_set(struct rkd_sched *s, struct rkd_msg *m)
{
	if (!m->who->admin) {
		sched_set_err(m, RK_EPERM, "", "changing the policy needs the admin token");
		return;
	}
	const struct rk_policy_ops *p = rk_policy_find(m->policy.name);
	char msg[600];
	if (!p) {
		snprintf(msg, sizeof(msg), "name: unknown policy '%s'", m->policy.name);
		sched_set_err(m, RK_ENOTFOUND, "name", msg);
		return;
	}
	void *state = NULL;
	struct rk_error e;
	rk_error_clear(&e);
	int ret = p->create(&state, m->policy.options[0] ? m->policy.options : NULL, &e);
	if (ret) {
		snprintf(msg, sizeof(msg), "options: %s", e.msg);
		sched_set_err(m, ret, "options", msg);
		return;
	}
	if (sched_txn(s) || rkd_store_meta_set(s->store, "policy", p->name, &e) ||
	    rkd_store_meta_set(s->store, "policy_options", m->policy.options, &e)) {
		p->destroy(state);
		sched_set_err(m, RK_EUNAVAIL, "", "storage failure");
		return;
	}
	s->policy->destroy(s->policy_state);
	s->policy = p;
	s->policy_state = state;
	s->feed_valid = 0; /* the new state has seen no round: start it from a full one */
	snprintf(s->policy_options, sizeof(s->policy_options), "%s", m->policy.options);
	sched_event(s, 0, "policy", p->name);
	s->round_wanted = 1;
	policy_reply(s, m);
}

void sched_handle(struct rkd_sched *s, struct rkd_msg *m, int64_t now)
{
	switch (m->kind) {
	case RKD_MSG_SUBMIT:
		on_submit(s, m, now);
		break;
	case RKD_MSG_LIST: /* fall through: the committed state, as request threads read it */
	case RKD_MSG_LOG:
	case RKD_MSG_EVENTS:
	case RKD_MSG_GET:
		sched_read_store(s, s->store, m);
		break;
	case RKD_MSG_CANCEL:
		on_cancel(s, m, now);
		break;
	case RKD_MSG_UPDATE:
		on_update(s, m, now);
		break;
	case RKD_MSG_HOLD:
		sched_on_hold(s, m, now);
		break;
	case RKD_MSG_RELEASE:
		sched_on_release(s, m, now);
		break;
	case RKD_MSG_REQUEUE:
		sched_on_requeue(s, m, now);
		break;
	case RKD_MSG_REPORT:
		on_report(s, m, now);
		break;
	case RKD_MSG_NODES:
		on_nodes(s, m, 0);
		break;
	case RKD_MSG_CLUSTER:
		on_nodes(s, m, 1);
		break;
	case RKD_MSG_POLICY_GET:
		policy_reply(s, m);
		break;
	case RKD_MSG_POLICY_SET:
		on_policy_set(s, m);
		break;
	case RKD_MSG_METRICS:
		rkd_metrics_render(s, m);
		break;
	}
	if (m->status == 404 && m->kind == RKD_MSG_GET)
		snprintf(m->verr.field, sizeof(m->verr.field), "id");
}
