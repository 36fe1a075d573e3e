#!/usr/bin/env bash
# The one exit-status table (docs/cli.md "Exit status", `rubick --help`,
# src/cli/commands.h) holds for every subcommand: an unknown option is 2 for
# each of them; a missing input file is 1 for those that read files; a model
# that is not in the zoo is 4; every daemon command is 3 when rubickd cannot be
# reached (a closed port, a missing socket) and maps rubickd's answers the same
# way: 5xx -> 3, 404 -> 4, 401 -> 2, another 4xx -> 1 (a stand-in server here
# answers every request with one status). Every --help ends with the table.
# Usage: test_cli_exit_codes.sh PATH/TO/rubick   (RK_DATA_DIR gives the zoo)
set -uo pipefail
R=$1
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
d=$work
M=$d/missing # never created

# --- every command: an unknown option is a usage error, and --help has the table ------
check no-command 2 "usage: rubick COMMAND" --
check unknown-command 2 "unknown command 'bogus'" -- bogus
"$R" --help >"$out" 2>"$err" || fail "rubick --help: rc $?"
grep -q "4  the named job, model or node does not exist" "$out" || fail "rubick --help: no table"
local_cmds=("model validate" "model fit" plan curve demo sim trace "zoo list" "zoo show" \
	"zoo check" launch)
daemon_cmds=(submit queue show cancel update hold release requeue logs events history nodes \
	policy)
for c in "${local_cmds[@]}" "${daemon_cmds[@]}"; do
	read -r -a w <<<"$c"
	check "$c --bogus-option" 2 "bogus-option" -- "${w[@]}" --bogus-option
	"$R" "${w[@]}" --help >"$out" 2>"$err"
	rc=$?
	[ "$rc" -eq 0 ] || fail "$c --help: rc $rc"
	grep -q "exit status (every command, \`rubick --help\`): 0 success, 1 failure" "$out" ||
		fail "$c --help: does not end with the exit-status table: $(tail -3 "$out")"
	grep -qiE "^ *exit: " "$out" && fail "$c --help: a table of its own: $(grep -i 'exit:' "$out")"
done
check "model unknown subcommand" 2 "unknown subcommand" -- model bogus
check "zoo unknown subcommand" 2 "unknown subcommand" -- zoo bogus

# --- a missing input file is 1, naming it ---------------------------------------------
check sim-trace 1 "$M" -- sim --trace "$M" --cluster 1x8 --policy fifo
check sim-zoo 1 "$M" -- sim --trace "$RK_DATA_DIR/traces/rubick-base.csv" --cluster 8x8 \
	--policy fifo --zoo "$M"
check sim-oracle 1 "$M" -- sim --trace "$RK_DATA_DIR/traces/rubick-base.csv" --cluster 8x8 \
	--policy fifo --oracle "measured=$M"
check trace 1 "$M" -- trace "$M"
check zoo-check 1 "$M" -- zoo check "$M"
check zoo-list 1 "$M" -- zoo list --zoo "$M"
check zoo-show 1 "$M" -- zoo show bert --zoo "$M"
check plan-zoo 1 "$M" -- plan --model bert --placement 8 --zoo "$M"
check curve-zoo 1 "$M" -- curve --model bert --zoo "$M"
check demo-zoo 1 "$M" -- demo --zoo "$M"
check model-traces 1 "$M" -- model validate --traces "$M"
check model-profile 1 "--profile: $M" -- model validate --profile "$M" --measured "$M"
check model-fit-profile 1 "--profile: $M" -- model fit --profile "$M"
check launch-file 1 "$M" -- launch --file "$M"
check launch-zoo 1 "$M" -- launch --zoo "$M" -- torchrun train.py
check submit-file 1 "$M" -- submit "$M" --url "unix:$M"
check submit-model-spec 1 "$M" -- submit --model-spec "$M" --gpus 1 --iterations 1 \
	--url "unix:$M"

# --- what the command line names does not exist: 4 ------------------------------------
check plan-model 4 "'nope' is not in the zoo" -- plan --model nope --placement 8
check curve-model 4 "'nope' is not in the zoo" -- curve --model nope
check zoo-show-model 4 "'nope' is not in the zoo" -- zoo show nope
check model-fit-model 4 "'nope' is not in the zoo" -- model fit --profile "$d" --model nope
check launch-not-white-box 4 "not a white-box launch command" -- launch -- python train.py

# --- daemon commands: unreachable, and every answer mapped by the one table -----------
# One stand-in server per HTTP status, each answering every request with it.
python3 - "$d/ports" <<'P' &
import http.server, json, socketserver, sys, threading

class H(http.server.BaseHTTPRequestHandler):
    def reply(self):
        n = int(self.headers.get("Content-Length") or 0)
        if n:
            self.rfile.read(n)
        body = json.dumps({"error": {"code": "x", "message": "stand-in %d" % self.server.status}})
        self.send_response(self.server.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body.encode())
    do_GET = do_POST = do_PUT = do_DELETE = reply
    def log_message(self, *a):
        pass

servers = []
for status in (500, 404, 401, 409):
    s = socketserver.ThreadingTCPServer(("127.0.0.1", 0), H)
    s.status = status
    servers.append(s)
    threading.Thread(target=s.serve_forever, daemon=True).start()
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(" ".join(str(s.server_address[1]) for s in servers) + "\n")
import os
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
threading.Event().wait(300)
P
srv=$!
trap 'kill "$srv" 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 100); do [ -s "$d/ports" ] && break; sleep 0.1; done
read -r p500 p404 p401 p409 <"$d/ports" || fail "the stand-in servers did not start"
# A port nothing listens on: bound, then closed.
closed=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

declare -A args=([submit]="--model bert --gpus 1 --iterations 1 --command true" [queue]=""
	[show]=1 [cancel]=1 [update]="1 --gpus 2" [hold]=1 [release]=1 [requeue]=1 [logs]=1
	[events]=1 [history]="" [nodes]="" [policy]="")
for c in "${daemon_cmds[@]}"; do
	read -r -a a <<<"${args[$c]}"
	check "$c closed port" 3 "cannot reach rubickd" -- "$c" "${a[@]}" --url "http://127.0.0.1:$closed"
	check "$c no socket" 3 "cannot reach rubickd" -- "$c" "${a[@]}" --url "unix:$M"
	check "$c 500" 3 "stand-in 500" -- "$c" "${a[@]}" --url "http://127.0.0.1:$p500"
	check "$c 404" 4 "stand-in 404" -- "$c" "${a[@]}" --url "http://127.0.0.1:$p404"
	check "$c 401" 2 "stand-in 401" -- "$c" "${a[@]}" --url "http://127.0.0.1:$p401"
	check "$c 409" 1 "stand-in 409" -- "$c" "${a[@]}" --url "http://127.0.0.1:$p409"
	check "$c token file" 2 "--token-file" -- "$c" "${a[@]}" --url "http://127.0.0.1:$p500" \
		--token-file "$M"
done
check "policy change 409" 1 "stand-in 409" -- policy fifo --url "http://127.0.0.1:$p409"
check "show bad id" 2 "is not a job id" -- show x --url "http://127.0.0.1:$p500"

[ "$fails" -eq 0 ] && echo "cli_exit_codes: all passed"
exit $((fails > 0))
