# interlink build, test, bench and demo. See README.md.
GO       ?= go
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
COMMIT   ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null)
LDFLAGS  := -s -w -X github.com/interlink/interlink/internal/cli.version=$(VERSION) -X github.com/interlink/interlink/internal/cli.commit=$(COMMIT)
BIN      := bin/interlink
# An execution count, not a duration: Go 1.26's fuzz coordinator can fail a
# target with a bare "context deadline exceeded" when a -fuzztime duration
# runs out under load (golang/go#75804, fixed in Go 1.27); a count has no
# deadline to race. 20000 runs take 1 to 10 s per target here.
FUZZTIME ?= 20000x
export CGO_ENABLED = 0

.PHONY: all build test fuzz vet bench demo cross clean

all: build

build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/interlink

# The whole test suite: vet, unit, fixture, kernel and lab tests (lab tests
# need root), then each fuzz target for a bounded number of runs.
test: vet
	$(GO) test -count=1 ./...
	$(MAKE) --no-print-directory fuzz

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || { echo "gofmt needed:"; gofmt -l .; exit 1; }
	$(GO) vet ./...

# Every Fuzz target in the tree, FUZZTIME each.
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  dir=$$($(GO) list -f '{{.Dir}}' $$pkg); \
	  for f in $$(grep -ho '^func Fuzz[A-Za-z0-9_]*' $$dir/*_test.go 2>/dev/null | sed 's/func //'); do \
	    echo "fuzz $$pkg $$f ($(FUZZTIME))"; \
	    $(GO) test -run='^$$' -fuzz="^$$f$$" -fuzztime=$(FUZZTIME) $$pkg >/tmp/interlink-fuzz.log 2>&1 || { cat /tmp/interlink-fuzz.log; exit 1; }; \
	  done; \
	done

# Solaris and AIX users exist: the binary must keep building there.
cross:
	GOOS=solaris GOARCH=amd64 $(GO) build -o /dev/null ./cmd/interlink
	GOOS=aix GOARCH=ppc64 $(GO) build -o /dev/null ./cmd/interlink
	GOOS=darwin GOARCH=arm64 $(GO) build -o /dev/null ./cmd/interlink

# Go benchmarks, then interlink against iperf3 and sockperf in a namespace lab
# (root; installs the peers with apt-get if missing): interlink as users run
# it (`interlink agent` with its defaults, `interlink bench`), alternating
# with the peers; medians and ratios with their spread. Exits 1 naming every
# ratio that misses its goal.
BENCHFLAGS ?= -rounds 5 -time 3s
# The Go benchmarks (lab up/down, check, pmtu verdict time) run six times
# each and benchstat prints their medians.
BENCHSTAT := golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da
bench: build
	$(GO) test -run='^$$' -bench=. -benchtime=3x -count=6 ./... | tee bin/bench.txt
	$(GO) run $(BENCHSTAT) bin/bench.txt
	$(GO) build -o bin/compare ./bench/compare
	./bin/compare -interlink $(BIN) $(BENCHFLAGS)

demo: build
	./$(BIN) lab demo

clean:
	rm -rf bin
