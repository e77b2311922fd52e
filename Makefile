# Thin wrapper over CMake. `make demo` and `make check` work on a fresh Debian machine.
# No "Entering directory" lines from the generated makefiles: a tool's output is what the user reads.
MAKEFLAGS += --no-print-directory
JOBS  ?= $(shell nproc)
# SANITIZE=1: ASan + UBSan in build-sanitize/ (make check SANITIZE=1 runs the whole suite under them).
# AVX2=1: the kernels as a host without AVX-512 runs them, on any x86-64 host with AVX2: a Haswell build in
# build-avx2/ and oneDNN held to AVX2 (make check AVX2=1; docs/testing.md).
ifeq ($(SANITIZE),1)
BUILD ?= build-sanitize
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNPUKIT_SANITIZE=ON
else ifeq ($(AVX2),1)
BUILD ?= build-avx2
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=Release -DNPUKIT_NATIVE=OFF -DCMAKE_CXX_FLAGS=-march=haswell
export ONEDNN_MAX_CPU_ISA := AVX2
else
BUILD ?= build
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=Release
endif

# make fuzz: libFuzzer on every parser (clang build in build-fuzz/), FUZZ_SECONDS per target.
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60

# make install PREFIX=DIR: the six tools and their data under DIR (bin/, share/npukit/); make package: a .deb.
PREFIX ?= /usr/local

.PHONY: all deps build check demo examples bench fuzz install package clean

all: build

deps:
	@bash scripts/install-deps.sh all

$(BUILD)/CMakeCache.txt:
	@cmake -S . -B $(BUILD) $(CMAKE_FLAGS) >/dev/null

build: deps $(BUILD)/CMakeCache.txt
	@cmake --build $(BUILD) -j $(JOBS)

check: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The demo's output is the point: the build stays quiet unless it fails (its log is $(BUILD)/build.log).
demo: deps $(BUILD)/CMakeCache.txt
	@echo "== building npukit in $(BUILD)/ (first time: several minutes; log: $(BUILD)/build.log)"
	@cmake --build $(BUILD) -j $(JOBS) > $(BUILD)/build.log 2>&1 || { tail -30 $(BUILD)/build.log; exit 1; }
	@bash examples/demo.sh $(BUILD)

# make examples: the models, inputs and configs the docs' examples use, in $(BUILD)/examples (README.md).
examples: build
	@/usr/bin/python3 examples/make_examples.py $(BUILD)/examples

bench: build
	@bash bench/run.sh $(BUILD)

fuzz:
	@bash scripts/install-deps.sh fuzz
	@[ -f $(FUZZ_BUILD)/CMakeCache.txt ] || CC=clang CXX=clang++ cmake -S . -B $(FUZZ_BUILD) \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNPUKIT_FUZZ=ON >/dev/null
	@cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzz_targets
	@bash fuzz/run.sh long $(FUZZ_BUILD) $(FUZZ_BUILD)/fuzz-work $(FUZZ_SECONDS)

install: build
	@cmake --install $(BUILD) --prefix "$(PREFIX)"

package: build
	@cd $(BUILD) && cpack -G DEB

clean:
	rm -rf $(BUILD)
