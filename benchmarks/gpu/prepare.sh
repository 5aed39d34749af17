#!/bin/bash
# Prepares, on the CPU machine, what the scripts beside this read on a GPU machine: 4,000 of the 42,356 software
# abstracts (transfer-ft-42k-read's W/ftabs/abstracts.parquet and W/ft/mined/, the read-all build's tokens), parsed,
# mpnet's vectors of them (from the peer vector cache when it holds them), and the wheels a GPU image without
# graphtx's extras lacks (PyStemmer and bm25s: adapt records the corpus's term profile), into gpu/ and .whl/ (both
# ignored by git). Copy the checkout with them to the GPU machine and run the scripts from its root.
#     . .venv/bin/activate && bash benchmarks/gpu/prepare.sh W      # W: the regressions' work folder
set -eu
W=${1:?the regressions work folder (it holds ftabs/ and ft/mined/)}
PYTHON_ON_GPU=${PYTHON_ON_GPU:-3.12}  # the GPU machine's Python, for the wheels
rm -rf gpu && mkdir -p gpu .whl
python benchmarks/studies/subset_corpus.py "$W/ftabs/abstracts.parquet" "$W/ft/mined/citations_all.tsv" --size 4000 --seed 0 \
    --out gpu/sub4k.parquet
graphtx ingest gpu/sub4k.parquet --out gpu/corpus --quiet
graphtx parse gpu/corpus --out gpu/graphs --config configs/small.yaml --cache '' --quiet
graphtx teacher gpu/corpus --peer mpnet --out gpu/teacher --quiet
cp -r "${TOKENS:-$W/ftabs/read-all-s0/tokens}" gpu/tokens  # TOKENS: another read-all seed's tokens
python -m pip download -q --no-deps --only-binary=:all: --python-version "$PYTHON_ON_GPU" --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 --platform manylinux1_x86_64 -d .whl \
    PyStemmer==3.1.0 bm25s==0.3.16 gensim==4.4.0 smart_open==9.0.2  # gensim: the CUDA tests' token pretraining
