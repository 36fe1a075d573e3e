/*
 * Shell-like splitting of a launch command into words, as POSIX sh does for
 * quoting only (XCU 2.2): blanks separate words; '...' is literal; "..." keeps
 * blanks and honours \" \\ \$ \` and backslash-newline; an unquoted backslash
 * quotes the next character and backslash-newline joins lines; an unquoted '#'
 * at the start of a word starts a comment to the end of the line. No expansion:
 * "$NGPUS" stays a literal word, so a flag value that still holds a variable is
 * reported rather than guessed.
 */
#include "model/launch_internal.h"

#include <stdlib.h>
#include <string.h>

static int push(struct lx_words *w, char *text, int line, int col, struct rk_error *err,
		const char *src)
{
	if (w->n == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 64;
		if (cap > LX_MAX_WORDS)
			return rk_error_set(err, RK_ERANGE, "%s:%d:%d: more than %d words", src, line,
					    col, LX_MAX_WORDS);
		struct lx_word *grown = realloc(w->words, cap * sizeof(*grown));
		if (!grown)
			return rk_error_set(err, RK_ENOMEM, "%s: out of memory", src);
		w->words = grown;
		w->cap = cap;
	}
	w->words[w->n++] = (struct lx_word){text, line, col};
	return 0;
}

void lx_words_fini(struct lx_words *w)
{
	free(w->arena);
	free(w->words);
	memset(w, 0, sizeof(*w));
}

int lx_split(const char *cmd, const char *src, struct lx_words *w, struct rk_error *err)
{
	memset(w, 0, sizeof(*w));
	size_t len = strlen(cmd);
	if (len > LX_MAX_CMD)
		return rk_error_set(err, RK_ERANGE, "%s: command longer than %d bytes", src,
				    LX_MAX_CMD);
	/* Every word is at most as long as the command; words never overlap. */
	w->arena = malloc(len + 1 + len / 2 + 2);
	if (!w->arena)
		return rk_error_set(err, RK_ENOMEM, "%s: out of memory", src);
	char *out = w->arena;
	int line = 1, col = 1;
	size_t i = 0;
	int rc = 0;
#define ADVANCE()                                                                                  \
	do {                                                                                       \
		if (cmd[i] == '\n') {                                                              \
			line++;                                                                    \
			col = 1;                                                                   \
		} else {                                                                           \
			col++;                                                                     \
		}                                                                                  \
		i++;                                                                               \
	} while (0)
	while (i < len) {
		char c = cmd[i];
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
			ADVANCE();
			continue;
		}
		if (c == '\\' && i + 1 < len && cmd[i + 1] == '\n') {
			ADVANCE();
			ADVANCE();
			continue;
		}
		if (c == '#') {
			while (i < len && cmd[i] != '\n')
				ADVANCE();
			continue;
		}
		/* A word starts here. */
		int wline = line, wcol = col;
		char *start = out;
		while (i < len) {
			c = cmd[i];
			if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
				break;
			if (c == '\\') {
				ADVANCE();
				if (i < len) {
					if (cmd[i] != '\n')
						*out++ = cmd[i];
					ADVANCE();
				}
				continue;
			}
			if (c == '\'' || c == '"') {
				int qline = line, qcol = col;
				char q = c;
				ADVANCE();
				while (i < len && cmd[i] != q) {
					if (q == '"' && cmd[i] == '\\' && i + 1 < len &&
					    strchr("\"\\$`\n", cmd[i + 1])) {
						ADVANCE();
						if (cmd[i] != '\n')
							*out++ = cmd[i];
						ADVANCE();
						continue;
					}
					*out++ = cmd[i];
					ADVANCE();
				}
				if (i >= len) {
					rc = rk_error_set(err, RK_EINVAL,
							  "%s:%d:%d: unterminated %c quote", src, qline,
							  qcol, q);
					goto fail;
				}
				ADVANCE();
				continue;
			}
			*out++ = c;
			ADVANCE();
		}
		*out++ = '\0';
		if ((rc = push(w, start, wline, wcol, err, src)))
			goto fail;
	}
#undef ADVANCE
	return 0;
fail:
	lx_words_fini(w);
	return rc;
}
