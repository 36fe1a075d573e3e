/* /v1/policy: the scheduling policy in force (GET) and changing it (PUT, admin only). */
#include "daemon/api/api.h"

#include <string.h>

void rkd_api_policy_get(const struct rkd_api *api, const struct rkd_req *req,
			struct rkd_resp *resp)
{
	struct rkd_msg m = {.kind = RKD_MSG_POLICY_GET, .who = &req->who};
	rkd_sched_call(api->sched, &m);
	rkd_resp_from_msg(resp, &m);
}

void rkd_api_policy_put(const struct rkd_api *api, const struct rkd_req *req,
			struct rkd_resp *resp)
{
	struct rkd_msg m = {.kind = RKD_MSG_POLICY_SET, .who = &req->who};
	if (rkd_policy_req_parse(req->body, req->body_len, &m.policy, &m.verr)) {
		rkd_resp_error(resp, m.verr.e.code, m.verr.field, "%s", m.verr.e.msg);
		return;
	}
	rkd_sched_call(api->sched, &m);
	rkd_resp_from_msg(resp, &m);
}
