# Entry points. `make demo` and `make test` work on a fresh Debian 12 machine:
# they install what is missing (scripts/install-deps.sh), configure, build and run.
PRESET ?= release
BUILD  := build/$(PRESET)
DEMO_OUT ?= out/demo

.PHONY: all deps configure build test test-asan demo bench fuzz fuzz-run fuzz-long clean

all: build

deps:
	@bash scripts/install-deps.sh

configure: deps
	@cmake --preset $(PRESET) >/dev/null

build: configure
	@cmake --build --preset $(PRESET)

test: build
	@ctest --preset $(PRESET)

test-asan:
	@$(MAKE) --no-print-directory test PRESET=asan

demo: build
	@bash scripts/demo.sh $(BUILD)/infereng $(DEMO_OUT)

fuzz: deps
	@cmake --preset fuzz >/dev/null && cmake --build --preset fuzz

FUZZ_SECONDS ?= 60
fuzz-run: fuzz
	@bash scripts/fuzz.sh $(FUZZ_SECONDS)

# The long routine (docs/FUZZING.md): every harness for an hour, two at a time, growing a
# corpus kept outside the checkout, then a table of executions, coverage and findings.
FUZZ_LONG_SECONDS ?= 3600
FUZZ_JOBS ?= 2
FUZZ_CORPUS ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/infereng/fuzz-corpus
fuzz-long: fuzz
	@bash scripts/fuzz.sh -j $(FUZZ_JOBS) --corpus "$(FUZZ_CORPUS)" $(FUZZ_LONG_SECONDS) $(FUZZ_NAMES)

clean:
	rm -rf build out
