#!/bin/bash
# Where a GPU adapt step's time goes: cProfile over 400 steps of graphtx adapt on cuda (prepare.sh's 4,000 abstracts);
# prints the median step under the profiler and the functions by cumulative and by own time.
#     bash benchmarks/gpu/profile_adapt.sh
set -u
. benchmarks/gpu/setup_on_gpu.sh
rm -rf /tmp/p
timeout 170 python3 -m cProfile -o "$OUT/prof.out" -m graphtx adapt --corpus gpu/corpus --graphs gpu/graphs \
  --tokens gpu/tokens --teacher gpu/teacher --out /tmp/p --steps 400 --seed 0 --device cuda > "$OUT/prof.log" 2>&1
echo "rc $?; steps and median s a step under cProfile: $(median_step /tmp/p)"
python3 -c "
import pstats, sys
p = pstats.Stats(sys.argv[1])
p.sort_stats('cumulative').print_stats(40)
p.sort_stats('tottime').print_stats(25)" "$OUT/prof.out"
