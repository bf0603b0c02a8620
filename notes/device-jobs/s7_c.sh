# Session 7, call C: gemv_int8 (one activation row of Q4_0/Q8_0, int8 activations by dp4a, few
# long-lived CTAs). GPU tests, Nsight Compute beside the float kernel, a tiling sweep with the
# copy bandwidth of the same run, then one request beside mlx-lm and the float kernel (A/B).
export VEXEL_CACHE=/tmp/vx
timeout 200 python3 -m pytest -q -p no:cacheprovider --tb=short tests/test_quant_kernels.py -k "int8 or Q4_0 or Q8_0 or headers or refuse" 2>&1 | tail -15
timeout 150 ncu --clock-control none --csv --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed python3 benchmarks/kernel_ncu.py --formats Q4_0,Q8_0 --one-row > $OUT/ncu.csv 2>&1
python3 - $OUT/ncu.csv <<'PY'
import csv, sys, collections
rows = collections.defaultdict(dict)
for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"')):
    if r[0] == "ID" or "vx_" not in r[4]:
        continue
    rows[(int(r[0]), r[4].split("(")[0], r[8])][r[12]] = r[14]
for (i, name, grid), m in sorted(rows.items()):
    print(i, name, grid, " ".join(f"{k.split('.')[0]}={v}" for k, v in m.items()))
PY
timeout 200 python3 benchmarks/kernels.py --formats Q4_0,Q8_0 --quick-formats "" --rows 1 --shapes 14336x4096,4096x14336 --sweep --json $OUT/sweep.json 2>&1 | grep -v "^$" | cut -c1-400
B="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 --kv-cache-memory 16GiB"
timeout 110 vexel $B --compare mlx-lm --json-out $OUT/bs1.json 2>&1 | grep -E "tok/s|ITL|x$|rror"
timeout 60 python3 benchmarks/ab.py --float-one-row $B --json-out $OUT/bs1-float.json 2>&1 | grep -E "generated tok/s|ITL|rror"
