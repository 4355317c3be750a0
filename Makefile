GO ?= go
# The tests' processes are short-lived and small: collecting their garbage
# four times less often saves a tenth of make test's CPU.
TEST_GOGC := 400
# Two a core, for what mostly waits.
PER_CORE_2 := $(shell echo $$(( 2 * $$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2) )))
# -trimpath: no build depends on the checkout's directory, so a fresh clone
# reuses what another clone left in the build cache instead of compiling
# every package again (about 90 s of make test on two cores).
export GOFLAGS := $(strip -trimpath $(filter-out -trimpath,$(GOFLAGS)))
BIN := bin/mcp-conform
# Arguments for `make run`, e.g. make run ARGS="reference-server --addr 127.0.0.1:9000".
ARGS ?= reference-server

.PHONY: all build test test-race test-e2e test-browser test-matrix test-load check run lint fmt bench flake clean fuzz help release-snapshot docs

all: lint build test

## help: list the targets
help:
	@grep -h '^## ' $(MAKEFILE_LIST) | sed 's/^## /  /'

## build: bin/mcp-conform, bin/reference-server, and bin/page (the reference browser client that `client --browser` grades)
build:
	$(GO) build -o $(BIN) ./cmd/mcp-conform
	$(GO) build -o bin/reference-server ./cmd/reference-server
	$(GO) run ./reference/browserclient/build bin/page

# End-to-end tests are named TestE2E*: they run the harness as a user
# would (as a process, against the reference and the broken fixtures) and
# judge verdicts that hang on wall-clock timings. All but
# TestE2EServerReference skip under -short.
E2E_PKGS := $(sort $(patsubst %/,%,$(dir $(shell grep -rl --include='*_test.go' '^func TestE2E' .))))
E2E_RUN := '^TestE2E'
# How many times each pass runs its tests, and its bound (make flake raises both).
COUNT ?= 1
TEST_TIMEOUT ?= 10m

## test: the self-tests: lint, then the race pass beside the end-to-end pass, then the browser pass (a few minutes on two cores)
# Two passes, each where it finds what it is for:
#  1. test-race: every package with the race detector and -short: the
#     unit and integration tests. In cmd/mcp-conform, TestE2EServerReference
#     and TestClientReference are then the race pass of the harness against
#     the reference server and client, and in storm the storm smoke test
#     runs the reference under the detector.
#  2. test-e2e: the end-to-end tests alone (the others ran in pass 1) on
#     the normal build: their verdicts hang on wall-clock timings (a 1 s
#     idle threshold), which the detector's slowdown would stretch past the
#     checks' premises. Each run against a fixture is focused on the checks
#     the fixture breaks; make test-matrix runs the whole suite against each.
# The passes run side by side: each spends much of its time waiting on what
# its runs wait for (grace periods, restarts), so one alone leaves a core
# idle. The harness measures the delays a busy machine causes it and never
# blames a target for them; make test-load proves that with both cores taken.
# 3. test-browser, after them: the client checks against web pages in a
#    real Chromium, whose page loads would otherwise compete with the two
#    passes for the cores.
test: lint
	@$(MAKE) --no-print-directory -j2 test-race test-e2e
	@$(MAKE) --no-print-directory test-browser

## test-browser: make test's browser pass alone: the reference browser client and the broken pages under client --browser (skipped without Chromium)
test-browser:
	GOGC=$(TEST_GOGC) $(GO) test -count=1 -timeout $(TEST_TIMEOUT) -run '^TestBrowser' ./...

## test-race: make test's race pass alone
# -p: two test binaries a core, as the slowest packages' tests mostly wait.
test-race:
	GOGC=$(TEST_GOGC) $(GO) test -race -short -count=$(COUNT) -timeout $(TEST_TIMEOUT) -p $(PER_CORE_2) ./...

## test-e2e: make test's end-to-end pass alone
test-e2e:
	GOGC=$(TEST_GOGC) $(GO) test -count=$(COUNT) -timeout $(TEST_TIMEOUT) -run $(E2E_RUN) $(E2E_PKGS)

## test-matrix: every check against every fixture (make test runs each fixture's own checks); CI runs it
# What it adds to make test: every check is seen to pass on each fixture
# that does not break it, the proof that no check fails falsely where
# another defect lies. Several minutes on two cores.
test-matrix:
	MCP_CONFORM_MATRIX=full $(GO) test -count=1 -timeout 20m -run '^TestE2E(ServerCatchesFixtures|ServerCatchesFixturesModern|ServerCatchesFixturesDual|ServerCatchesStatelessFixtures|ClientCatchesFixtures|ClientCatchesTaskFixturesModern)$$' ./cmd/mcp-conform

## test-load: make test beside two busy processes that keep both cores of a two-core machine busy
test-load:
	@echo "make test beside two busy processes (yes > /dev/null)"
	@yes >/dev/null & y1=$$!; yes >/dev/null & y2=$$!; \
	trap 'kill $$y1 $$y2 2>/dev/null' EXIT; $(MAKE) test

## check ID=...: prove one server check: it passes on the reference and fails on each fixture that breaks it
check:
	@test -n "$(ID)" || { echo "usage: make check ID=GRACE-EXPIRES" >&2; exit 2; }
	$(GO) test -count=1 -run '^TestOneCheck$$' -v ./cmd/mcp-conform -check '$(ID)'

## docs: regenerate every generated document (make test fails while one is stale)
docs:
	$(GO) test -count=1 -run '^TestDocMatrix$$' ./suites -update
	$(GO) test -count=1 -run '^TestDocBlocks$$' ./harness -update
	$(GO) test -count=1 -run '^TestChecksDoc$$' ./cmd/mcp-conform -update-docs
	$(GO) test -count=1 ./fixtures/thirdparty/recipes -update

## fuzz: each fuzz target (FUZZTIME=10m for longer); seed corpora are in testdata/fuzz
# Fuzz targets (package:target).
FUZZ_TARGETS := ./internal/inert:FuzzEscape ./reference/server:FuzzPOST ./reference/server:FuzzParseEventID ./reference/server:FuzzPeekSDK ./reference/eventstore:FuzzStore ./harness:FuzzNegotiatedVersion
FUZZTIME ?= 2m
# CI bounds each by a count of inputs (FUZZTIME=50000x), not a duration:
# Go 1.26's fuzzer can fail a duration-bounded run with "context deadline
# exceeded" when it ends (golang/go#75804).
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		echo "fuzz $${t#*:} ($(FUZZTIME))"; \
		$(GO) test -run='^$$' -fuzz="^$${t#*:}$$" -fuzztime=$(FUZZTIME) $${t%%:*}; \
	done

## release-snapshot: GoReleaser's snapshot build of every release binary and archive in a clean clone, checked (several minutes)
release-snapshot:
	MCP_CONFORM_RELEASE_TEST=1 $(GO) test -count=1 -timeout 60m -run '^TestReleaseSnapshot$$' -v ./release

## run ARGS=...: go run the command
run:
	$(GO) run ./cmd/mcp-conform $(ARGS)

## lint: gofmt and go vet
lint:
	@out=$$(gofmt -l . ); if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

fmt:
	gofmt -w .

## bench: the benchmarks
bench:
	$(GO) test -run='^$$' -bench=. -benchmem ./...

## flake N=10: make test's passes N times over, to catch flakes
N ?= 10
flake:
	@$(MAKE) --no-print-directory test-race test-e2e COUNT=$(N) TEST_TIMEOUT=60m

## clean: remove bin/
clean:
	rm -rf bin

# Third-party baselines: the harness against servers and clients of other
# projects (npm packages installed into ~/.cache/mcp-conform, Go modules
# built here), each with its expected failures (fixtures/thirdparty/).
.PHONY: conform-thirdparty
## conform-thirdparty: the harness against third-party servers and clients, each with its baseline
conform-thirdparty: build
	for i in fixtures/thirdparty/*/install.sh; do $$i >/dev/null || exit 1; done
	$(GO) build -o bin/gosdk-peer ./fixtures/thirdparty/gosdk
	$(GO) build -o bin/gosdk-recipes-peer ./fixtures/thirdparty/gosdk-recipes
	$(GO) build -o bin/mcpgo-peer ./fixtures/thirdparty/mcpgo
	$(GO) build -o bin/mcpgo-recipes-peer ./fixtures/thirdparty/mcpgo-recipes
	@# A peer in a Go module of its own (its go.mod pins the library).
	cd fixtures/thirdparty/trpc-mcp-go && $(GO) build -o $(CURDIR)/bin/trpcmcp-peer .
	@# Every step runs, so every report is written; any failure fails the target.
	status=0; \
	THIRDPARTY_PARALLEL_1=1 GOSDK_PEER=$(CURDIR)/bin/gosdk-peer GOSDK_RECIPES_PEER=$(CURDIR)/bin/gosdk-recipes-peer MCPGO_PEER=$(CURDIR)/bin/mcpgo-peer MCPGO_RECIPES_PEER=$(CURDIR)/bin/mcpgo-recipes-peer TRPCMCP_PEER=$(CURDIR)/bin/trpcmcp-peer fixtures/thirdparty/run.sh $(BIN) || status=1; \
	fixtures/thirdparty/replicas.sh $(BIN) || status=1; \
	fixtures/thirdparty/clients/run.sh $(BIN) || status=1; \
	fixtures/thirdparty/browser/run.sh $(BIN) || status=1; \
	GOSDK_PEER=$(CURDIR)/bin/gosdk-peer $(GO) test -count=1 -run '^TestE2EInitThirdParty$$' ./cmd/mcp-conform || status=1; \
	exit $$status

.PHONY: landscape
## landscape: make conform-thirdparty, then docs/landscape.md from its reports (written even when a baseline deviates)
landscape:
	status=0; $(MAKE) conform-thirdparty || status=$$?; \
	$(GO) run ./fixtures/thirdparty/landscape -o docs/landscape.md && exit $$status

# Refresh storms (mcp-conform storm): the reference server, the stock Go
# SDK server and, with Node.js, the TypeScript SDK example, side by side at
# N = 100, 500 and 1000 sessions, then each reconnect strategy; figures and
# a table in reports/storm. Fails when a reference run does.
.PHONY: storm
## storm: refresh storms, the reference beside the SDK servers (about 5 minutes)
storm: build
	$(GO) build -o bin/gosdk-peer ./fixtures/thirdparty/gosdk
	$(GO) build -o bin/mcpgo-peer ./fixtures/thirdparty/mcpgo
	MCPGO_PEER=$(CURDIR)/bin/mcpgo-peer storm/compare.sh $(CURDIR)/$(BIN) $(CURDIR)/bin/gosdk-peer $(CURDIR)/bin/reference-server

# The official MCP conformance suite (fixtures/official): the reference
# server (serve --conformance-tools) and the reference client against the
# pinned @modelcontextprotocol/conformance on the Node.js 22 it pins, both
# installed with npm into ~/.cache/mcp-conform; deviations from
# fixtures/official/expected-failures.yml fail it.
.PHONY: conform-official
## conform-official: the official MCP conformance suite against the reference server and client
conform-official: build
	fixtures/official/run.sh $(BIN)
