/* Files and the batch script of the Slurm engine; see engine_slurm_files.h. */
#include "daemon/engine/slurm/engine_slurm_files.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int64_t rkd_sl_wall_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Append `s` single-quoted for sh ('\'' for each quote). */
static int sh_quote(char *buf, size_t cap, size_t *len, const char *s)
{
	for (const char *p = "'"; *p; p++)
		if (*len + 1 < cap)
			buf[(*len)++] = *p;
	for (; *s; s++) {
		const char *piece = *s == '\'' ? "'\\''" : NULL;
		size_t k = piece ? 4 : 1;
		if (*len + k + 2 >= cap)
			return RK_ERANGE;
		if (piece)
			memcpy(buf + *len, piece, k);
		else
			buf[*len] = *s;
		*len += k;
	}
	buf[(*len)++] = '\'';
	buf[*len] = '\0';
	return 0;
}

/* Append printf output to buf (cap bytes, *len used). */
static int put(char *buf, size_t cap, size_t *len, const char *f, ...)
	__attribute__((format(printf, 4, 5)));
static int put(char *buf, size_t cap, size_t *len, const char *f, ...)
{
	va_list ap;
	va_start(ap, f);
	int n = vsnprintf(buf + *len, cap - *len, f, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= cap - *len)
		return RK_ERANGE;
	*len += (size_t)n;
	return 0;
}

/*
 * The rendezvous part of env.sh (torchrun's variables): MASTER_ADDR/PORT and
 * WORLD_SIZE for all nodes, and per node, chosen by SLURMD_NODENAME (which
 * slurmstepd sets for every task: each node's srun task sources env.sh
 * again), NODE_RANK (= GROUP_RANK), LOCAL_WORLD_SIZE and RUBICK_RANK_BASE,
 * the global rank of the node's first process.
 */
static int put_ranks(char *buf, size_t cap, size_t *len, const struct rkd_sl_ranks *rk)
{
	int world = 0, ret = 0;
	for (int i = 0; i < rk->n; i++)
		world += rk->gpus[i] > 0 ? rk->gpus[i] : 1; /* a GPU-less node still runs one rank */
	ret = put(buf, cap, len, "export RUBICK_NNODES=%d WORLD_SIZE=%d MASTER_PORT=%d\n"
		  "export MASTER_ADDR=", rk->n, world, rk->master_port) ||
	      sh_quote(buf, cap, len, rk->master_addr ? rk->master_addr : "127.0.0.1") ||
	      put(buf, cap, len, "\nRUBICK_NODE_GPUS=");
	for (int i = 0; i < rk->n && !ret; i++)
		ret = put(buf, cap, len, "%s%d", i ? "," : "", rk->gpus[i]);
	ret = ret || put(buf, cap, len, "\ncase \"${SLURMD_NODENAME:-}\" in\n");
	for (int i = 0, base = 0; i < rk->n && !ret; i++) {
		int local = rk->gpus[i] > 0 ? rk->gpus[i] : 1;
		ret = sh_quote(buf, cap, len, rk->name[i]) ||
		      put(buf, cap, len, ") NODE_RANK=%d RUBICK_RANK_BASE=%d LOCAL_WORLD_SIZE=%d ;;\n",
			  i, base, local);
		base += local;
	}
	/* Not one of the run's nodes (no Slurm task): the first node's share. */
	ret = ret || put(buf, cap, len, "*) NODE_RANK=0 RUBICK_RANK_BASE=0 LOCAL_WORLD_SIZE=%d ;;\n"
			 "esac\nexport RUBICK_NODE_GPUS NODE_RANK RUBICK_RANK_BASE LOCAL_WORLD_SIZE"
			 " GROUP_RANK=\"$NODE_RANK\"\n",
			 rk->n && rk->gpus[0] > 0 ? rk->gpus[0] : 1);
	return ret ? RK_ERANGE : 0;
}

/* Owner of the job user's files: (uid_t)-1 when it is rubickd's own identity. */
static void job_owner(const struct rkd_launch *ln, uid_t *uid, gid_t *gid)
{
	const struct rkd_ident *id = ln->ident;
	int other = id && (id->uid != geteuid() || id->gid != getegid());
	*uid = other ? id->uid : (uid_t)-1;
	*gid = other ? id->gid : (gid_t)-1;
}

int rkd_sl_job_dirs(const struct rkd_launch *ln, const char *job_dir)
{
	char ckpt[4200], work[4200], logp[4200];
	uid_t uid;
	gid_t gid;
	job_owner(ln, &uid, &gid);
	if (rkd_path_fmt(ckpt, sizeof(ckpt), "%s/ckpt", job_dir) ||
	    rkd_path_fmt(work, sizeof(work), "%s/work", job_dir) ||
	    rkd_path_fmt(logp, sizeof(logp), "%s/log", job_dir))
		return RK_ERANGE;
	if (rkd_dir_ensure(job_dir, uid == (uid_t)-1 ? 0700 : 0711, (uid_t)-1, (gid_t)-1) ||
	    rkd_dir_ensure(ckpt, 0700, uid, gid) || rkd_dir_ensure(work, 0700, uid, gid) ||
	    rkd_file_ensure(logp, 0600, uid, gid))
		return RK_EIO;
	return 0;
}

/* env.sh: what changes between runs of the same Slurm job (gotcha 6). */
int rkd_sl_write_env(const struct rkd_launch *ln, const char *job_dir,
		     const struct rkd_sl_ranks *rk)
{
	char num[6][32], buf[32768], path[4200], nodelist[2048] = "";
	size_t len = 0, nl = 0;
	for (int i = 0; i < rk->n; i++)
		if (put(nodelist, sizeof(nodelist), &nl, "%s%s", i ? "," : "", rk->name[i]))
			return RK_ERANGE;
	snprintf(num[0], sizeof(num[0]), "%lld", (long long)ln->job_id);
	snprintf(num[1], sizeof(num[1]), "%d", ln->global_batch);
	snprintf(num[2], sizeof(num[2]), "%.0f", ln->iters_total);
	snprintf(num[3], sizeof(num[3]), "%d", ln->run);
	snprintf(num[4], sizeof(num[4]), "%d", ln->gpus);
	snprintf(num[5], sizeof(num[5]), "%d", ln->cpus);
	char ckpt[4200], planp[4200], fence[4200];
	rkd_path_fmt(ckpt, sizeof(ckpt), "%s/ckpt", job_dir);
	rkd_path_fmt(planp, sizeof(planp), "%s/plan", job_dir);
	rkd_path_fmt(fence, sizeof(fence), "%s/current_run", job_dir);
	const char *kv[][2] = {
		{"RUBICK_PLAN", ln->plan_text},   {"RUBICK_PLAN_FILE", planp},
		{"RUBICK_JOB_ID", num[0]},        {"RUBICK_URL", ln->url},
		{"RUBICK_GLOBAL_BATCH", num[1]},  {"RUBICK_ITERS", num[2]},
		{"RUBICK_RUN", num[3]},           {"RUBICK_ALLOC", ln->alloc_text},
		{"RUBICK_CKPT_DIR", ckpt},        {"RUBICK_GPUS", num[4]},
		{"RUBICK_CPUS", num[5]},          {"RUBICK_JOB_TOKEN", ln->job_token},
		{"RUBICK_SLURM_NODES", nodelist}, {"RUBICK_FENCE_FILE", fence},
	};
	for (size_t i = 0; i < sizeof(kv) / sizeof(kv[0]); i++) {
		if (put(buf, sizeof(buf), &len, "export %s=", kv[i][0]) ||
		    sh_quote(buf, sizeof(buf), &len, kv[i][1] ? kv[i][1] : "") ||
		    put(buf, sizeof(buf), &len, "\n"))
			return RK_ERANGE;
	}
	if (put_ranks(buf, sizeof(buf), &len, rk))
		return RK_ERANGE;
	char plan_line[512];
	snprintf(plan_line, sizeof(plan_line), "%s\n", ln->plan_text);
	uid_t uid;
	gid_t gid;
	job_owner(ln, &uid, &gid);
	if (rkd_path_fmt(path, sizeof(path), "%s/env.sh", job_dir) ||
	    rkd_write_atomic_owned(planp, plan_line, uid, gid) ||
	    rkd_write_atomic_owned(path, buf, uid, gid))
		return RK_EIO;
	return 0;
}

/*
 * The local engine's wrapper: forward SIGUSR1/SIGTERM to the child $c only
 * (a trap interrupts `wait`, status > 128: wait again while it lives) and
 * exit with its status.
 */
static const char trap_part[] = "trap 'kill -USR1 $c 2>/dev/null' USR1\n"
				"trap 'kill -TERM $c 2>/dev/null' TERM\n";
/*
 * The command runs under a copy of that wrapper which leads its own session
 * and process group (setsid(1): not a group leader here, so it does not fork
 * and $! is its pid); the outer wrapper forwards the signals to it and kills
 * that whole group once it has ended: workers the command forked die with
 * their launcher even when the launcher is killed and they are reparented,
 * which proctrack/linuxproc would lose (issue 13; no cgroups: scripts/slurm-up.sh sets
 * ProctrackType=proctrack/linuxproc).
 */
#define WAIT_LOOP(after)                                                                   \
	"c=$!\n"                                                                           \
	"while :; do\n"                                                                    \
	"  wait $c; s=$?\n"                                                                \
	"  [ $s -gt 128 ] && kill -0 $c 2>/dev/null && continue\n"                         \
	"  [ $s -gt 128 ] && { wait $c; t=$?; [ $t -ne 127 ] && s=$t; }\n" after           \
	"  exit $s\n"                                                                      \
	"done\n"
static const char wait_inner[] = WAIT_LOOP("");
static const char wait_part[] = WAIT_LOOP("  kill -KILL -$c 2>/dev/null\n");
/*
 * The batch shell's own wrapper also says in Slurm's record what a checkpoint
 * exit was (issue 13): 75 after rubick asked this run for a checkpoint
 * (rubickd's ckpt_request names the run: the job cannot forge it) ends the
 * Slurm job COMPLETED with exit 0 instead of FAILED, and the job's status is
 * kept in ckpt/.exit-run-N for the engine (engine_slurm_state.c). A 75 nobody
 * in rubick asked for stays FAILED 75 (a cancel for rubick, issue 13).
 */
static const char wait_batch[] = WAIT_LOOP(
	"  kill -KILL -$c 2>/dev/null\n"
	"  if [ $s -eq 75 ] && [ \"$(cat \"$RUBICK_CKPT_REQ\" 2>/dev/null)\" = \"$RUBICK_RUN\" ]; then\n"
	"    echo 75 >\"$RUBICK_CKPT_DIR/.exit-run-$RUBICK_RUN\" && s=0\n"
	"  fi\n");

/* The inner wrapper and command, kept verbatim by a quoted here-document. */
static const char cmd_delim[] = "RUBICK_CMD_EOF";
#define CMD_FMT "RUBICK_CMD=$(cat <<'RUBICK_CMD_EOF'\n%s{ %s\n} &\n%sRUBICK_CMD_EOF\n)\n"
#define CMD_RUN "setsid /bin/sh -c \"$RUBICK_CMD\" &\n"

/* Whether `command` can go in the here-document (no line that ends it early). */
static int cmd_ok(const char *command)
{
	size_t n = strlen(cmd_delim);
	for (const char *p = command; (p = strstr(p, cmd_delim)); p += n)
		if ((p == command || p[-1] == '\n') && (p[n] == '\0' || p[n] == '\n'))
			return 0;
	return 1;
}

/*
 * Several nodes: srun starts node.sh once per node of the allocation (one task
 * each, in rubick's node order) and forwards USR1/TERM to every task; its exit
 * status is the highest of the tasks' (75 when all checkpointed). --overlap:
 * the step must not wait for CPUs the batch shell's own step holds.
 */
char *rkd_sl_make_script(const char *job_dir, const char *command)
{
	size_t cap = 4 * strlen(job_dir) + strlen(command) + 2 * sizeof(trap_part) +
		     sizeof(wait_part) + sizeof(wait_batch) + 768;
	char *s = cmd_ok(command) ? malloc(cap) : NULL;
	if (s)
		snprintf(s, cap,
			 "#!/bin/sh\n. '%s/env.sh' || exit 70\nRUBICK_CKPT_REQ='%s/ckpt_request'\n%s"
			 "if [ \"${RUBICK_NNODES:-1}\" -gt 1 ]; then\n"
			 "srun --nodes=\"$RUBICK_NNODES\" --ntasks=\"$RUBICK_NNODES\""
			 " --ntasks-per-node=1 --nodelist=\"$RUBICK_SLURM_NODES\" --overlap"
			 " --export=ALL /bin/sh '%s/node.sh' &\nelse\n" CMD_FMT CMD_RUN "fi\n%s",
			 job_dir, job_dir, trap_part, job_dir, trap_part, command, wait_inner,
			 wait_batch);
	return s;
}

int rkd_sl_write_node_script(const struct rkd_launch *ln, const char *job_dir)
{
	const char *command = ln->command;
	size_t cap = 2 * strlen(job_dir) + strlen(command) + 2 * sizeof(trap_part) +
		     2 * sizeof(wait_part) + 512;
	char *s = cmd_ok(command) ? malloc(cap) : NULL, path[4200];
	if (!s || rkd_path_fmt(path, sizeof(path), "%s/node.sh", job_dir)) {
		free(s);
		return -1;
	}
	snprintf(s, cap, "#!/bin/sh\n# one node's share of a multi-node run (srun, one task a node)\n"
		 ". '%s/env.sh' || exit 70\n%s" CMD_FMT CMD_RUN "%s", job_dir, trap_part, trap_part,
		 command, wait_inner, wait_part);
	uid_t uid;
	gid_t gid;
	job_owner(ln, &uid, &gid);
	int ret = rkd_write_atomic_owned(path, s, uid, gid);
	free(s);
	return ret;
}
