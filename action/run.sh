#!/usr/bin/env bash
# The GitHub Action's logic (action.yml at the repository root): build
# mcp-conform from this checkout, run it once per protocol version, write
# the reports, append the Markdown report to the job summary and set the
# step's outputs from the JSON report. Inputs come as INPUT_* variables.
#
#   run.sh cache   print the Go caches' paths and key to $GITHUB_OUTPUT
#   run.sh         build and run
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=action/lib.sh
. "$root/action/lib.sh"

# die stops the step with a usage or setup error. Its message quotes
# inputs with shown.
die() {
	echo "mcp-conform action: $*" >&2
	printf '%s\n' "$*" | section "❌ mcp-conform: setup error"
	output exit-code 2
	exit 2
}

sha256() {
	if command -v sha256sum >/dev/null 2>&1; then sha256sum "$1"; else shasum -a 256 "$1"; fi | cut -c1-16
}

if [ "${1:-}" = cache ]; then
	# Dedicated caches, so the build neither reuses nor disturbs the
	# project's own Go caches; keyed on this checkout's go.sum.
	dir="${RUNNER_TEMP:?}/mcp-conform-go"
	output gomodcache "$dir/mod"
	output gocache "$dir/build"
	output key "mcp-conform-go-$(sha256 "$root/go.sum")"
	exit 0
fi

mode=${INPUT_MODE:-server}
reports=${INPUT_REPORTS:-mcp-conform-reports}
strict=${INPUT_STRICT:-false}
check_set=${INPUT_CHECK_SET:-all}

# Every input is checked before any is used, against what it may be.
case "$mode" in server | client) ;; *) die "mode must be server or client, got $(shown "$mode")" ;; esac
case "$strict" in true | false) ;; *) die "strict must be true or false, got $(shown "$strict")" ;; esac
case "$check_set" in spec | resilience | all) ;; *) die "check-set must be spec, resilience or all, got $(shown "$check_set")" ;; esac

# plain NAME VALUE [lines] stops the step if VALUE holds a control
# character; with lines, tabs and newlines are allowed (a command or
# arguments may span lines).
plain() {
	local v=$2
	[ -z "${3:-}" ] || v=${v//[$'\t\n']/}
	case "$v" in *[[:cntrl:]]*) die "$1: a control character in $(shown "$2")" ;; esac
}
plain reports "$reports"
plain url "${INPUT_URL:-}"
case "${INPUT_URL:-}" in *[[:space:]]*) die "url: white space in $(shown "$INPUT_URL")" ;; esac
plain target-profile "${INPUT_TARGET_PROFILE:-}"
plain target-config "${INPUT_TARGET_CONFIG:-}"
plain expected-failures "${INPUT_EXPECTED_FAILURES:-}"
plain server-command "${INPUT_SERVER_COMMAND:-}" lines
plain client-command "${INPUT_CLIENT_COMMAND:-}" lines
plain args "${INPUT_ARGS:-}" lines

# docs_url URL: URL is an http(s) URL of characters that need no escaping
# in a Markdown link.
docs_url() {
	local re='^https?://[A-Za-z0-9._~:/?#@!$&*+,;=%-]+$'
	[[ $1 =~ $re ]]
}
[ -z "${INPUT_DOCS_URL:-}" ] || docs_url "$INPUT_DOCS_URL" ||
	die "docs-url must be an http(s) URL of letters, digits and -._~:/?#@!\$&*+,;=%, got $(shown "$INPUT_DOCS_URL")"

# One run per protocol version (separated by commas or white space): each
# a revision, all or auto, as each names a reports folder.
protocols=${INPUT_PROTOCOL_VERSION:-}
read -r -d '' -a versions <<<"${protocols//,/ }" || true
for v in ${versions[@]+"${versions[@]}"}; do
	[[ $v =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}$ ]] || [ "$v" = all ] || [ "$v" = auto ] ||
		die "protocol-version: $(shown "$v") is not a revision (YYYY-MM-DD), all or auto"
done
[ "${#versions[@]}" -gt 0 ] || versions=("")

# The command line shared by every version's run.
args=()
case "$mode" in
server)
	[ -z "${INPUT_CLIENT_COMMAND:-}" ] || die "client-command is for mode: client (this is mode: server)"
	[ -z "${INPUT_URL:-}" ] || args+=(--url "$INPUT_URL")
	[ -z "${INPUT_SERVER_COMMAND:-}" ] || args+=(--server-cmd "$INPUT_SERVER_COMMAND")
	profile=${INPUT_TARGET_PROFILE:-${INPUT_TARGET_CONFIG:-}} # target-config: its earlier name
	[ -z "$profile" ] || args+=(--target-profile "$profile")
	args+=(--checks "$check_set")
	[ "$strict" = false ] || args+=(--strict)
	;;
client)
	for v in URL SERVER_COMMAND TARGET_PROFILE TARGET_CONFIG; do
		n="INPUT_$v"
		[ -z "${!n:-}" ] || die "$(echo "$v" | tr 'A-Z_' 'a-z-') is for mode: server (this is mode: client)"
	done
	[ "$check_set" = all ] || die "check-set is for mode: server (client mode runs every client check; narrow it with args: --scenario ID)"
	[ "$strict" != true ] || die "strict is for mode: server (client checks are all required)"
	[ -z "${INPUT_CLIENT_COMMAND:-}" ] || args+=(--command "$INPUT_CLIENT_COMMAND")
	;;
esac
[ -z "${INPUT_EXPECTED_FAILURES:-}" ] || args+=(--expected-failures "$INPUT_EXPECTED_FAILURES")

# Links in the Markdown report go to this checkout's documents where it
# is published: the action's repository and ref, or, for a local action
# (uses: ./path), the workflow's repository at its commit.
docs=${INPUT_DOCS_URL:-}
server_url=${GITHUB_SERVER_URL:-https://github.com}
if [ -z "$docs" ] && [ -n "${MCP_CONFORM_ACTION_REPOSITORY:-}" ] && [ -n "${MCP_CONFORM_ACTION_REF:-}" ]; then
	docs="$server_url/$MCP_CONFORM_ACTION_REPOSITORY/blob/$MCP_CONFORM_ACTION_REF/"
elif [ -z "$docs" ] && [ -n "${GITHUB_WORKSPACE:-}" ] && [ -n "${GITHUB_REPOSITORY:-}" ] && [ -n "${GITHUB_SHA:-}" ]; then
	workspace=$(cd "$GITHUB_WORKSPACE" && pwd)
	case "$root/" in
	"$workspace"/*)
		rel=${root#"$workspace"}
		rel=${rel#/}
		docs="$server_url/$GITHUB_REPOSITORY/blob/$GITHUB_SHA/${rel:+$rel/}"
		;;
	esac
fi
# A ref whose name Markdown would read leaves the links relative.
[ -z "$docs" ] || ! docs_url "$docs" || args+=(--docs-url "$docs")

# Extra arguments, split as a shell would split them (quotes kept, nothing
# expanded).
if [ -n "${INPUT_ARGS:-}" ] && [ -n "${INPUT_ARGS//[[:space:]]/}" ]; then
	split=$(mktemp)
	printf '%s' "$INPUT_ARGS" | xargs printf '%s\0' >"$split" || die "args: cannot split $(shown "$INPUT_ARGS") (unbalanced quotes?)"
	while IFS= read -r -d '' a; do args+=("$a"); done <"$split"
	rm -f "$split"
fi

# Build from this checkout.
bin="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/mcp-conform-bin/mcp-conform$(cd "$root" && go env GOEXE)"
echo "building mcp-conform from $root"
build_env=(GOTOOLCHAIN=local)
if [ -n "${MCP_CONFORM_GOCACHE:-}" ]; then
	build_env+=(GOCACHE="$MCP_CONFORM_GOCACHE" GOMODCACHE="$MCP_CONFORM_GOMODCACHE" GOFLAGS=-modcacherw)
fi
# An action used at a release tag is that release: 'mcp-conform version'
# says so (a checkout of the action has no VCS stamp).
ldflags=
if [[ "${MCP_CONFORM_ACTION_REF:-}" =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
	ldflags="-X main.version=$MCP_CONFORM_ACTION_REF"
fi
(cd "$root" && env "${build_env[@]}" go build -ldflags "$ldflags" -o "$bin" ./cmd/mcp-conform) || die "go build of mcp-conform failed (see the log)"
"$bin" version

# count FILE KEY reads a number from the JSON report's top level or its
# counts object (the document is indented by mcp-conform: two spaces a
# level).
count() {
	local n
	n=$(sed -n -e "s/^  \"$2\": \([0-9][0-9]*\).*/\1/p" -e "/^  \"counts\": {/,/^  }/s/^    \"$2\": \([0-9][0-9]*\).*/\1/p" "$1" | head -n1)
	echo "${n:-0}"
}

# Totals over the runs, total_<key> (bash 3 has no associative arrays).
keys="pass fail warn skip inconclusive blocked stale expected-failure defects"
for k in $keys; do printf -v "total_${k//-/_}" '%d' 0; done
status=0
for v in "${versions[@]}"; do
	dir=$reports
	[ "${#versions[@]}" -eq 1 ] || dir="$reports/$v"
	mkdir -p -- "$dir" || die "cannot create the reports folder $(shown "$dir")"
	run=("$bin" "$mode" ${args[@]+"${args[@]}"} --junit "$dir/junit.xml" --json "$dir/mcp-conform.json" --html "$dir/report.html" --markdown "$dir/summary.md" --badge "$dir/badge.json")
	[ -z "$v" ] || run+=(--protocol-version "$v")
	rm -f -- "$dir/mcp-conform.json" "$dir/summary.md"
	echo "::group::mcp-conform $mode${v:+ (protocol $v)}"
	# The target's words reach the log: no workflow command in them runs.
	token=$(random)
	echo "::stop-commands::$token"
	"${run[@]}" 2>&1 | tee -- "$dir/mcp-conform.log"
	code=${PIPESTATUS[0]}
	# On a line of its own, even after output that ended without a newline.
	[ -z "$(tail -c 1 -- "$dir/mcp-conform.log")" ] || echo
	echo "::$token::"
	echo "::endgroup::"
	echo "mcp-conform $mode${v:+ (protocol $v)}: exit $code"
	if [ -s "$dir/summary.md" ]; then
		summary <"$dir/summary.md"
	else
		# The end of the log, which the target writes: inert, and bounded.
		tail -n 20 -- "$dir/mcp-conform.log" | section "❌ mcp-conform $mode${v:+ (protocol $v)}: exit $code, no report"
	fi
	if [ -s "$dir/mcp-conform.json" ]; then
		for k in $keys; do
			var="total_${k//-/_}"
			printf -v "$var" '%d' $((${!var} + $(count "$dir/mcp-conform.json" "$k")))
		done
	fi
	[ "$code" -le "$status" ] || status=$code
done

# shellcheck disable=SC2154 # the totals are set with printf -v
{
	output pass "$total_pass"
	output fail "$total_fail"
	output warn "$total_warn"
	output skip "$total_skip"
	output inconclusive "$total_inconclusive"
	output blocked "$total_blocked"
	output stale "$total_stale"
	output expected-failure "$total_expected_failure"
	output defects "$total_defects"
	output exit-code "$status"
	output reports "$reports"
}
exit "$status"
