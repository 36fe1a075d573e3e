/* `rubick`: the command-line front end; dispatches to one file per subcommand. */
#include "cli/commands.h"

#include <stdio.h>
#include <string.h>

int rk_cmd_model(int argc, char **argv);
int rk_cmd_plan(int argc, char **argv);
int rk_cmd_curve(int argc, char **argv);
int rk_cmd_demo(int argc, char **argv);
int rk_cmd_sim(int argc, char **argv);
int rk_cmd_trace(int argc, char **argv);
int rk_cmd_report(int argc, char **argv);
int rk_cmd_zoo(int argc, char **argv);
int rk_cmd_launch(int argc, char **argv);
int rk_cmd_submit(int argc, char **argv);
int rk_cmd_queue(int argc, char **argv);
int rk_cmd_show(int argc, char **argv);
int rk_cmd_cancel(int argc, char **argv);
int rk_cmd_nodes(int argc, char **argv);
int rk_cmd_policy(int argc, char **argv);
int rk_cmd_logs(int argc, char **argv);
int rk_cmd_events(int argc, char **argv);
int rk_cmd_history(int argc, char **argv);
int rk_cmd_update(int argc, char **argv);
int rk_cmd_hold(int argc, char **argv);
int rk_cmd_release(int argc, char **argv);
int rk_cmd_requeue(int argc, char **argv);

const struct rk_command rk_commands[] = {
	{"model", "fit and validate the performance model (rubick model --help)", rk_cmd_model},
	{"plan", "list every feasible plan of a model on a placement, best first", rk_cmd_plan},
	{"curve", "a model's resource sensitivity curve (best plan per GPU count)", rk_cmd_curve},
	{"demo", "print the sensitivity curves of all bundled models", rk_cmd_demo},
	{"sim", "replay a job trace on a simulated cluster under one or more policies", rk_cmd_sim},
	{"report", "sweep figures across runs of `rubick sim --out` (load, arrival rate, GPUs)",
	 rk_cmd_report},
	{"trace", "read a job trace (any format): counts, mapped models, or native CSV", rk_cmd_trace},
	{"zoo", "list, show or check model zoo entries (docs/zoo.md)", rk_cmd_zoo},
	{"launch", "read a job's launch command into model, plan and global batch", rk_cmd_launch},
	{"submit", "submit a job to rubickd (a JSON spec file or flags)", rk_cmd_submit},
	{"queue", "list rubickd's jobs, like squeue", rk_cmd_queue},
	{"show", "one rubickd job with its allocation and plan history", rk_cmd_show},
	{"cancel", "cancel rubickd jobs", rk_cmd_cancel},
	{"update", "change a rubickd job's request (GPUs, plan), like scontrol update", rk_cmd_update},
	{"hold", "keep pending rubickd jobs from being scheduled, like scontrol hold", rk_cmd_hold},
	{"release", "lift the hold of rubickd jobs, like scontrol release", rk_cmd_release},
	{"requeue", "checkpoint running rubickd jobs and put them back pending", rk_cmd_requeue},
	{"logs", "a rubickd job's output (--follow to keep reading)", rk_cmd_logs},
	{"history", "ended rubickd jobs, like sacct (--csv, --json, --since, --until)", rk_cmd_history},
	{"events", "a rubickd job's events: launches, exits, reconfigurations", rk_cmd_events},
	{"nodes", "rubickd's nodes and what is allocated on them", rk_cmd_nodes},
	{"policy", "show or change rubickd's scheduling policy", rk_cmd_policy},
	{NULL, NULL, NULL},
};

static void usage(FILE *out)
{
	fprintf(out, "usage: rubick COMMAND [ARGS...]\n\n"
		     "rubick: a white-box, reconfigurable deep-learning cluster scheduler.\n\n"
		     "commands:\n");
	for (const struct rk_command *c = rk_commands; c->name; c++)
		fprintf(out, "  %-10s %s\n", c->name, c->summary);
	fprintf(out, "\n`rubick COMMAND --help` describes one command.\n\n"
		     "exit status (every command):\n"
		     "  0  success\n"
		     "  1  failure: an input (trace, cluster, zoo, oracle, ...) is missing, unreadable,\n"
		     "     malformed or empty, or the work or writing its outputs failed\n"
		     "  2  usage: unknown option, missing or malformed value, unknown policy or\n"
		     "     policy option, an empty item in a comma list, no usable token (HTTP 401)\n"
		     "  3  rubickd unreachable or answered with a server error (daemon commands)\n"
		     "  4  the named job, model or node does not exist\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return RK_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return RK_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		puts("rubick " RK_VERSION);
		return RK_EXIT_OK;
	}
	for (const struct rk_command *c = rk_commands; c->name; c++)
		if (!strcmp(argv[1], c->name))
			return c->run(argc - 1, argv + 1);
	fprintf(stderr, "rubick: unknown command '%s' (try `rubick --help`)\n", argv[1]);
	return RK_EXIT_USAGE;
}
