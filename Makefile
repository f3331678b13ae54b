# deep_gemm developer commands. `make help` lists them; `make test` is exactly what CI runs.
SHELL := /bin/bash
.DEFAULT_GOAL := help
VENV ?= .venv
PY := $(VENV)/bin/python
BUILD_ENV := CC=gcc CXX=g++ MAX_JOBS=$(shell nproc)

.PHONY: help setup regenerate check verify build lint typecheck test test-only bench demo clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-11s %s\n", $$1, $$2}'

$(VENV)/.installed: requirements-dev.txt
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -r requirements-dev.txt
	touch $@

setup: $(VENV)/.installed ## create .venv with torch (CPU) and the dev tools

regenerate: setup ## regenerate every file made from ops.yaml
	$(PY) -m codegen regenerate

check: setup ## drift check: generated files must match ops.yaml
	$(PY) -m codegen check

verify: setup ## check every op's C++ implementation against its schema (libclang)
	$(PY) -m codegen verify

build: setup ## build deep_gemm/_C_extension.abi3.so in place (CPU, or CUDA when torch has it)
	$(PY) -m codegen check --quiet
	$(BUILD_ENV) $(PY) setup.py -q build_ext --inplace

lint: setup ## ruff lint and format check
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

typecheck: setup ## mypy --strict on the generator
	$(PY) -m mypy

test-only: ## run pytest on what is already built
	$(PY) -m pytest -q

test: check verify build ## what CI runs: drift check, build, lint, types, then the tests
	$(MAKE) --no-print-directory lint typecheck
	$(PY) -m pytest -q

bench: build ## benchmark tables (host overhead, tooling)
	$(PY) benchmarks/overhead.py
	$(PY) benchmarks/tooling.py

demo: build ## regenerate, build, import and call a few ops
	$(PY) -m codegen regenerate
	PYTHONPATH=$(CURDIR) $(PY) examples/demo.py

clean: ## remove build outputs
	rm -rf build deep_gemm/_C_extension*.so
