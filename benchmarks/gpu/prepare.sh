#!/bin/bash
# Prepares, on the CPU machine, what benchmarks/gpu/adapt_step.sh and adapt_threads.sh read on the GPU machine:
# 4,000 of the 42,356 software abstracts (transfer-ft-42k-read's W/ftabs/abstracts.parquet and W/ft/mined), parsed,
# mpnet's vectors of them (from the peer vector cache), a build's tokens, and the wheels the GPU image lacks
# (PyStemmer and bm25s: adapt records the corpus's term profile). gpu/ and .whl/ are ignored: the device tool's
# run carries them (carry: ["gpu", ".whl"]).
#     bash benchmarks/gpu/prepare.sh W        # W: a regression work folder holding ftabs/ and ft/mined/
set -eu
W=${1:?the regressions work folder}
grep -qx "/gpu/" .git/info/exclude || echo "/gpu/" >> .git/info/exclude
grep -qx "/.whl/" .git/info/exclude || echo "/.whl/" >> .git/info/exclude
python benchmarks/studies/subset_corpus.py "$W/ftabs/abstracts.parquet" "$W/ft/mined/citations_all.tsv" --size 4000 --seed 0 \
    --out /tmp/sub4k.parquet
graphtx ingest /tmp/sub4k.parquet --out gpu/corpus --quiet
graphtx parse gpu/corpus --out gpu/graphs --config configs/small.yaml --cache '' --quiet
graphtx teacher gpu/corpus --peer mpnet --out gpu/teacher --quiet
cp -r "$W/ftabs/read-all-s0/tokens" gpu/tokens
cp benchmarks/gpu/run_cli.py gpu/run_cli.py
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 --platform manylinux1_x86_64 -d .whl \
    PyStemmer==3.1.0 bm25s==0.3.16
