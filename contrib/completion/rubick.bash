# bash completion for rubick(1). Commands, options, policies and trace formats are
# read from the commands' own --help at completion time, so this file never lags
# behind them: a new flag or policy completes as soon as rubick prints it.
# Installed by scripts/install-completion.sh (or meson install) as
# /usr/share/bash-completion/completions/rubick.

# The subcommands: the "commands:" block of `rubick --help`.
_rubick_commands()
{
	"$1" --help 2>/dev/null | awk '/^commands:/ { on = 1; next } on && /^$/ { exit }
		on && /^  [a-z]/ { print $1 }'
}

# Every --flag a subcommand's --help names (a two-word command such as
# `model validate` or `zoo show` asks that one).
_rubick_options()
{
	"$@" --help 2>&1 | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u
}

# The names listed under HEADING ("policies:", "trace formats:") of `rubick sim --help`.
_rubick_sim_names()
{
	"$1" sim --help 2>/dev/null | awk -v h="$2" '$0 == h { on = 1; next } on && /^$/ { exit }
		on && /^  [a-z]/ { print $1 }'
}

# The job states `rubick queue -t` takes: squeue's short names and rubick's (cmd_queue.c).
_rubick_queue_states="all PD R RS CD F CA pending running restarting done failed cancelled"

_rubick()
{
	local cur prev words cword
	if declare -F _init_completion >/dev/null; then
		_init_completion || return
	else
		cur=${COMP_WORDS[COMP_CWORD]}
		prev=${COMP_WORDS[COMP_CWORD - 1]}
		words=("${COMP_WORDS[@]}")
		cword=$COMP_CWORD
	fi
	local exe=${words[0]}
	if [ "$cword" -eq 1 ]; then
		COMPREPLY=($(compgen -W "$(_rubick_commands "$exe")" -- "$cur"))
		return
	fi
	local cmd=${words[1]}
	case $prev in
	--policy)
		# a comma list: complete the item after the last comma
		local head=${cur%"${cur##*,}"} item=${cur##*,}
		COMPREPLY=($(compgen -P "$head" -W "all $(_rubick_sim_names "$exe" 'policies:')" -- "$item"))
		return ;;
	--states | --state | -t)
		if [ "$cmd" = queue ]; then # a comma list, as --policy
			local head=${cur%"${cur##*,}"} item=${cur##*,}
			COMPREPLY=($(compgen -P "$head" -W "$_rubick_queue_states" -- "$item"))
			return
		fi ;;
	--format | -o)
		if [ "$cmd" = queue ]; then # squeue's %-fields: nothing to offer
			COMPREPLY=()
		else
			COMPREPLY=($(compgen -W "auto $(_rubick_sim_names "$exe" 'trace formats:')" -- "$cur"))
		fi
		return ;;
	--user | --tenant | -u)
		[ "$cmd" = queue ] && { COMPREPLY=(); return; } ;;
	--sharing | --contention)
		COMPREPLY=($(compgen -W "on off" -- "$cur"))
		return ;;
	--trace | --cluster | --inference | --interference | --file | --token-file | --model-spec)
		COMPREPLY=($(compgen -f -- "$cur"))
		return ;;
	--out | --zoo | --profile | --traces | --config-dir)
		COMPREPLY=($(compgen -d -- "$cur"))
		return ;;
	esac
	if [[ $cur == -* ]]; then
		local sub=()
		case $cmd in
		model) [ "$cword" -gt 2 ] && sub=("${words[2]}") ;; # zoo: its --help covers list, show, check
		esac
		COMPREPLY=($(compgen -W "$(_rubick_options "$exe" "$cmd" "${sub[@]}")" -- "$cur"))
		return
	fi
	case $cmd in
	model) [ "$cword" -eq 2 ] && { COMPREPLY=($(compgen -W "fit profile validate" -- "$cur")); return; } ;;
	zoo) [ "$cword" -eq 2 ] && { COMPREPLY=($(compgen -W "list show check" -- "$cur")); return; } ;;
	esac
	COMPREPLY=($(compgen -f -- "$cur"))
}
# also the binary by the paths the README runs it from, before it is on PATH
complete -F _rubick rubick build/src/cli/rubick ./build/src/cli/rubick
