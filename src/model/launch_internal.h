/* Internal to the launch-command reader: the word splitter (launch_shell.c). */
#ifndef RUBICK_MODEL_LAUNCH_INTERNAL_H
#define RUBICK_MODEL_LAUNCH_INTERNAL_H

#include "rubick/error.h"

#include <stddef.h>

/* Bounds on what a launch command may be: a job's command line, not a script dump. */
#define LX_MAX_CMD (1 << 20)
#define LX_MAX_WORDS 65536

struct lx_word {
	char *text;    /* unquoted text, NUL-terminated, in the arena */
	int line, col; /* 1-based position of the word's first character */
};

struct lx_words {
	struct lx_word *words;
	size_t n, cap;
	char *arena; /* owns every word's text */
};

/*
 * Split `cmd` into words (quoting rules in launch_shell.c). OUT: *w, to be
 * released with lx_words_fini. Errors: "SRC:L:C: unterminated ' quote".
 */
int lx_split(const char *cmd, const char *src, struct lx_words *w, struct rk_error *err);

void lx_words_fini(struct lx_words *w);

#endif
