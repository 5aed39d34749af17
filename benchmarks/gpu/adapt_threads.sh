#!/bin/bash
# One change, torch's CPU threads while graphtx adapt trains on cuda (bf16 autocast): 300 steps over the 4,000
# abstracts of prepare.sh for each setting given (default: default 1 4), "default" leaving OMP_NUM_THREADS unset (the
# trainer's own cap, graphtx/train/distributed.py), a number setting it. Prints a row a setting: the threads, torch's
# default count, the exit status, the steps and the median seconds a step after step 20.
#     bash benchmarks/gpu/adapt_threads.sh [default 1 4 16]
set -u
. benchmarks/gpu/setup_on_gpu.sh
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; echo "$(nproc) cores; $(uptime)"
settings=("$@")
((${#settings[@]})) || settings=(default 1 4)
echo "| OMP_NUM_THREADS | torch's default threads | rc | steps | median s a step |"
for n in "${settings[@]}"; do
  rm -rf "/tmp/t$n"  # adapt resumes a run directory: a fresh one a setting
  if [ "$n" = default ]; then unset OMP_NUM_THREADS; else export OMP_NUM_THREADS=$n; fi
  threads=$(python3 -c "import torch; print(torch.get_num_threads())")
  timeout 120 python3 -m graphtx adapt --corpus gpu/corpus --graphs gpu/graphs --tokens gpu/tokens --teacher gpu/teacher \
    --out "/tmp/t$n" --steps 300 --seed 0 --device cuda > "$OUT/t$n.log" 2>&1
  rc=$?
  read -r steps median < <(median_step "/tmp/t$n" 2>/dev/null || echo "0 -")
  echo "| $n | $threads | $rc | $steps | $median |"
done
unset OMP_NUM_THREADS
