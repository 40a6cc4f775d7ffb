# Top-level commands. Each installs what is missing (scripts/setup.sh) and builds
# only what changed (ninja + ccache).
#   make run     build and run the main example
#   make test    build and run every test
#   make bench   build and run the benchmarks, side by side with PyTorch
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all setup build run test bench test-sanitize fuzz install-test clean

all: build

setup:
	@scripts/setup.sh

$(BUILD_DIR)/build.ninja: | setup
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

build: setup $(BUILD_DIR)/build.ninja
	cmake --build $(BUILD_DIR) -j $(JOBS)

run: build
	$(BUILD_DIR)/examples/eager_basics

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

clean:
	rm -rf $(BUILD_DIR) build-*
