# What the tests/cli scripts share; each sources it after `R=$1` (the rubick
# under test):
#   RUBICK_ZOO  the zoo under RK_DATA_DIR
#   work        a scratch folder removed at exit; out and err are files in it
#   fails       the failure count; `fail MSG...` prints MSG and counts one
#   check NAME EXPECTED-RC STDERR-PHRASE -- ARGS...
#   quiet_same NAME POLICY [SIM FLAGS...]
#               replays $trace on $cluster with POLICY's quiet=on and quiet=off
#               and counts a failure unless jobs.csv and samples.csv are the
#               same bytes (the quiet-round tests of rubick and Sia)
#               runs "$R" ARGS (stdout to $out, stderr to $err) and counts a
#               failure when the exit code differs or stderr lacks the phrase
export RUBICK_ZOO=${RK_DATA_DIR:?}/zoo
fails=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out=$work/out err=$work/err

fail() { echo "FAIL $*"; fails=$((fails + 1)); }

check() {
	local name=$1 want=$2 phrase=$3
	shift 4
	"$R" "$@" >"$out" 2>"$err"
	local rc=$?
	if [ "$rc" -ne "$want" ] || { [ -n "$phrase" ] && ! grep -qF -- "$phrase" "$err"; }; then
		echo "FAIL $name: rc $rc (want $want), stderr: $(cat "$err")"
		fails=$((fails + 1))
	fi
}

quiet_same() {
	local name=$1 p=$2 q f
	shift 2
	for q in on off; do
		"$R" sim --trace "$trace" --cluster "$cluster" --policy "$p" --no-timing \
			--policy-options "quiet=$q" --out "$work/$name-$q" --json "$@" >"$work/$name-$q.json" \
			2>"$err" || fail "$name quiet=$q: $(cat "$err")"
	done
	for f in jobs.csv samples.csv; do
		cmp -s "$work/$name-on/$f" "$work/$name-off/$f" || fail "$name: $f differs with quiet=off"
	done
}
