#!/bin/bash
# One change, the processes that build stage pretrain's batches ahead of the model (train.pretrain_batch_workers,
# graphtx/train/prefetch.py) while graphtx adapt trains on cuda (bf16 autocast, the trainer's cap of 4 torch threads):
# 300 steps over the 4,000 abstracts of prepare.sh for each count given (default: 0 2 4 8; -1: auto), the same seed, so the
# same batches. First the suite's CUDA and prefetch tests. Prints a row a count: the exit status, the steps, the median
# seconds a step after step 20, the median seconds of it spent waiting for the batch, and whether every step's batch
# (its graphs and nodes) is the in-line run's.
#     bash benchmarks/gpu/adapt_workers.sh [0 2 4 8]
set -u
. benchmarks/gpu/setup_on_gpu.sh
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; echo "$(nproc) cores; $(uptime)"
timeout 300 python3 -m pytest -q -p no:cacheprovider tests/train/test_cuda.py tests/train/test_prefetch.py 2>&1 | tail -4
counts=("$@")
((${#counts[@]})) || counts=(0 2 4 8)
echo "| batch workers | rc | steps | median s a step | median s waiting for the batch | batches as in line |"
for n in "${counts[@]}"; do
  rm -rf "/tmp/w$n"
  printf 'train:\n  pretrain_batch_workers: %s\n' "$n" > "/tmp/w$n.yaml"
  timeout 150 python3 -m graphtx adapt --config "/tmp/w$n.yaml" --corpus gpu/corpus --graphs gpu/graphs \
    --tokens gpu/tokens --teacher gpu/teacher --out "/tmp/w$n" --steps 300 --seed 0 --device cuda > "$OUT/w$n.log" 2>&1
  rc=$?
  cp "/tmp/w$n/pretrain/log.jsonl" "$OUT/w$n.jsonl" 2>/dev/null
  python3 - "$n" "$rc" "${counts[0]}" <<'EOF'
import json, statistics, sys
n, rc, first = sys.argv[1:]
def rows(c):
    try:
        return [json.loads(l) for l in open(f"/tmp/w{c}/pretrain/log.jsonl")]
    except OSError:
        return []
r, base = rows(n), rows(first)
med = lambda k: "%.4f" % statistics.median(x[k] for x in r[20:]) if len(r) > 20 else "-"
same = [(x["graphs"], x["nodes"]) for x in r] == [(x["graphs"], x["nodes"]) for x in base[: len(r)]]
print(f"| {n} | {rc} | {len(r)} | {med('seconds')} | {med('batch_seconds')} | {'yes' if same and r else 'no'} |")
EOF
done
