#!/bin/bash
# On the GPU machine (device tool: command "bash benchmarks/gpu/adapt_threads.sh", carry ["gpu", ".whl"]; first
# benchmarks/gpu/prepare.sh here): `graphtx adapt` over the 4,000 abstracts on cuda (bf16 autocast), 300 steps at
# each OMP_NUM_THREADS in "$@" (default: 16 1 4); prints the machine and the median seconds a step after step 20.
# Since 1176ca4 training on a GPU keeps torch to 4 CPU threads unless OMP_NUM_THREADS is set, so set it here.
set -u
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 9
export PYTHONPATH=/tmp/site:$PWD
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; echo "$(nproc) cores; $(uptime)"
for t in "${@:-16 1 4}"; do
  for n in $t; do
    OMP_NUM_THREADS=$n timeout 120 python3 gpu/run_cli.py adapt --corpus gpu/corpus --graphs gpu/graphs --tokens gpu/tokens \
      --teacher gpu/teacher --out /tmp/t$n --steps 300 --seed 0 --device cuda > "${OUT:-/tmp}/t$n.log" 2>&1
    python3 -c "
import json, statistics
s = [json.loads(l)['seconds'] for l in open('/tmp/t$n/pretrain/log.jsonl') if '\"seconds\"' in l]
print('| $n | %d | %.4f |' % (len(s), statistics.median(s[20:])))"
  done
done
