# Session 7, call D (last): gemv_int8 with warps given equal rows and, for Q4_0/Q4_K, two
# sub-blocks a lane (1,152-byte chunks). GPU tests of every tiling the tests name, Nsight
# Compute at both big shapes for the default and the one-sub-block tiling, then one request
# beside mlx-lm (step trace) and with each block's MLP half compiled (benchmarks/ab.py).
export VEXEL_CACHE=/tmp/vx
timeout 150 python3 -m pytest -q -p no:cacheprovider --tb=short tests/test_quant_kernels.py -k "gguf_kernel and (int8 or -1-)" 2>&1 | tail -6
cat > /tmp/ncu_d.py <<'PY'
import sys; sys.path.insert(0, "benchmarks")
import mlx.core as mx
from gguf import GGMLQuantizationType as Q
from kernels import random_blocks
from vexel_core.quant.kernels import library
from vexel_core.quant.kernels.library import Int8Tiling, default_int8_tiling
lib = library("cuda")
for name in ("Q4_0", "Q4_K", "Q8_0", "Q6_K"):
    t = Q[name]
    for n, k in ((14336, 4096), (4096, 14336)):
        raw = random_blocks(t, n, k); x = mx.random.normal((1, k)).astype(mx.bfloat16); mx.eval(raw, x)
        d = default_int8_tiling(t)
        other = Int8Tiling(stages=3, per_lane=1) if d.per_lane == 2 else Int8Tiling(stages=4)
        for tiling in (d, other):
            try:
                for _ in range(2):
                    mx.eval(lib.gemv(x, raw, t, tiling=tiling))
            except Exception as e:  # e.g. more than 48 KiB of shared memory
                print(name, n, k, tiling, "fails:", str(e)[:200], file=sys.stderr)
PY
timeout 150 ncu --clock-control none --kernel-name regex:vx_gemv --csv --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed python3 /tmp/ncu_d.py > $OUT/ncu.csv 2>&1
grep fails $OUT/ncu.csv | cut -c1-250
python3 benchmarks/ncu_summary.py $OUT/ncu.csv
B="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 --kv-cache-memory 16GiB"
timeout 150 vexel $B --compare mlx-lm --json-out $OUT/bs1.json --trace-steps $OUT/steps-bs1.jsonl 2>&1 | grep -E "tok/s|ITL|x$|rror"
timeout 60 python3 benchmarks/ab.py --compile-mlp $B --json-out $OUT/bs1-compiled-mlp.json --trace-steps $OUT/steps-bs1-compiled-mlp.jsonl 2>&1 | grep -E "generated tok/s|ITL|rror"
python3 - $OUT/steps-bs1.jsonl $OUT/steps-bs1-compiled-mlp.jsonl <<'PY'
import json, sys, statistics as st
for f in sys.argv[1:]:
    d = [json.loads(l) for l in open(f)][5:]
    print(f.split("/")[-1], "median ms: build", round(st.median((r['launch_s'] - r['submit_s']) * 1e3 for r in d), 2),
          "submit", round(st.median(r['submit_s'] * 1e3 for r in d), 2), "wait", round(st.median(r['wait_s'] * 1e3 for r in d), 2),
          "interval", round(st.median((b['start_s'] - a['start_s']) * 1e3 for a, b in zip(d, d[1:])), 2))
PY
