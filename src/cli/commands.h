/*
 * The `rubick` command's subcommands, one file each (cmd_<name>.c). Each takes
 * argc/argv starting at the subcommand name and returns the process exit code.
 */
#ifndef RUBICK_CLI_COMMANDS_H
#define RUBICK_CLI_COMMANDS_H

/* Exit codes every subcommand uses. */
enum {
	RK_EXIT_OK = 0,
	RK_EXIT_FAILURE = 1,  /* the command ran and failed (bad input file, infeasible, ...) */
	RK_EXIT_USAGE = 2,    /* bad command line */
	RK_EXIT_SERVER = 3,   /* daemon unreachable or answered with a server error */
	RK_EXIT_NOTFOUND = 4, /* the named job, model or node does not exist */
};

struct rk_command {
	const char *name;
	const char *summary;
	int (*run)(int argc, char **argv);
};

/* The table lives in main.c; NULL-terminated. */
extern const struct rk_command rk_commands[];

#endif
