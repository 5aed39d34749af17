#!/bin/bash
# graphtx adapt --steps all over prepare.sh's 4,000 abstracts on cuda (stopped at 300 s), the encoding of their
# description graphs, and benchmarks/bench_train_step.py's model-only step: the first GPU figures of 2026-11-30
# (benchmarks/RESULTS.md, Speed). Before the trainer capped torch's threads this ran at torch's default (16 there).
#     bash benchmarks/gpu/adapt_gpu.sh
set -u
. benchmarks/gpu/setup_on_gpu.sh
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv; nproc; python3 -V
  python3 -c "import torch, torch_geometric as g; print('torch', torch.__version__, 'pyg', g.__version__, torch.cuda.get_device_name(0))"; uptime; }
rm -rf /tmp/r
timeout 300 python3 -m graphtx adapt --corpus gpu/corpus --graphs gpu/graphs --tokens gpu/tokens --teacher gpu/teacher \
  --out /tmp/r --steps all --seed 0 --device cuda > "$OUT/adapt.log" 2>&1
echo "adapt rc $?; steps and median s a step after step 20: $(median_step /tmp/r)"
if [ -d /tmp/r/model ]; then
  start=$(date +%s.%N)
  timeout 90 python3 -m graphtx encode --model /tmp/r/model --graphs gpu/graphs --kind description --out /tmp/v.parquet \
    --device cuda > "$OUT/encode.log" 2>&1
  echo "encode rc $?; $(python3 -c "import time; print(round(time.time() - $start, 1))") s"
fi
(cd benchmarks && timeout 90 python3 bench_train_step.py --graphs ../gpu/graphs --tokens ../gpu/tokens --device cuda \
  --graphs-per-batch 160 320)
