# Common loops. `make test` is the test command CI runs (README).
GO      ?= go
PKGS    ?= ./...
FUZZTIME ?= 20s

.PHONY: run build test bench fuzz lint darwin

run: ## run the daemon on the built-in defaults
	$(GO) run ./cmd/nudge run

build:
	$(GO) build -o bin/nudge ./cmd/nudge

test: ## every test: unit, real parts, end to end
	$(GO) test -count=1 -timeout 30m $(PKGS)

bench: ## benchmarks, side by side in one run
	$(GO) test -run '^$$' -bench . -benchmem -count=1 ./internal/...
	bash bench/detect.sh

fuzz: ## each fuzz target for FUZZTIME; new corpus entries stay in testdata/fuzz
	@for pkg in $$($(GO) list ./internal/...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

lint: ## gofmt, go vet, and the macOS build without cgo
	@test -z "$$(gofmt -l .)" || { gofmt -l .; echo "gofmt: files above need formatting"; exit 1; }
	$(GO) vet $(PKGS)
	$(MAKE) darwin

darwin: ## the Mac build must keep compiling (no cgo here)
	GOOS=darwin GOARCH=arm64 CGO_ENABLED=0 $(GO) build ./...
	GOOS=darwin GOARCH=arm64 CGO_ENABLED=0 $(GO) vet ./...
	GOOS=darwin GOARCH=amd64 CGO_ENABLED=0 $(GO) build ./...
