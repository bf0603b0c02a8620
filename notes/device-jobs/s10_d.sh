# Session 10, call D (fresh machine), the last: (1) A/B of gemv_int8's prologue (this session
# fills every staging slot before rounding x; notes/device-jobs/s10_gemv_int8_before.cuh is
# the kernel before), Nsight Compute on the defaults, new/old/new/old in one run; (2) the
# GPU tests of the changed kernels and the engine; (3) one Q4_0 request beside mlx-lm.
#   source .devkit/setup.sh && bash notes/device-jobs/s10_d.sh
export VEXEL_CACHE=/tmp/vx
K=vexel_core/quant/kernels/cuda/gemv_int8.cuh
cp $K /tmp/gemv_int8_after.cuh
prologue() {
  timeout 60 ncu --clock-control none --kernel-name regex:vx_gemv_int8 --csv \
    --print-units base --metrics gpu__time_duration.sum python3 - > /tmp/prologue-$1.csv 2>&1 <<'PY'
import sys
import mlx.core as mx
from gguf import GGMLQuantizationType as Q
sys.path.insert(0, "benchmarks")
from kernels import random_blocks
from vexel_core.quant.kernels import library
lib = library("cuda")
for rows, cols in ((14336, 4096), (4096, 14336)):
    x = mx.random.normal((1, cols)).astype(mx.bfloat16)
    for t in (Q.Q4_0, Q.Q4_K, Q.Q6_K):
        raw = random_blocks(t, rows, cols); mx.eval(raw, x)
        for _ in range(3):
            mx.eval(lib.gemv(x, raw, t))
PY
}
for round in 1 2; do
  cp /tmp/gemv_int8_after.cuh $K; prologue "after-$round"
  cp notes/device-jobs/s10_gemv_int8_before.cuh $K; prologue "before-$round"
done
cp /tmp/gemv_int8_after.cuh $K
python3 - /tmp/prologue-*.csv <<'PY'
import csv, statistics, sys
for path in sys.argv[1:]:
    rows = list(csv.reader(open(path)))
    hdr = next(r for r in rows if r and r[0] == "ID")
    name, value = hdr.index("Kernel Name"), hdr.index("Metric Value")
    times = {}
    for r in rows[rows.index(hdr) + 1:]:
        if len(r) > value:
            kernel = r[name].split("(")[0].replace("custom_kernel_vx_gemv_int8_", "")
            times.setdefault(kernel, []).append(float(r[value].replace(",", "")) / 1e3)
    print(path.split("/")[-1], "  ".join(f"{k}: {statistics.median(v):.2f} us" for k, v in times.items()))
PY
timeout 200 python3 -m pytest -q -p no:cacheprovider --tb=short tests/test_quant_kernels.py -k int8 > $OUT/tests.txt 2>&1
echo "test_quant_kernels -k int8: $(tail -1 $OUT/tests.txt)"
for t in test_norm_kernels test_compiled_decode test_attention_kernels test_engine; do
  timeout 90 python3 -m pytest -q -p no:cacheprovider --tb=short tests/$t.py > /tmp/t.txt 2>&1
  cat /tmp/t.txt >> $OUT/tests.txt; echo "$t: $(tail -1 /tmp/t.txt)"
done
B="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 --kv-cache-memory 16GiB"
timeout 150 vexel $B --compare mlx-lm --json-out $OUT/bs1.json --trace-steps $OUT/steps-bs1.jsonl 2>&1 | grep -E "tok/s|ITL|x$|rror"
python3 benchmarks/step_summary.py $OUT/steps-bs1.jsonl
