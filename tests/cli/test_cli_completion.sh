#!/usr/bin/env bash
# The shell completion (contrib/completion) and rubick(1) keep up with the
# commands: every subcommand `rubick --help` lists completes and is in the man
# page; options, policies and trace formats complete from the commands' own
# --help (compared with what those print, not with a list written here); the
# zsh function offers the same (run with stand-ins for zsh's completion builtins,
# which only exist inside a completion widget); install-completion.sh installs
# all four files.
# Usage: test_cli_completion.sh PATH/TO/rubick
set -uo pipefail
R=$1
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bin=$work/bin
mkdir -p "$bin" && ln -s "$(realpath "$R")" "$bin/rubick"
export PATH=$bin:$PATH

cmds=$(rubick --help | awk '/^commands:/ { on = 1; next } on && /^$/ { exit } on && /^  [a-z]/ { print $1 }')
[ "$(echo "$cmds" | wc -l)" -ge 15 ] || fail "rubick --help lists only: $cmds"
pols=$(rubick sim --help | awk '/^policies:/ { on = 1; next } on && /^$/ { exit } on && /^  [a-z]/ { print $1 }')
fmts=$(rubick sim --help | awk '/^trace formats:/ { on = 1; next } on && /^$/ { exit } on && /^  [a-z]/ { print $1 }')

# bash: COMP_WORDS as bash fills them for LINE (a trailing space: a new empty word)
# shellcheck source=/dev/null
. "$src/contrib/completion/rubick.bash"
complete_bash() {
	read -ra COMP_WORDS <<<"$1"
	[[ $1 == *" " ]] && COMP_WORDS+=("")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMPREPLY=()
	_rubick
	printf '%s\n' "${COMPREPLY[@]}" | sort
}
got=$(complete_bash "rubick ")
[ "$got" = "$(echo "$cmds" | sort)" ] || fail "bash: commands: got '$got', want '$cmds'"
for c in $cmds; do
	grep -q "^\.B rubick $c\b" "$src/docs/rubick.1" || fail "rubick(1) has no entry for '$c'"
done
got=$(complete_bash "rubick sim --")
want=$(rubick sim --help 2>&1 | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u)
[ "$got" = "$want" ] || fail "bash: sim options differ from sim --help's: $(diff <(echo "$got") <(echo "$want") | head -5)"
echo "$got" | grep -qx -- "--policy" || fail "bash: --policy missing from sim options"
got=$(complete_bash "rubick sim --policy ")
[ "$got" = "$( (echo all; echo "$pols") | sort)" ] || fail "bash: policies: got '$got'"
got=$(complete_bash "rubick sim --policy fifo,tir")
[ "$got" = "fifo,tiresias" ] || fail "bash: the item after a comma: got '$got'"
got=$(complete_bash "rubick sim --format ")
[ "$got" = "$( (echo auto; echo "$fmts") | sort)" ] || fail "bash: trace formats: got '$got'"
got=$(complete_bash "rubick model validate --tra")
echo "$got" | grep -qx -- "--traces" || fail "bash: model validate's own options: got '$got'"
got=$(complete_bash "rubick queue --")
for o in --noheader --states --user --format --tenant --all --limit --json; do
	echo "$got" | grep -qx -- "$o" || fail "bash: queue option $o missing: $got"
done
got=$(complete_bash "rubick queue --states R,pe")
[ "$got" = "R,pending" ] || fail "bash: queue --states after a comma: got '$got'"
got=$(complete_bash "rubick queue -t C")
[ "$got" = "$(printf 'CA\nCD')" ] || fail "bash: queue -t: got '$got'"
got=$(complete_bash "rubick queue --format ")
[ -z "$got" ] || fail "bash: queue --format offers trace formats: '$got'"
got=$(complete_bash "rubick zoo ")
[ "$got" = "$(printf 'check\nlist\nshow')" ] || fail "bash: zoo subcommands: got '$got'"

# zsh (when installed: scripts/install-deps.sh installs it)
if command -v zsh >/dev/null; then
	zsh -n "$src/contrib/completion/_rubick" || fail "zsh: _rubick does not parse"
	zout=$(zsh -f -c '
		compdef() { :; }
		_describe() { print -l -- ${(P)4}; }
		compadd() { if [[ $1 == -a ]]; then print -l -- ${(P)2}; else print -l -- "$@"; fi; }
		_values() { shift 3; print -l -- "$@"; }  # -s , DESCRIPTION
		_files() { print -- FILES; }
		source "$1/contrib/completion/_rubick"
		print -- "== commands"; words=(rubick ""); CURRENT=2; PREFIX=; _rubick
		print -- "== sim"; words=(rubick sim --); CURRENT=3; PREFIX=--; _rubick
		print -- "== policy"; words=(rubick sim --policy ""); CURRENT=4; PREFIX=; _rubick
		print -- "== format"; words=(rubick sim --format ""); CURRENT=4; PREFIX=; _rubick
		print -- "== trace"; words=(rubick sim --trace ""); CURRENT=4; PREFIX=; _rubick
		print -- "== qstates"; words=(rubick queue -t ""); CURRENT=4; PREFIX=; _rubick
		print -- "== qformat"; words=(rubick queue --format ""); CURRENT=4; PREFIX=; _rubick
	' _ "$src" 2>&1)
	section() { echo "$zout" | awk -v s="== $1" '$0 == s { on = 1; next } /^== / { on = 0 } on' | sort; }
	got=$(section commands | cut -d: -f1)
	[ "$got" = "$(echo "$cmds" | sort)" ] || fail "zsh: commands: got '$got'"
	section commands | grep -q '^sim:replay a job trace' || fail "zsh: commands lack their descriptions"
	[ "$(section sim)" = "$want" ] || fail "zsh: sim options differ from sim --help's"
	[ "$(section policy)" = "$( (echo all; echo "$pols") | sort)" ] || fail "zsh: policies: $(section policy | head -3)"
	[ "$(section format)" = "$( (echo auto; echo "$fmts") | sort)" ] || fail "zsh: formats"
	[ "$(section trace)" = FILES ] || fail "zsh: --trace completes files"
	section qstates | grep -qx PD || fail "zsh: queue -t: $(section qstates | head -3)"
	[ -z "$(section qformat)" ] || fail "zsh: queue --format offers: $(section qformat | head -3)"
else
	echo "zsh not installed: its completion not exercised"
fi

# rubick(1) renders without a groff warning
if command -v groff >/dev/null; then
	w=$(groff -man -Tutf8 -ww -z "$src/docs/rubick.1" 2>&1)
	[ -z "$w" ] || fail "rubick(1): groff warns: $w"
fi

bash "$src/scripts/install-completion.sh" "$work/root" >/dev/null || fail "install-completion.sh failed"
for f in usr/share/bash-completion/completions/rubick usr/share/zsh/vendor-completions/_rubick \
	usr/local/share/man/man1/rubick.1 usr/local/share/man/man8/rubickd.8; do
	[ -s "$work/root/$f" ] || fail "install-completion.sh did not install /$f"
done
[ "$fails" -eq 0 ] && echo "ok: $(echo "$cmds" | wc -l) commands, $(echo "$pols" | wc -l) policies, $(echo "$fmts" | wc -l) formats complete in bash${zout:+ and zsh}"
exit "$fails"
