/*
 * The `rubick` command's subcommands, one file each (cmd_<name>.c). Each takes
 * argc/argv starting at the subcommand name and returns the process exit code.
 */
#ifndef RUBICK_CLI_COMMANDS_H
#define RUBICK_CLI_COMMANDS_H

/*
 * Exit codes every subcommand uses (`rubick --help`, docs/sim.md "Exit
 * codes"). The line between 1 and 2 is getopt's: 2 when the command line
 * itself is wrong, whatever the files say; 1 when it is well formed and what
 * it names (a file, or a spec read as one) is wrong, or the work fails.
 */
enum {
	RK_EXIT_OK = 0,
	RK_EXIT_FAILURE = 1,  /* an input (trace, cluster, zoo, oracle, ...) is missing, unreadable,
	                       * malformed or empty; the run or writing its outputs failed */
	RK_EXIT_USAGE = 2,    /* bad command line: unknown option, missing or malformed value,
	                       * unknown policy or policy option, empty comma-list item */
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
