/* GET /metrics: Prometheus text format (rendered by the scheduler thread, sched_metrics.c). */
#include "daemon/api/api.h"

void rkd_api_metrics(const struct rkd_api *api, const struct rkd_req *req, struct rkd_resp *resp)
{
	struct rkd_msg m = {.kind = RKD_MSG_METRICS, .who = &req->who};
	rkd_sched_call(api->sched, &m);
	rkd_resp_from_msg(resp, &m);
	if (resp->status == 200)
		resp->content_type = "text/plain; version=0.0.4";
}
