# Sourced first by the scripts beside this, on the GPU machine: graphtx from the checkout (not installed there), the
# carried wheels into /tmp/site.
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 9
export PYTHONPATH=/tmp/site:$PWD
OUT=${OUT:-/tmp/gpu-out}
mkdir -p "$OUT"
median_step() {  # median seconds a step after step 20 of a run directory's pretrain log; "-" when it has too few
  python3 -c "
import json, statistics, sys
s = [json.loads(l)['seconds'] for l in open(sys.argv[1] + '/pretrain/log.jsonl') if '\"seconds\"' in l]
print(len(s), '%.4f' % statistics.median(s[20:]) if len(s) > 20 else '-')" "$1"
}
