GO ?= go
BIN := bin/mcp-conform
# Arguments for `make run`, e.g. make run ARGS="serve --addr 127.0.0.1:9000".
ARGS ?= serve

.PHONY: all build test test-race run lint fmt bench flake clean fuzz

all: lint build test

build:
	$(GO) build -o $(BIN) ./cmd/mcp-conform
	$(GO) build -o bin/reference-server ./cmd/reference-server

# The test command CI runs: lint, every package with the race detector, then
# a short run of each fuzz target. Its budget is a count of inputs, not a
# duration: Go 1.26's fuzzer can fail a duration-bounded run with "context
# deadline exceeded" when it ends (golang/go#75804).
test: lint
	$(GO) test -race -count=1 -timeout 10m ./...
	$(MAKE) fuzz FUZZTIME=50000x

# Fuzz targets (package:target); their seed corpora are in testdata/fuzz.
# make fuzz FUZZTIME=10m runs each longer.
FUZZ_TARGETS := ./reference/server:FuzzPOST ./reference/server:FuzzParseEventID ./reference/eventstore:FuzzStore
FUZZTIME ?= 2m
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		echo "fuzz $${t#*:} ($(FUZZTIME))"; \
		$(GO) test -run='^$$' -fuzz="^$${t#*:}$$" -fuzztime=$(FUZZTIME) $${t%%:*}; \
	done

run:
	$(GO) run ./cmd/mcp-conform $(ARGS)

lint:
	@out=$$(gofmt -l . ); if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

fmt:
	gofmt -w .

bench:
	$(GO) test -run='^$$' -bench=. -benchmem ./...

# Repeats the tests to catch flakes: make flake N=10
N ?= 10
flake:
	$(GO) test -race -count=$(N) -timeout 60m ./...

clean:
	rm -rf bin

# Third-party baselines: the harness against the TypeScript SDK's example
# server (installed with npm into ~/.cache/mcp-conform) and a plain Go SDK
# server, each with its expected failures (fixtures/thirdparty/).
.PHONY: conform-thirdparty
conform-thirdparty: build
	fixtures/thirdparty/ts-sdk/install.sh
	$(GO) build -o bin/gosdk-peer ./fixtures/thirdparty/gosdk
	$(GO) build -o bin/mcpgo-peer ./fixtures/thirdparty/mcpgo
	GOSDK_PEER=$(CURDIR)/bin/gosdk-peer MCPGO_PEER=$(CURDIR)/bin/mcpgo-peer fixtures/thirdparty/run.sh $(BIN)
	fixtures/thirdparty/replicas.sh $(BIN)
	fixtures/thirdparty/clients/run.sh $(BIN)

# Refresh storms (mcp-conform storm): the reference server, the stock Go
# SDK server and, with Node.js, the TypeScript SDK example, side by side at
# N = 100, 500 and 1000 sessions, then each reconnect strategy; figures and
# a table in reports/storm. Fails when a reference run does.
.PHONY: storm
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
conform-official: build
	fixtures/official/run.sh $(BIN)
