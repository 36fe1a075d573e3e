/*
 * Containment of a local run: every process a job starts ends with the run,
 * however it tried to leave (setsid, double fork, a daemon of its own), and
 * the run's GPUs are free only once none is left.
 *
 * The supervisor (supervise.c) is a child subreaper (prctl
 * PR_SET_CHILD_SUBREAPER), so a process the job orphans becomes the
 * supervisor's child instead of init's. Where cgroup v2 is mounted and
 * rubickd may create a cgroup beside its own, each run also gets a cgroup,
 * rubick-run-PID (PID: the supervisor's), which the job enters at its start
 * gate, before it runs anything: the kernel then keeps every descendant in
 * it, and one write to cgroup.kill ends them all. The supervisor records
 * the cgroup's path in RUNDIR/cgroup, so that the engine can still kill it
 * when the supervisor itself died (engine_local.c).
 *
 * Without cgroup v2 (or without the right to make one) the subreaper alone
 * contains: what it cannot catch is a process that left the job's tree
 * altogether (started through another service, such as ssh or at), and,
 * when the supervisor itself is killed, whatever the job had orphaned.
 */
#ifndef RKD_ENGINE_LOCAL_CONTAIN_H
#define RKD_ENGINE_LOCAL_CONTAIN_H

#include <stddef.h>
#include <sys/types.h>

/* Set in the supervisor's environment (by rubickd, from run_cgroup = off): no cgroup. */
#define RKD_CONTAIN_NO_CGROUP_ENV "RUBICKD_NO_RUN_CGROUP"

struct rkd_contain {
	char cgroup[512]; /* the run's cgroup folder; "" when it has none */
	char why[768];    /* why it has none, recorded in RUNDIR/cgroup */
};

/*
 * In the supervisor, before it forks the job: become a child subreaper and
 * make the run's cgroup where one can be made and use_cgroup is set (c->why
 * says why there is none). A
 * leftover cgroup of the same name, from a supervisor that died with this
 * pid, is emptied and reused.
 */
void rkd_contain_init(struct rkd_contain *c, int use_cgroup);

/* Move pid (the job, waiting at its start gate) into the run's cgroup; 0, or -1 with c->why. */
int rkd_contain_add(struct rkd_contain *c, pid_t pid);

/*
 * Once the job's main process has ended: kill every process of the run
 * (the cgroup's, then every child the subreaper holds), reap them, and
 * remove the cgroup. Returns only when nothing of the run is left; a
 * process that SIGKILL cannot end (uninterruptible sleep) keeps it
 * waiting, and is said once on log_fd after 10 s, because its GPUs are
 * not free.
 */
void rkd_contain_end(struct rkd_contain *c, int log_fd);

/*
 * For a run whose supervisor is gone: kill what is left in the cgroup
 * recorded in RUNDIR/cgroup (text as the supervisor wrote it). A recorded
 * path that is not a rubick-run cgroup under the cgroup v2 mount is
 * ignored. 0 when it had no cgroup or the cgroup is empty now, 1 when
 * processes were still there and were killed, -1 on a bad record.
 */
int rkd_contain_kill_recorded(const char *recorded);

#endif
