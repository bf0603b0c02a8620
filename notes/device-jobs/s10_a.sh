# Session 10, call A (fresh machine): round three of the gemv_int8 sweep at both Llama shapes
# (Q4_0, Q4_K, Q6_K; tilings over 48 KiB and x in registers), and, once llama.cpp has built in
# the background, llama.cpp's own one-row products under the same Nsight Compute settings
# (caches flushed, clocks free), so the kernel goals have the peer's figure beside them.
#   source .devkit/setup.sh && bash notes/device-jobs/s10_a.sh
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/lc
(bash .devkit/peers/llamacpp.sh > /tmp/lc/build-bg.log 2>&1; echo $? > /tmp/lc/built) &
export FORMATS=Q4_0,Q4_K,Q6_K
bash notes/device-jobs/s8_kernel_sweep.sh 4096 150
bash notes/device-jobs/s8_kernel_sweep.sh 14336 110
for i in $(seq 1 90); do [ -f /tmp/lc/built ] && break; sleep 5; done
echo "llama.cpp build: $(cat /tmp/lc/built 2>/dev/null || echo unfinished)"
M=gpu__time_duration.sum,dram__bytes_read.sum,launch__grid_size,launch__block_size,launch__registers_per_thread
for q in Q4_0 Q4_K Q6_K; do
  f=/tmp/vx/peer-$q.gguf
  python3 .devkit/peers/make_random_gguf_fast.py $f --qtype $q --layers 2 > /dev/null 2>&1
  timeout 90 ncu --clock-control none --kernel-name regex:mul_mat_vec --launch-skip 40 --launch-count 24 \
    --csv --print-units base --metrics $M /tmp/lc/llama.cpp/build/bin/llama-bench -m $f -p 0 -n 16 -r 1 -ngl 99 -fa 1 \
    > $OUT/llamacpp_ncu-$q.csv 2>&1
  echo "$q: rc $?"
  python3 - $OUT/llamacpp_ncu-$q.csv <<'PY'
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10 and r[0].isdigit()]
hdr = next(r for r in csv.reader(open(sys.argv[1])) if r and r[0] == "ID")
ix = {k: hdr.index(k) for k in ("ID", "Kernel Name", "Metric Name", "Metric Value")}
by = collections.defaultdict(dict)
for r in rows:
    by[(r[ix["ID"]], r[ix["Kernel Name"]][:60])][r[ix["Metric Name"]]] = r[ix["Metric Value"]]
agg = collections.defaultdict(list)
unit = {}
for r in rows:
    unit[r[ix["Metric Name"]]] = r[hdr.index("Metric Unit")]
for (i, name), m in by.items():
    mb = round(float(m.get("dram__bytes_read.sum", "0").replace(",", "")) / 1e6, 1)
    agg[(name, m.get("launch__grid_size"), m.get("launch__block_size"), mb)].append(
        float(m["gpu__time_duration.sum"].replace(",", "")))
print("  units:", unit.get("dram__bytes_read.sum"), unit.get("gpu__time_duration.sum"))
for k, ts in sorted(agg.items(), key=lambda kv: -kv[0][3]):
    print(f"  {k[0]:60s} grid {k[1]:>6} block {k[2]:>4} read {k[3]:10.2f} n={len(ts):2d} "
          f"min {min(ts):9.2f} median {sorted(ts)[len(ts)//2]:9.2f}")
PY
done
