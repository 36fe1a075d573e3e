/*
 * squeue's names for rubick's job states and its TIME (squeue(1), "JOB STATE
 * CODES"). restarting, rubick's stop-and-relaunch on a new allocation, reads
 * as Slurm's RESIZING (RS): the job keeps its place and changes its size.
 */
#include "cli/squeue.h"

#include <stdio.h>
#include <strings.h>

static const struct {
	const char *rubick, *lng, *shrt;
} states[RK_SQ_N_STATES] = {
    {"pending", "PENDING", "PD"}, {"running", "RUNNING", "R"}, {"restarting", "RESIZING", "RS"},
    {"done", "COMPLETED", "CD"},  {"failed", "FAILED", "F"},   {"cancelled", "CANCELLED", "CA"},
};

const char *rk_sq_state_name(int i)
{
	return i >= 0 && i < RK_SQ_N_STATES ? states[i].rubick : NULL;
}

static int find(const char *state)
{
	for (int i = 0; i < RK_SQ_N_STATES; i++)
		if (state && !strcasecmp(state, states[i].rubick))
			return i;
	return -1;
}

const char *rk_sq_state_long(const char *state)
{
	int i = find(state);
	return i < 0 ? state : states[i].lng;
}

const char *rk_sq_state_short(const char *state)
{
	int i = find(state);
	return i < 0 ? state : states[i].shrt;
}

const char *rk_sq_state_parse(const char *word)
{
	for (int i = 0; i < RK_SQ_N_STATES; i++)
		if (!strcasecmp(word, states[i].rubick) || !strcasecmp(word, states[i].lng) ||
		    !strcasecmp(word, states[i].shrt))
			return states[i].rubick;
	return NULL;
}

const char *rk_sq_time(long long ms, char *buf, size_t cap)
{
	long long s = ms > 0 ? ms / 1000 : 0;
	long long d = s / 86400, h = s % 86400 / 3600, m = s % 3600 / 60, sec = s % 60;
	if (d)
		snprintf(buf, cap, "%lld-%02lld:%02lld:%02lld", d, h, m, sec);
	else if (h)
		snprintf(buf, cap, "%lld:%02lld:%02lld", h, m, sec);
	else
		snprintf(buf, cap, "%lld:%02lld", m, sec);
	return buf;
}
