/*
 * The API's route table (http_reply.h says how the server matches it). The
 * order is the matching order and the order of the methods in a 405's Allow
 * header.
 */
#include "daemon/api/api.h"

const struct rkd_route rkd_api_routes[] = {
	{"GET", "/v1/jobs", RKD_AUTH_TOKEN, rkd_api_jobs_list},
	{"POST", "/v1/jobs", RKD_AUTH_TOKEN, rkd_api_jobs_submit},
	{"GET", "/v1/jobs/{id}", RKD_AUTH_TOKEN, rkd_api_job_get},
	{"PUT", "/v1/jobs/{id}", RKD_AUTH_TOKEN, rkd_api_job_update},
	{"DELETE", "/v1/jobs/{id}", RKD_AUTH_TOKEN, rkd_api_job_cancel},
	{"POST", "/v1/jobs/{id}/report", RKD_AUTH_BEARER, rkd_api_job_report},
	{"POST", "/v1/jobs/{id}/hold", RKD_AUTH_TOKEN, rkd_api_job_hold},
	{"POST", "/v1/jobs/{id}/release", RKD_AUTH_TOKEN, rkd_api_job_release},
	{"POST", "/v1/jobs/{id}/requeue", RKD_AUTH_TOKEN, rkd_api_job_requeue},
	{"GET", "/v1/jobs/{id}/log", RKD_AUTH_TOKEN, rkd_api_job_log},
	{"GET", "/v1/jobs/{id}/events", RKD_AUTH_TOKEN, rkd_api_job_events},
	{"GET", "/v1/nodes", RKD_AUTH_TOKEN, rkd_api_nodes},
	{"GET", "/v1/cluster", RKD_AUTH_TOKEN, rkd_api_cluster},
	{"GET", "/v1/policy", RKD_AUTH_TOKEN, rkd_api_policy_get},
	{"PUT", "/v1/policy", RKD_AUTH_TOKEN, rkd_api_policy_put},
	{"GET", "/metrics", RKD_AUTH_METRICS, rkd_api_metrics},
	{"GET", "/healthz", RKD_AUTH_NONE, rkd_api_healthz},
};
const size_t rkd_api_n_routes = sizeof(rkd_api_routes) / sizeof(rkd_api_routes[0]);
