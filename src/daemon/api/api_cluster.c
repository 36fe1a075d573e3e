/* /v1/nodes and /v1/cluster: the nodes with their allocation, and the whole cluster. */
#include "daemon/api/api.h"

#include <string.h>

static void simple(const struct rkd_api *api, const struct rkd_req *req, struct rkd_resp *resp,
		   enum rkd_msg_kind kind)
{
	static const char *const no_args[] = {NULL};
	struct rkd_verr v;
	if (rkd_req_check_args(req, no_args, &v)) {
		rkd_resp_error(resp, v.e.code, v.field, "%s", v.e.msg);
		return;
	}
	struct rkd_msg m = {.kind = kind, .who = &req->who};
	rkd_sched_call(api->sched, &m);
	rkd_resp_from_msg(resp, &m);
}

void rkd_api_nodes(const struct rkd_api *api, const struct rkd_req *req, struct rkd_resp *resp)
{
	simple(api, req, resp, RKD_MSG_NODES);
}

void rkd_api_cluster(const struct rkd_api *api, const struct rkd_req *req, struct rkd_resp *resp)
{
	simple(api, req, resp, RKD_MSG_CLUSTER);
}
