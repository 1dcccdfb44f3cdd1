# tessel — make targets. `make run` and `make test` are the README's two
# set-up commands; both install missing system packages first, each only
# what it needs (the search: Z3; the tests: Z3, PyTorch and chromium).

GO ?= go
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: deps deps-search build run test test-short bench lint fuzz docs-check docs-update

# Everything, PyTorch included (the end-to-end test of the workers).
deps:
	@scripts/install-deps.sh all

# What the search needs: Z3 and a C compiler, no PyTorch.
deps-search:
	@scripts/install-deps.sh search

build: deps-search
	$(GO) build -o tessel ./cmd/tessel

# The main job: the Tessel search on a built-in placement (GPT's M-shape,
# the paper's settings).
run: deps-search
	$(GO) run ./cmd/tessel search --placement m-shape --memory 6 --nr 6 --micro-batches 128

# Every test, the PyTorch end-to-end one included. The longer timeout is
# for a loaded machine (the search's package passes 10 minutes there), not
# for slower tests.
test: deps
	$(GO) vet ./...
	$(GO) test -timeout 30m ./...

test-short: deps-search
	$(GO) test -short ./...

# Benchmarks of the searches (see the README's table).
bench: deps-search
	$(GO) test -run '^$$' -bench . -benchtime 3x ./...

lint: deps-search
	@test -z "$$(gofmt -l .)" || (gofmt -l . && exit 1)
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

# Every Fuzz function of every package, one after another (go test fuzzes
# one function per run), FUZZTIME each: FUZZTIME=30s make fuzz for time.
FUZZTIME ?= 200000x
fuzz: deps-search
	@for file in $$(grep -rlE '^func Fuzz' --include='*_test.go' .); do \
	  for fn in $$(grep -oE '^func Fuzz[A-Za-z0-9_]*' $$file | cut -d' ' -f2); do \
	    echo "fuzz ./$$(dirname $$file) $$fn ($(FUZZTIME))"; \
	    $(GO) test -run '^$$' -fuzz "^$$fn\$$" -fuzztime $(FUZZTIME) ./$$(dirname $$file) || exit 1; \
	  done; \
	done

# Re-run the command behind every checked block of README.md and docs/*.md
# (docs/README.md says how blocks are written); docs-update rewrites the
# blocks whose output changed. go test ./... checks the README's alone.
docs-check: deps-search
	$(GO) run ./cmd/docscheck

docs-update: deps-search
	$(GO) run ./cmd/docscheck -update
