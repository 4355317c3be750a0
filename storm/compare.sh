#!/usr/bin/env bash
# The refresh-storm comparison of make storm: mcp-conform storm against the
# reference server, the stock Go SDK server (fixtures/thirdparty/gosdk), the
# stock mcp-go server (fixtures/thirdparty/mcpgo; $MCPGO_PEER names its
# binary, else start.sh builds it) and, when Node.js is installed, the
# TypeScript SDK's example server, one after
# another at each N, then the reconnect strategies at one N, with the
# connections reset by the client and by a fault proxy. Each run's
# console output and JSON go to $STORM_OUT (default reports/storm); the
# table of all runs to $STORM_OUT/table.md. Exits 1 when a reference run
# failed.
#
#   storm/compare.sh BIN GOSDK_PEER REFERENCE_SERVER
#
# BIN is mcp-conform (the load generator), REFERENCE_SERVER the
# reference-server binary (the reference's server alone: mcp-conform's
# reference-server command also carries the harness, whose packages' own
# memory would count against the server).
#
# STORM_N (default "100 500 1000") and STORM_STRATEGY_N (default 500) pick
# the sizes, STORM_ROUNDS (default 5) how often each size is stormed.
set -uo pipefail

[ $# -eq 3 ] || { echo "usage: $0 MCP_CONFORM_BIN GOSDK_PEER_BIN REFERENCE_SERVER_BIN" >&2; exit 2; }
bin=$1
peer=$2
refbin=$3
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
out=${STORM_OUT:-reports/storm}
mkdir -p "$out"
rm -f "$out"/*.json "$out"/*.txt

ref="$refbin --addr 127.0.0.1:{port} --bearer-token alice=alice-token --bearer-token bob=bob-token --max-sessions-per-principal 100000 --log-level warn"
gosdk="GOSDK_PEER=$peer $root/fixtures/thirdparty/gosdk/start.sh {port}"
ts="$root/fixtures/thirdparty/ts-sdk/start.sh {port}"
# mcp-go's idle sweep (4s in its profile, for the checks) would end
# sessions while a storm settles: 10 minutes, as in production.
mcpgo="MCPGO_IDLE_TTL=10m ${MCPGO_PEER:+MCPGO_PEER=$MCPGO_PEER }$root/fixtures/thirdparty/mcpgo/start.sh {port}"
url='http://127.0.0.1:{port}/mcp'
common=(--url "$url" --cut-after 5 --concurrency 50 --settle 20s)
steps=(--arguments '{"steps":20,"interval_ms":100}' --notifications 20 --interval 100ms)

targets=(reference gosdk mcpgo)
if command -v node >/dev/null 2>&1 && "$root/fixtures/thirdparty/ts-sdk/install.sh" -q >/dev/null; then
	targets+=(ts-sdk)
else
	echo "storm: Node.js or the TypeScript SDK is missing: no ts-sdk runs" >&2
fi

status=0
runs=()
# storm_run NAME TARGET ARGS... runs one storm and records it.
storm_run() {
	local name=$1 target=$2
	shift 2
	local cmd profile args
	case $target in
	# Both tools send a progress notification and an info log message per
	# step; the Go SDK sends log messages only once the client has set a
	# level, the reference from initialize on: each session sets info, so
	# both servers send the same messages.
	reference) cmd=$ref profile=$here/reference-profile.yaml args=("${steps[@]}" --log-level info) ;;
	gosdk) cmd=$gosdk profile=$root/fixtures/thirdparty/gosdk/profile.yaml args=("${steps[@]}" --log-level info) ;;
	mcpgo) cmd=$mcpgo profile=$root/fixtures/thirdparty/mcpgo/profile.yaml args=("${steps[@]}" --log-level info) ;;
	ts-sdk) cmd=$ts profile=$root/fixtures/thirdparty/ts-sdk/profile.yaml
		args=(--arguments '{"interval":100,"count":20}' --notifications 20 --interval 100ms) ;;
	esac
	echo "== $name"
	"$bin" storm "${common[@]}" "${args[@]}" --server-cmd "$cmd" --target-profile "$profile" \
		--json "$out/$name.json" "$@" >"$out/$name.txt" 2>&1
	local rc=$?
	[ -f "$out/$name.json" ] && runs+=("$out/$name.json")
	grep -v '^  - ' "$out/$name.txt"
	if [ $rc -ne 0 ] && [ "$target" = reference ]; then
		status=1
	fi
}

# Each size STORM_ROUNDS times (default 5), the reference and the Go SDK
# server in alternating order (one storm on a shared machine is noisy, and
# the first of two in a row is not like the second); mcp-go and the
# TypeScript example in the first round only. storm/table compares the
# medians.
rounds=${STORM_ROUNDS:-5}
for n in ${STORM_N:-100 500 1000}; do
	for r in $(seq 1 "$rounds"); do
		order=(reference gosdk)
		[ $((r % 2)) -eq 0 ] && order=(gosdk reference)
		[ "$r" -eq 1 ] && order+=("${targets[@]:2}")
		for t in "${order[@]}"; do
			storm_run "$t-n$n-both-r$r" "$t" --sessions "$n" --reconnect both
		done
	done
done
sn=${STORM_STRATEGY_N:-500}
for t in reference gosdk; do
	storm_run "$t-n$sn-resume" "$t" --sessions "$sn" --reconnect resume
	storm_run "$t-n$sn-new-get" "$t" --sessions "$sn" --reconnect new-get
	storm_run "$t-n$sn-both-delay1s" "$t" --sessions "$sn" --reconnect both --reconnect-delay 1s
	# The cut made by a fault proxy in between, as when a proxy restarts:
	# what it had read from the server is lost with it.
	for rc in both resume new-get; do
		storm_run "$t-n$sn-$rc-proxy" "$t" --sessions "$sn" --reconnect "$rc" --cut proxy
	done
done
go run "$root/storm/table" -vs reference,gosdk "${runs[@]}" >"$out/table.md" && cat "$out/table.md"
exit $status
