# Entry points. `make demo` and `make test` work on a fresh Debian 12 machine:
# they install what is missing (scripts/install-deps.sh), configure, build and run.
PRESET ?= release
BUILD  := build/$(PRESET)
DEMO_OUT ?= out/demo

.PHONY: all deps configure build test test-asan demo bench fuzz fuzz-run clean

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

clean:
	rm -rf build out
