# tessel — make targets. `make run` and `make test` are the README's two
# set-up commands; both install missing system packages first.

GO ?= go
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: deps build run test test-short bench lint fuzz

deps:
	@scripts/install-deps.sh

build: deps
	$(GO) build -o tessel ./cmd/tessel

# The main job: the Tessel search on a built-in placement (GPT's M-shape,
# the paper's settings).
run: deps
	$(GO) run ./cmd/tessel search --placement m-shape --memory 6 --nr 6 --micro-batches 128

# Every test, the PyTorch end-to-end one included.
test: deps
	$(GO) vet ./...
	$(GO) test ./...

test-short: deps
	$(GO) test -short ./...

# Benchmarks of the searches (see the README's table).
bench: deps
	$(GO) test -run '^$$' -bench . -benchtime 3x ./...

lint: deps
	@test -z "$$(gofmt -l .)" || (gofmt -l . && exit 1)
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

fuzz: deps
	$(GO) test -run '^$$' -fuzz FuzzParse -fuzztime 200000x ./placement
	$(GO) test -run '^$$' -fuzz FuzzParseSchedule -fuzztime 200000x ./schedule
	$(GO) test -run '^$$' -fuzz FuzzParse -fuzztime 200000x ./partition
