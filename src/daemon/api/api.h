/*
 * rubickd's request handlers, one file per resource (api_*.c): each checks
 * its request, sends the scheduler thread a message (sched.h) and turns the
 * reply into an HTTP reply (http_reply.h). api_routes.c maps method and path
 * to them; main.c hands that table to the server (http.h).
 */
#ifndef RUBICKD_API_H
#define RUBICKD_API_H

#include "daemon/http/http_reply.h"
#include "daemon/sched/sched.h"

#include <stddef.h>

struct rk_zoo;

/* What every handler works with (borrowed, for the server's life). */
struct rkd_api {
	struct rkd_sched *sched;
	const struct rk_zoo *zoo;
};

/* The route table of the API (api_routes.c, in the server's matching order). */
extern const struct rkd_route rkd_api_routes[];
extern const size_t rkd_api_n_routes;

/* The handlers (api_*.c). */
void rkd_api_jobs_submit(const struct rkd_api *api, const struct rkd_req *req, struct rkd_resp *resp);
void rkd_api_jobs_list(const struct rkd_api *api, const struct rkd_req *req, struct rkd_resp *resp);
void rkd_api_job_get(const struct rkd_api *api, const struct rkd_req *req, struct rkd_resp *resp);
void rkd_api_job_cancel(const struct rkd_api *api, const struct rkd_req *req, struct rkd_resp *resp);
void rkd_api_job_update(const struct rkd_api *api, const struct rkd_req *req, struct rkd_resp *resp);
void rkd_api_job_report(const struct rkd_api *api, const struct rkd_req *req, struct rkd_resp *resp);
void rkd_api_job_hold(const struct rkd_api *api, const struct rkd_req *req, struct rkd_resp *resp);
void rkd_api_job_release(const struct rkd_api *api, const struct rkd_req *req,
                         struct rkd_resp *resp);
void rkd_api_job_requeue(const struct rkd_api *api, const struct rkd_req *req,
                         struct rkd_resp *resp);
void rkd_api_nodes(const struct rkd_api *api, const struct rkd_req *req, struct rkd_resp *resp);
void rkd_api_cluster(const struct rkd_api *api, const struct rkd_req *req, struct rkd_resp *resp);
void rkd_api_policy_get(const struct rkd_api *api, const struct rkd_req *req, struct rkd_resp *resp);
void rkd_api_policy_put(const struct rkd_api *api, const struct rkd_req *req, struct rkd_resp *resp);
void rkd_api_job_log(const struct rkd_api *api, const struct rkd_req *req, struct rkd_resp *resp);
void rkd_api_job_events(const struct rkd_api *api, const struct rkd_req *req,
                        struct rkd_resp *resp);
void rkd_api_healthz(const struct rkd_api *api, const struct rkd_req *req, struct rkd_resp *resp);
void rkd_api_metrics(const struct rkd_api *api, const struct rkd_req *req, struct rkd_resp *resp);

#endif
