# graphtx: `make demo` sets up and runs the main job on the embedded corpus; `make test` sets up and runs the tests.
PYTHON ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.graphtx-installed
RUN ?= runs/demo
DEMO_ID ?= US-6838984-B2
DEMO_DATA := graphtx/data/demo
SHARED ?= ../shared/data

.PHONY: setup demo test test-slow bench-parse demo-corpus clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q torch==2.13.0
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $@

setup: $(STAMP)

demo: setup
	$(BIN)/graphtx ingest $(DEMO_DATA) --out $(RUN)/corpus --config configs/small.yaml
	$(BIN)/graphtx parse $(RUN)/corpus --out $(RUN)/graphs --config configs/small.yaml
	$(BIN)/graphtx show $(RUN)/graphs --id $(DEMO_ID) --kind first_claim --out $(RUN)/graph_first_claim.png
	@echo "demo outputs: corpus $(RUN)/corpus, graphs $(RUN)/graphs, rendered graph $(RUN)/graph_first_claim.png"

test: setup
	$(BIN)/python -m pytest -q

test-slow: setup
	$(BIN)/python -m pytest -q -m slow

bench-parse: setup
	$(BIN)/python benchmarks/bench_parse.py --grants $(SHARED)/uspto-grants --workers 1

# Rebuild the embedded demo corpus from the shared US grants (public domain).
demo-corpus: setup
	rm -rf /tmp/graphtx-demo-corpus
	$(BIN)/graphtx ingest $(SHARED)/uspto-grants --out /tmp/graphtx-demo-corpus --quiet || true
	$(BIN)/python -m graphtx.data.make_demo /tmp/graphtx-demo-corpus $(DEMO_DATA)

clean:
	rm -rf $(RUN) .pytest_cache
