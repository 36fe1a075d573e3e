/*
 * What `rubick queue` shares with Slurm's squeue: job state names (long and
 * short), squeue's TIME, host lists compressed as n[1-3], and the -o/--format
 * language (%i %j %u %T %t %M %V %S %e %D %N %b %r %R and rubick's %{name}),
 * with squeue's widths: `%.10i` right-justified, `%-20j` or `%20j` left.
 * Nothing here prints to stderr or exits; errors come back as a message.
 */
#ifndef RUBICK_CLI_SQUEUE_H
#define RUBICK_CLI_SQUEUE_H

#include <stddef.h>
#include <stdio.h>

/* rubick's job states, in the order the API lists them (pending .. cancelled). */
#define RK_SQ_N_STATES 6

/* The i-th rubick state name ("pending"), NULL past the last. */
const char *rk_sq_state_name(int i);

/* squeue's long ("PENDING") and short ("PD") names of a rubick state; `state` itself if unknown. */
const char *rk_sq_state_long(const char *state);
const char *rk_sq_state_short(const char *state);

/* The rubick state a -t item names (rubick, long or short name, any case); NULL when none. */
const char *rk_sq_state_parse(const char *word);

/* A duration as squeue's TIME: M:SS, H:MM:SS or D-HH:MM:SS ("0:00" when <= 0); returns buf. */
const char *rk_sq_time(long long ms, char *buf, size_t cap);

/*
 * The `n` host names compressed as Slurm writes them: names that differ only
 * in a trailing number of the same width become prefix[a-b,c] ("n[1-3,5]"),
 * groups in order of first appearance, duplicates dropped. 0 and buf, or
 * -1 when buf is too small (buf then holds a cut but terminated list).
 */
int rk_sq_hostlist(const char *const *names, int n, char *buf, size_t cap);

/* What one format field prints. */
enum rk_sq_key {
	RK_SQ_TEXT,      /* literal text between fields */
	RK_SQ_ID,        /* %i */
	RK_SQ_NAME,      /* %j */
	RK_SQ_USER,      /* %u: the tenant */
	RK_SQ_STATE,     /* %T */
	RK_SQ_ST,        /* %t */
	RK_SQ_TIME,      /* %M: time used, 0:00 while pending */
	RK_SQ_SUBMIT,    /* %V */
	RK_SQ_START,     /* %S: the first start */
	RK_SQ_END,       /* %e */
	RK_SQ_NNODES,    /* %D */
	RK_SQ_NODELIST,  /* %N */
	RK_SQ_GPUS,      /* %b: GPUs requested */
	RK_SQ_REASON,    /* %r */
	RK_SQ_NL_REASON, /* %R: node list, or (reason) without one */
	RK_SQ_PLAN,      /* %{plan}: the full plan, never cut */
	RK_SQ_ALLOC,     /* %{alloc_gpus}: GPUs held */
	RK_SQ_GPU_IDS,   /* %{gpu_ids} */
	RK_SQ_RESTARTS,  /* %{restarts} */
	RK_SQ_ITERS,     /* %{iters}: done/total */
};

#define RK_SQ_MAX_FIELDS 64
#define RK_SQ_TEXT_MAX   64

struct rk_sq_field {
	enum rk_sq_key key;
	int width;                 /* minimum width; 0 = as wide as the value */
	int right;                 /* '.': right-justified */
	char text[RK_SQ_TEXT_MAX]; /* RK_SQ_TEXT: the literal */
};

struct rk_sq_format {
	int n;
	struct rk_sq_field f[RK_SQ_MAX_FIELDS];
};

/* The default columns: JOBID NAME USER ST TIME NODES GPUS ALLOC_GPUS PLAN NODELIST(REASON). */
#define RK_SQ_DEFAULT_FORMAT "%.8i %-16j %-10u %.2t %.10M %.5D %.4b %.10{alloc_gpus} %-20{plan} %R"

/*
 * Parse `fmt` into OUT: *f. 0, or -1 with a message naming the bad field and
 * its position in why (e.g. "'%Q' at 4 is not a field"); *f is untouched then.
 */
int rk_sq_format_parse(const char *fmt, struct rk_sq_format *f, char *why, size_t cap);

/* One job as the format sees it; strings may be NULL or "" (printed as squeue does). */
struct rk_sq_job {
	long long id;
	const char *name, *user, *state;       /* state: rubick's word ("pending") */
	long long submit_ms, start_ms, end_ms; /* since the epoch; < 0: none */
	int gpus, alloc_gpus, n_nodes;
	const char *nodelist; /* compressed (rk_sq_hostlist) */
	const char *reason;   /* squeue's %r (Resources, JobHeldUser, ...); NULL: "None" */
	const char *plan, *gpu_ids;
	int restarts;
	double iters_done, iters;
};

/* The header line of `f` (no newline) on out. */
void rk_sq_print_header(const struct rk_sq_format *f, FILE *out);

/* The line of job `j` at time now_ms (no newline) on out. */
void rk_sq_print_job(const struct rk_sq_format *f, const struct rk_sq_job *j, long long now_ms,
                     FILE *out);

#endif
