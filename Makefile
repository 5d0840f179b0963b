# interlink build, test, bench and demo. See README.md.
GO       ?= go
# The version: from a tag vX.Y.Z (commits after it as +N.gHASH), else
# 0.1.0~dev.DATE.HASH (sorts before 0.1.0 in dpkg and rpm).
COMMIT   ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null)
# The commit's date, not the clock: a rebuild of one commit is identical.
DATE     ?= $(shell git log -1 --format=%cd --date=format:%Y-%m-%d 2>/dev/null)
VERSION  ?= $(shell v=$$(git describe --tags --match 'v[0-9]*' 2>/dev/null | sed -e 's/^v//' -e 's/-\([0-9]*\)-g/+\1.g/'); \
              [ -n "$$v" ] || v=0.1.0~dev.$$(git log -1 --format=%cd --date=format:%Y%m%d 2>/dev/null || echo 0).$$(git rev-parse --short=8 HEAD 2>/dev/null || echo 0); echo $$v)
LDFLAGS  := -s -w -X github.com/interlink/interlink/internal/cli.version=$(VERSION) -X github.com/interlink/interlink/internal/cli.commit=$(COMMIT) -X github.com/interlink/interlink/internal/cli.date=$(DATE)
BIN      := bin/interlink
# An execution count, not a duration: Go 1.26's fuzz coordinator can fail a
# target with a bare "context deadline exceeded" when a -fuzztime duration
# runs out under load (golang/go#75804, fixed in Go 1.27); a count has no
# deadline to race. 20000 runs take 1 to 10 s per target here.
FUZZTIME ?= 20000x
export CGO_ENABLED = 0

.PHONY: all build test fuzz vet lint bench demo cross clean docs package package-check

all: build

build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/interlink

# The whole test suite: gofmt and vet, then unit, fixture, kernel and lab
# tests (lab tests need root). go vet runs once, here, not again inside go
# test (-vet=off); `make lint test` runs it once too. The fuzz targets are
# `make fuzz`, which CI also runs.
# The VM lab tests (and the guide with VM nodes) run after the others,
# alone and one package at a time: three guests in software emulation take
# both cores of a small machine, and the namespace labs' timed probes (a DF
# datagram expected within 1 s) then starve.
# The lone-round-trip comparison (gc's ping table against bench's paced
# blocks, within the two tools' noise) runs alone as well: under the other
# packages' load the two drift apart by more than their rounds spread.
# The wake-up tests run last and alone too: they turn the host's idle
# knobs (guest_halt_poll_ns, a PM QoS hold) and need idle CPUs to measure
# waking them; other tests' load keeps the CPUs awake.
VMTESTS := ./internal/lab/vmtest ./internal/doctest/vmguide
QUIETTESTS := TestLabPingAgreesWithBlocks
WAKETESTS := ./internal/traffic/waketest
test: vet
	$(GO) test -vet=off -count=1 -skip '^($(QUIETTESTS))$$' $$($(GO) list ./... | grep -v -e '/internal/lab/vmtest$$' -e '/internal/doctest/vmguide$$' -e '/internal/traffic/waketest$$')
	$(GO) test -vet=off -count=1 -p 1 $(VMTESTS)
	$(GO) test -vet=off -count=1 -run '^($(QUIETTESTS))$$' ./internal/gc/labtest
	$(GO) test -vet=off -count=1 -v -run TestWakeUpsSplit $(WAKETESTS)

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || { echo "gofmt needed:"; gofmt -l .; exit 1; }
	$(GO) vet ./...

# gofmt, go vet and staticcheck (pinned; fetched through the module proxy),
# then Prometheus's own check of the alert rules in contrib/prometheus
# (promtool, from Debian's prometheus package).
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
lint: vet
	$(GO) run $(STATICCHECK) ./...
	@command -v promtool >/dev/null || { echo "make lint: promtool not found (apt-get install prometheus)"; exit 1; }
	promtool check rules contrib/prometheus/*.yml

# Every Fuzz target in the tree, FUZZTIME each. Each package with targets
# is built once, instrumented (go test -c -fuzz), and its binary runs each
# target as go test -fuzz would (in the package's directory, with go's
# fuzz cache), rather than go test relinking and vetting it per target.
# The output goes to a temporary directory of this run (removed on exit)
# and is shown on failure.
fuzz:
	@tmp=$$(mktemp -d "$${TMPDIR:-/tmp}/interlink-fuzz.XXXXXX") || exit 1; \
	trap 'rm -rf "$$tmp"' EXIT INT TERM; \
	cache=$$($(GO) env GOCACHE)/fuzz; \
	$(GO) list -f '{{.ImportPath}} {{.Dir}}' ./... >"$$tmp/pkgs" || exit 1; \
	while read -r pkg dir; do \
	  targets=$$(grep -ho '^func Fuzz[A-Za-z0-9_]*' $$dir/*_test.go 2>/dev/null | sed 's/func //'); \
	  [ -n "$$targets" ] || continue; \
	  $(GO) test -c -fuzz=. -o "$$tmp/fuzz.test" $$pkg >"$$tmp/log" 2>&1 || { cat "$$tmp/log"; exit 1; }; \
	  for f in $$targets; do \
	    echo "fuzz $$pkg $$f ($(FUZZTIME))"; \
	    (cd "$$dir" && "$$tmp/fuzz.test" -test.run='^$$' -test.fuzz="^$$f$$" -test.fuzztime=$(FUZZTIME) \
	      -test.fuzzcachedir="$$cache/$$pkg" -test.timeout=10m -test.paniconexit0) >"$$tmp/log" 2>&1 || { cat "$$tmp/log"; exit 1; }; \
	  done; \
	done <"$$tmp/pkgs"

# Solaris and AIX users exist: the binary must keep building there.
cross:
	GOOS=solaris GOARCH=amd64 $(GO) build -o /dev/null ./cmd/interlink
	GOOS=aix GOARCH=ppc64 $(GO) build -o /dev/null ./cmd/interlink
	GOOS=darwin GOARCH=arm64 $(GO) build -o /dev/null ./cmd/interlink

# Go benchmarks, then interlink against iperf3 and sockperf in a namespace lab
# (root; installs the peers with apt-get if missing): interlink as users run
# it (`interlink agent` with its defaults, `interlink bench`), alternating
# with the peers; medians and ratios with their spread; then bench --mode gc
# on a 3-node lab at MTU 9000 and 1500 (blocks/s, agent CPU per block,
# packets per block). Then gate against HAProxy (bench/gatecompare) and mesh
# at 99 healthy nodes, 100 with one blackholed port and 256 healthy
# (bench/meshscale, with peak memory and the agents' CPU per path); every
# comparison runs even when one misses, and make bench exits 1 naming every
# goal missed.
BENCHFLAGS ?= -rounds 5 -time 3s
# The Go benchmarks (lab up/down, lab up pg and galera, check, pmtu verdict
# time, sorting a 200-node mesh result) run six times each and benchstat
# prints their medians.
BENCHSTAT := golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da
bench: build
	$(GO) test -run='^$$' -bench=. -benchtime=3x -count=6 ./... | tee bin/bench.txt
	$(GO) run $(BENCHSTAT) bin/bench.txt
	$(GO) build -o bin/compare ./bench/compare
	$(GO) build -o bin/gatecompare ./bench/gatecompare
	$(GO) build -o bin/meshscale ./bench/meshscale
	@rc=0; \
	./bin/compare -interlink $(BIN) $(BENCHFLAGS) || rc=1; \
	./bin/gatecompare -bin $(BIN) || rc=1; \
	./bin/meshscale -bin $(BIN) || rc=1; \
	exit $$rc

# Man pages into bin/man, one Markdown reference page per command into
# docs/reference and the README's command table, from the command
# definitions (internal/docgen's tests fail when the committed ones are stale).
#
# make docs RERUN=1 (root) also reruns every guide's lab blocks as the page
# has them, uncut, and writes what they print now into the pages (git diff
# shows what changed in the product); the VM guide takes a few minutes.
docs:
	$(GO) run ./internal/docgen -man bin/man -version $(VERSION) -readme README.md -reference docs/reference
ifneq ($(RERUN),)
	INTERLINK_DOCS_RERUN=1 $(GO) test -count=1 -timeout 30m ./internal/doctest/labtest/
	INTERLINK_DOCS_RERUN=1 $(GO) test -count=1 -timeout 30m ./internal/doctest/vmguide/
endif

# .deb and .rpm for amd64 and arm64 into bin/pkg (nfpm, pure Go; pinned to a
# version whose dependencies the module proxy serves).
NFPM    := github.com/goreleaser/nfpm/v2/cmd/nfpm@v2.44.0
PKGDIR  := bin/pkg
ARCHES  := amd64 arm64
package: build
	rm -rf $(PKGDIR) && mkdir -p $(PKGDIR)/man $(PKGDIR)/completion
	for a in $(ARCHES); do GOOS=linux GOARCH=$$a $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(PKGDIR)/interlink-linux-$$a ./cmd/interlink || exit 1; done
	$(GO) run ./internal/docgen -man $(PKGDIR)/man -version $(VERSION)
	gzip -9n $(PKGDIR)/man/*.1
	./$(BIN) completion bash > $(PKGDIR)/completion/interlink.bash
	./$(BIN) completion zsh > $(PKGDIR)/completion/_interlink
	./$(BIN) completion fish > $(PKGDIR)/completion/interlink.fish
	for u in agent gate watch; do sed 's|/usr/local/bin/interlink|/usr/bin/interlink|g' contrib/systemd/interlink-$$u.service > $(PKGDIR)/interlink-$$u.service; done
	git log --date=short --format='%ad %h %s' 2>/dev/null | gzip -9n > $(PKGDIR)/changelog.gz
	for a in $(ARCHES); do \
	  sed -e 's|$${ARCH}|'$$a'|g' -e 's|$${PKGDIR}|$(PKGDIR)|g' -e 's|$${PKG_VERSION}|$(VERSION)|g' contrib/packaging/nfpm.yaml > $(PKGDIR)/nfpm-$$a.yaml; \
	  for f in deb rpm; do $(GO) run $(NFPM) package -f $(PKGDIR)/nfpm-$$a.yaml -p $$f -t $(PKGDIR)/ || exit 1; done; \
	done
	ls -l $(PKGDIR)/*.deb $(PKGDIR)/*.rpm

# Build the packages, then install, use and remove the .deb on this machine
# and inspect the .rpm (root; needs dpkg, rpm and man).
package-check: package
	sh contrib/packaging/check.sh $(PKGDIR)

demo: build
	./$(BIN) lab demo

clean:
	rm -rf bin
