# Common loops. `make test` is the test command CI runs (README); `make help`
# lists the targets.
GO      ?= go
PKGS    ?= ./...
FUZZTIME ?= 20s
# go.mod's toolchain line names the Go release nudge is built with (the
# standard library's security fixes); auto fetches it through the module
# proxy where the installed Go is older, and keeps a newer one.
export GOTOOLCHAIN ?= auto
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
GOVULNCHECK ?= golang.org/x/vuln/cmd/govulncheck@v1.9.0
# VULNDB is govulncheck's database: its own online one unless set
# (.ci/vulndb.sh builds one from the module proxy).
VULNDB  ?=
# The version a build reports (nudge --version): the git description of
# the checkout, else what the Go toolchain records.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null)
LDFLAGS := $(if $(VERSION),-X nudge/internal/version.Release=$(VERSION))

.PHONY: help run build app test unit race torture bench fuzz lint vuln darwin drift

help: ## list the targets
	@awk -F':.*## ' '/^[a-z]+:.*## / { printf "  %-9s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)

run: build ## run the daemon on the built-in defaults
	bin/nudge run

build: ## bin/nudge (the first build compiles SQLite: about a minute)
	@test -x bin/nudge || echo "building bin/nudge; the first build compiles SQLite and takes about a minute…"
	$(GO) build -ldflags '$(LDFLAGS)' -o bin/nudge ./cmd/nudge

app: ## dist/nudge.app; with the menu-bar icon only when built on a Mac (cgo)
	GOOS=darwin CGO_ENABLED=$(if $(filter Darwin,$(shell uname -s)),1,0) $(GO) build -ldflags '$(LDFLAGS)' -o dist/darwin/nudge ./cmd/nudge
	$(GO) run ./internal/macapp/makeapp -exe dist/darwin/nudge -out dist/nudge.app -version '$(or $(VERSION),dev)'

test: ## every test: unit, real parts, end to end; the program's pages given back in a PIE build too
	$(GO) test -count=1 -timeout 30m $(PKGS)
	$(GO) test -count=1 -buildmode=pie ./internal/memory/

unit: ## the quick loop: the packages' own tests, without end to end and without the tests that take seconds (-short)
	$(GO) test -short -count=1 ./internal/... ./cmd/...

race: ## the packages' own tests, and the real daemon end to end, under the race detector (run by .ci/run)
	$(GO) test -race -count=1 -timeout 20m ./internal/... ./cmd/...
	NUDGE_E2E_RACE=1 $(GO) test -race -count=1 -timeout 20m ./e2e/cli/ ./e2e/mcp/

torture: ## the crash and bad-input suite, CI-sized; NUDGE_TORTURE_SCALE=N runs N times as many kills and turns
	$(GO) test -tags torture -count=1 -timeout 60m -v ./e2e/torture/

bench: ## benchmarks, side by side in one run (≈ 12 min; BENCH_FLAGS=-long adds the long rows)
	$(GO) test -run '^$$' -bench . -benchmem -count=1 ./internal/...
	$(GO) run ./bench/perf $(BENCH_FLAGS)

fuzz: ## each fuzz target for FUZZTIME; new corpus entries stay in testdata/fuzz
	@for pkg in $$($(GO) list ./internal/...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

drift: ## the newest published agent CLIs against the real-CLI end-to-end tests (AGENTS=… to choose)
	bash .ci/drift.sh

lint: ## gofmt, go vet, staticcheck, go mod verify, and the macOS build without cgo
	@test -z "$$(gofmt -l .)" || { gofmt -l .; echo "gofmt: files above need formatting"; exit 1; }
	$(GO) mod verify
	$(GO) vet $(PKGS)
	$(GO) vet -tags torture ./e2e/torture/
	$(GO) vet -tags nudge_testhooks ./internal/inject/
	$(GO) run $(STATICCHECK) $(PKGS)
	$(GO) run $(STATICCHECK) -tags torture ./e2e/torture/
	$(GO) run $(STATICCHECK) -tags nudge_testhooks ./internal/inject/
	$(MAKE) darwin

vuln: ## govulncheck: a known vulnerability the code can reach fails (VULNDB=file://… for an offline database)
	$(GO) run $(GOVULNCHECK) $(if $(VULNDB),-db $(VULNDB)) $(PKGS)

darwin: ## the Mac build must keep compiling (no cgo here)
	GOOS=darwin GOARCH=arm64 CGO_ENABLED=0 $(GO) build ./...
	GOOS=darwin GOARCH=arm64 CGO_ENABLED=0 $(GO) vet ./...
	GOOS=darwin GOARCH=amd64 CGO_ENABLED=0 $(GO) build ./...
