# Thin wrapper over CMake. `make demo` and `make check` work on a fresh Debian machine.
JOBS  ?= $(shell nproc)
# SANITIZE=1: ASan + UBSan in build-sanitize/ (make check SANITIZE=1 runs the whole suite under them).
ifeq ($(SANITIZE),1)
BUILD ?= build-sanitize
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNPUKIT_SANITIZE=ON
else
BUILD ?= build
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=Release
endif

.PHONY: all deps build check demo bench clean

all: build

deps:
	@bash scripts/install-deps.sh all

$(BUILD)/CMakeCache.txt:
	@cmake -S . -B $(BUILD) $(CMAKE_FLAGS) >/dev/null

build: deps $(BUILD)/CMakeCache.txt
	@cmake --build $(BUILD) -j $(JOBS)

check: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

demo: build
	@bash examples/demo.sh $(BUILD)

bench: build
	@bash bench/run.sh $(BUILD)

clean:
	rm -rf $(BUILD)
