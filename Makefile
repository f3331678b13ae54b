# deep_gemm developer commands. `make help` lists them; `make test` is exactly what CI runs.
SHELL := /bin/bash
.DEFAULT_GOAL := help
VENV ?= .venv
PY := $(VENV)/bin/python
BUILD_ENV := CC=gcc CXX=g++ MAX_JOBS=$(shell nproc)

# Hand-written C++ for clang-format (.clang-format); csrc/generated/ is written by python -m codegen.
CPP_SOURCES = $(shell find csrc \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \) \
                -not -path 'csrc/generated/*' | LC_ALL=C sort)

.PHONY: help setup hooks regenerate check verify build lint format typecheck stubtest test test-only bench ptxas demo clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-11s %s\n", $$1, $$2}'

$(VENV)/.installed: requirements-dev.txt
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -r requirements-dev.txt
	touch $@

setup: $(VENV)/.installed ## create .venv with torch (CPU) and the dev tools

hooks: setup ## install the git pre-commit hooks (.pre-commit-config.yaml)
	$(VENV)/bin/pre-commit install

regenerate: setup ## regenerate every file made from ops.yaml (and examples/tiny_ext/ops.yaml)
	$(PY) -m codegen regenerate
	$(PY) -m codegen regenerate --manifest examples/tiny_ext/ops.yaml

check: setup ## drift check: generated files must match ops.yaml (and examples/tiny_ext/ops.yaml)
	$(PY) -m codegen check
	$(PY) -m codegen check --manifest examples/tiny_ext/ops.yaml

verify: setup ## check every op's C++ implementation against its schema (libclang)
	$(PY) -m codegen verify

build: setup ## build deep_gemm/_C_extension.abi3.so in place (CPU, or CUDA when torch has it)
	$(PY) -m codegen check --quiet
	$(BUILD_ENV) $(PY) setup.py -q build_ext --inplace

lint: setup ## ruff lint and format check, clang-format check of the hand-written C++
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(VENV)/bin/clang-format --dry-run --Werror $(CPP_SOURCES)

format: setup ## apply ruff format and clang-format
	$(PY) -m ruff format .
	$(VENV)/bin/clang-format -i $(CPP_SOURCES)

typecheck: setup ## mypy --strict on the generator and tools, and on examples/typed_usage.py (the stub as users see it)
	$(PY) -m mypy
	$(PY) -m mypy --strict examples/typed_usage.py

stubtest: build ## mypy stubtest: the generated stubs against the built extension
	$(PY) tools/stubtest.py

test-only: ## run pytest on what is already built
	$(PY) -m pytest -q

test: check verify build ## what CI runs: drift check, C++ verify, build, lint, types, stubtest, then the tests
	$(MAKE) --no-print-directory lint typecheck stubtest
	$(PY) -m pytest -q

bench: build ## benchmark tables (host overhead, tooling)
	$(PY) benchmarks/overhead.py
	$(PY) benchmarks/tooling.py

ptxas: setup ## ptxas's registers, stack frames and spills of every sm90a kernel (nvcc, no GPU; installs the cutlass headers)
	$(PY) -c "import cutlass_library" 2>/dev/null || $(PY) -m pip install -q --no-deps nvidia-cutlass==4.2.0.0
	$(PY) tools/ptxas_report.py

demo: setup ## regenerate, build, import and call a few ops
	$(PY) -m codegen regenerate
	$(MAKE) --no-print-directory build
	PYTHONPATH=$(CURDIR) $(PY) examples/demo.py

clean: ## remove build outputs
	rm -rf build deep_gemm/_C_extension*.so
