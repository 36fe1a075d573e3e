/*
 * Warnings of `rubick sim` (sim_warn.h). A researcher comparing sjf-bsbf
 * with sjf, or antman with fifo, must learn from the run itself, not from
 * matching rows, that one of them could not act: the policy states what it
 * needs (rk_policy_ops.needs) and this file compares that with the input.
 */
#include "cli/sim_warn.h"

#include "rubick/policy.h"

static int count_guaranteed(const struct rk_job *jobs, int n)
{
	int g = 0;
	for (int i = 0; i < n; i++)
		g += jobs[i].guaranteed != 0;
	return g;
}

/*
 * Jobs whose run time the reader estimated although the trace names their
 * application's batch: Sia's and Pollux's simulators run these to the
 * validation target instead (docs/oracle.md, "The modelling difference").
 */
static size_t count_estimated(const struct rk_trace *t)
{
	size_t n = 0;
	for (size_t i = 0; i < t->n; i++)
		n += t->jobs[i].duration_estimated && t->jobs[i].source_batch > 0;
	return n;
}

int rk_cli_sim_warn(const struct rk_cli_sim_warn_in *in, FILE *f)
{
	int said = 0;
	int guaranteed = count_guaranteed(in->jobs, in->n_jobs);
	for (int i = 0; i < in->n_pols; i++) {
		const struct rk_cli_policy *p = &in->pols[i];
		const char *as = p->ops->without ? p->ops->without : "a simpler policy";
		if ((p->ops->needs & RK_POLICY_NEEDS_SHARING) && !in->sharing) {
			fprintf(f, "rubick sim: warning: %s without --sharing on never shares a GPU: "
			        "it runs as %s (add --sharing on)\n", p->name, as);
			said++;
		}
		if ((p->ops->needs & RK_POLICY_NEEDS_GUARANTEED) && guaranteed == 0) {
			fprintf(f, "rubick sim: warning: %s acts only on guaranteed jobs and %s has "
			        "none: it runs as %s (use a trace that marks guaranteed jobs; "
			        "docs/trace-format.md)\n", p->name, in->trace_path, as);
			said++;
		}
	}
	size_t est = in->sia_target ? 0 : count_estimated(in->trace);
	if (est) {
		fprintf(f, "rubick sim: warning: %s: %zu %s job(s) give no run time and run the "
		        "reader's estimate, not their validation target as in Sia's and Pollux's "
		        "simulators (add --job-length sia-target; docs/oracle.md)\n",
		        in->trace_path, est, in->trace->format);
		said++;
	}
	return said;
}

void rk_cli_sim_history_note(const struct rk_trace *t, const char *path, FILE *f)
{
	if (!rk_trace_format_is_history(t->format))
		return;
	if (t->n_steps || t->n_unfinished || t->n_unstarted)
		fprintf(f, "rubick sim: %s: not replayed: %zu unfinished job(s) (pending or running "
		        "when exported), %zu that never ran; %zu job step(s) folded into their "
		        "jobs\n", path, t->n_unfinished, t->n_unstarted, t->n_steps);
	double bb_h = 0, all_h = 0;
	size_t bb = rk_trace_black_box(t, &bb_h, &all_h);
	fprintf(f, "rubick sim: %s: black boxes: %zu of %zu job(s), %.1f%% of %.2f GPU-hours at "
	        "the request (no zoo model: their run time replayed through a stand-in; "
	        "docs/replay.md)\n", path, bb, t->n, all_h > 0 ? 100.0 * bb_h / all_h : 0.0, all_h);
}
