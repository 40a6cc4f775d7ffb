# Top-level commands. Each installs what is missing (scripts/setup.sh) and builds
# only what changed (ninja + ccache).
#   make run            build and train the Fashion-MNIST MLP example (examples/fashion_mnist_mlp.cpp)
#   make test           build and run every C++ test (gtest via ctest, fuzz-input replay)
#   make test-sanitize  the same tests built with ASan + UBSan (build-asan/, clang)
#   make install-test   install into a temporary prefix and build an outside project against it;
#                       pip-install the Python package (wheel and `pip install .`) into virtual environments
#   make fuzz           run the libFuzzer targets (ops; checkpoint, event-file and saved-model readers) for FUZZ_TIME seconds in all (build-asan/)
#   make bench          build and run the benchmarks, side by side with PyTorch (build-bench/)
#   make docs           regenerate the generated docs (docs/gradient_coverage.md, docs/cuda_coverage.md),
#                       then build the HTML documentation (docs-check: Sphinx with warnings as errors, links)
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
FUZZ_TIME ?= 90
CTEST_FLAGS ?= --output-on-failure --timeout 300
GENERATOR := -G Ninja

# ASan/UBSan stop at the first report and fail the run.
SANITIZER_ENV := ASAN_OPTIONS=halt_on_error=1:abort_on_error=0:detect_leaks=1:strict_string_checks=1 \
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1

.PHONY: all setup setup-bench build run test test-sanitize fuzz fuzz-build install-test bench docs docs-check clean

all: build

setup:
	@scripts/setup.sh

setup-bench:
	@scripts/setup.sh bench

$(BUILD_DIR)/build.ninja: | setup
	cmake -S . -B $(BUILD_DIR) $(GENERATOR) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

build: setup $(BUILD_DIR)/build.ninja
	cmake --build $(BUILD_DIR) -j $(JOBS)

run: build
	$(BUILD_DIR)/examples/fashion_mnist_mlp --checkpoint-dir $(BUILD_DIR)/checkpoints/fashion_mnist_mlp

test: build
	cd $(BUILD_DIR) && ctest $(CTEST_FLAGS) -j $(JOBS)

# One sanitizer tree serves the sanitized tests and the fuzzers: clang, ASan + UBSan,
# and libFuzzer's coverage instrumentation in the library (harmless outside a fuzzer).
# One tree instead of two saves CI a third compile of the library.
build-asan/build.ninja: | setup
	cmake -S . -B build-asan $(GENERATOR) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_CXX_COMPILER=clang++ -DEF_SANITIZE=address,undefined -DEF_BUILD_FUZZ=ON $(CMAKE_FLAGS)

test-sanitize: setup build-asan/build.ninja
	cmake --build build-asan -j $(JOBS)
	cd build-asan && $(SANITIZER_ENV) ctest $(CTEST_FLAGS) -j $(JOBS)

install-test: build
	scripts/install_test.sh $(BUILD_DIR)
	scripts/pip_install_test.sh $(BUILD_DIR)

fuzz-build: setup build-asan/build.ninja
	cmake --build build-asan -j $(JOBS) --target op_fuzzer checkpoint_fuzzer event_file_fuzzer saved_model_fuzzer \
	  image_fuzzer

# FUZZ_TIME is shared: half for the ops, an eighth for each file reader.
fuzz: fuzz-build
	scripts/fuzz.sh build-asan/tests/fuzz/op_fuzzer $$(( $(FUZZ_TIME) / 2 )) $(JOBS)
	scripts/fuzz.sh build-asan/tests/fuzz/checkpoint_fuzzer $$(( $(FUZZ_TIME) / 8 )) $(JOBS) \
	  tests/fuzz/checkpoint_corpus tests/fuzz/checkpoint_regressions
	scripts/fuzz.sh build-asan/tests/fuzz/event_file_fuzzer $$(( $(FUZZ_TIME) / 8 )) $(JOBS) \
	  tests/fuzz/event_file_corpus tests/fuzz/event_file_regressions
	scripts/fuzz.sh build-asan/tests/fuzz/saved_model_fuzzer $$(( $(FUZZ_TIME) / 8 )) $(JOBS) \
	  tests/fuzz/saved_model_corpus tests/fuzz/saved_model_regressions
	scripts/fuzz.sh build-asan/tests/fuzz/image_fuzzer $$(( $(FUZZ_TIME) / 8 )) $(JOBS) \
	  tests/fuzz/image_corpus tests/fuzz/image_regressions

build-bench/build.ninja: | setup-bench
	cmake -S . -B build-bench $(GENERATOR) -DCMAKE_BUILD_TYPE=Release \
	  -DEF_BUILD_BENCH=ON -DEF_BUILD_TESTS=OFF $(CMAKE_FLAGS)

bench: setup-bench build-bench/build.ninja
	cmake --build build-bench -j $(JOBS)
	scripts/bench.py --build-dir build-bench

docs: build
	EF_GRADIENT_COVERAGE_OUT=$(CURDIR)/docs/gradient_coverage.md EF_UPDATE_DOCS=1 $(BUILD_DIR)/tests/cpp/eagerflow_tests --gtest_brief=1
	if [ -x $(BUILD_DIR)/tests/cpp/onnx/eagerflow_onnx_tests ]; then EF_UPDATE_DOCS=1 $(BUILD_DIR)/tests/cpp/onnx/eagerflow_onnx_tests --gtest_filter='OnnxExport.CoverageTableIsCurrent' --gtest_brief=1; fi
	$(MAKE) docs-check

# The HTML documentation (Sphinx: guides, Python API from the docstrings, C++ headers),
# with every warning an error, and every relative link of the Markdown files checked.
docs-check: build
	scripts/check_doc_links.py
	PYTHONPATH=$(CURDIR)/$(BUILD_DIR)/python /usr/bin/python3 -m sphinx -b html -W --keep-going -q docs $(BUILD_DIR)/docs/html
	@echo "docs: $(BUILD_DIR)/docs/html/index.html"

clean:
	rm -rf $(BUILD_DIR) build-*
