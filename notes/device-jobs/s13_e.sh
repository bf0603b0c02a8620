# Session 13, call E (fresh machine, ~280 s: the session's last device time): branch
# next/direct-q4_k on a GPU for the first time. gemv_direct's tests, then Nsight Compute of
# Q4_K's default gemv_int8 tiling against gemv_direct's shapes at both Llama shapes, then the
# other Q4_K kernel tests (one row now routes to gemv_direct) for what time is left. Carry
# [".devkit/wheels", ".devkit/setup.sh", "wt"] with wt/q4k (main's tree + the branch's files).
#   source .devkit/setup.sh && bash notes/device-jobs/s13_e.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
source notes/device-jobs/branch_tree.sh
tree q4k
cd /tmp/q4k
t0=$(date +%s)
timeout 80 python3 -m pytest -q -p no:cacheprovider --tb=short tests/test_quant_kernels.py \
  -k "direct and gguf_kernel" > $OUT/tests-direct.txt 2>&1
echo "direct tests rc $? after $(( $(date +%s) - t0 )) s: $(grep -E '[0-9]+ (passed|failed|error)' $OUT/tests-direct.txt | sed -n '$p')"
grep -E "^(FAILED|ERROR)|Error" $OUT/tests-direct.txt | cut -c1-200 | sed -n 1,6p
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
M=$M,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active
M=$M,launch__registers_per_thread
for cols in 4096 14336; do
  timeout 65 ncu --clock-control none --kernel-name regex:vx_gemv --csv --metrics $M \
    python3 benchmarks/kernel_ncu.py --int8-sweep --direct --cols $cols --formats Q4_K \
    --launches 2 --map $OUT/map-$cols.tsv > $OUT/ncu-$cols.csv 2>&1
  echo "== $cols columns: ncu rc $? after $(( $(date +%s) - t0 )) s"
  grep -E "fails|rror|WRONG" $OUT/ncu-$cols.csv | cut -c1-200
  python3 benchmarks/ncu_summary.py $OUT/ncu-$cols.csv --map $OUT/map-$cols.tsv | cut -c1-150
done
timeout 50 python3 -m pytest -q -p no:cacheprovider --tb=short -x tests/test_quant_kernels.py \
  -k "Q4_K and gguf_kernel and not direct" > $OUT/tests-q4k.txt 2>&1
echo "Q4_K tests rc $? after $(( $(date +%s) - t0 )) s: $(grep -E '[0-9]+ (passed|failed|error)' $OUT/tests-q4k.txt | sed -n '$p')"
grep -E "^(FAILED|ERROR)" $OUT/tests-q4k.txt | cut -c1-200 | sed -n 1,6p
