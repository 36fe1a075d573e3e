/*
 * The `rubick` command's subcommands, one file each (cmd_<name>.c). Each takes
 * argc/argv starting at the subcommand name and returns the process exit code.
 */
#ifndef RUBICK_CLI_COMMANDS_H
#define RUBICK_CLI_COMMANDS_H

/*
 * Exit codes every subcommand uses: the one table, printed by `rubick --help`
 * and docs/cli.md "Exit status", which every subcommand's --help refers to
 * (RK_EXIT_HELP). The line between 1 and 2 is getopt's: 2 when the command
 * line itself is wrong, whatever the files say (and a token rubickd refuses,
 * HTTP 401); 1 when it is well formed and what it names (a file, or a spec
 * read as one) is wrong, or the work fails or is refused; 3 when rubickd
 * cannot be reached or fails (HTTP 5xx); 4 when what it names (a job, a zoo
 * model, a node) does not exist (HTTP 404). tests/cli/test_cli_exit_codes.sh
 * drives every subcommand into each class.
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

/* The last lines of every subcommand's --help: the table above, as `rubick --help` has it. */
#define RK_EXIT_HELP                                                                               \
	"exit status (every command, `rubick --help`): 0 success, 1 failure (an input or\n"        \
	"  the work), 2 usage, 3 rubickd unreachable or server error, 4 no such job, model\n"      \
	"  or node\n"

struct rk_command {
	const char *name;
	const char *summary;
	int (*run)(int argc, char **argv);
};

/* The table lives in main.c; NULL-terminated. */
extern const struct rk_command rk_commands[];

#endif
