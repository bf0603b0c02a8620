# Branch next/q4k-wide-smem on a GPU for the first time (~400 s on a fresh machine): gemv_int8
# reading Q4_K's quants and scales with 16-byte shared-memory loads (three a sub-block where
# there were ~17; benchmarks/sass_loads.py) and Q6_K's two scales with one load. Carry
# [".devkit/wheels", ".devkit/setup.sh", "wt"] with wt/q4kw (branch_tree.sh says how), then
#   source .devkit/setup.sh && bash wt/q4kw/notes/device-jobs/wide_smem_check.sh
# The GPU tests of the int8 path for the two formats (and the offset buffer's), then Nsight
# Compute of Q4_0 (unchanged: the control), Q4_K and Q6_K's default tilings at both Llama
# shapes, main's tree, then the branch's, on the same machine. What decides: the branch faster
# for Q4_K at both shapes by more than the control moves, Q6_K not slower.
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
source notes/device-jobs/branch_tree.sh
tree q4kw
t0=$(date +%s)
# 25 tests: the plain product at the default tiling and at two CTAs of two warps in each
# activation dtype, the offset buffer, the longest rows, the gated mode (SiLU, bf16)
K="gguf_kernel and (offset or ((Q4_K or Q6_K) and (default or 2warps-2stages-2ctas-2perlane)"
K="$K and not gated) or (gated and (Q4_K or Q6_K) and silu and bf16))"
(cd /tmp/q4kw && timeout 150 python3 -m pytest -q -p no:cacheprovider --tb=short \
  tests/test_quant_kernels.py -k "$K" > $OUT/tests.txt 2>&1)
echo "tests rc $? after $(( $(date +%s) - t0 )) s: $(grep -E '[0-9]+ (passed|failed|error)' $OUT/tests.txt | sed -n '$p')"
grep -E "^(FAILED|ERROR)" $OUT/tests.txt | cut -c1-200 | sed -n 1,6p
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
M=$M,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active
M=$M,launch__registers_per_thread
for side in main branch; do
  [ $side = main ] && main_again && dir=$root || dir=/tmp/q4kw
  [ $side = branch ] && (cd /tmp/q4kw && python3 -m pip install -q --no-index --no-deps \
    --no-build-isolation --no-compile -e . > /dev/null 2>&1)
  for cols in 4096 14336; do
    (cd $dir && timeout 60 ncu --clock-control none --kernel-name regex:vx_gemv --csv --metrics $M \
      python3 /tmp/q4kw/benchmarks/kernel_ncu.py --int8-sweep --defaults --cols $cols \
      --formats Q4_0,Q4_K,Q6_K --launches 3 --map $OUT/map-$side-$cols.tsv > $OUT/ncu-$side-$cols.csv 2>&1)
    echo "== $side, $cols columns: ncu rc $? after $(( $(date +%s) - t0 )) s"
    python3 benchmarks/ncu_summary.py $OUT/ncu-$side-$cols.csv --map $OUT/map-$side-$cols.tsv | cut -c1-150
  done
done
# Then, on the branch, the sweep's other tilings for Q4_0, Q4_K, Q6_K at 4,096 columns: with
# fewer shared-memory loads the best tiling may move (x in registers, more CTAs).
(cd /tmp/q4kw && timeout 150 ncu --clock-control none --kernel-name regex:vx_gemv --csv --metrics $M \
  python3 benchmarks/kernel_ncu.py --int8-sweep --cols 4096 --formats Q4_0,Q4_K,Q6_K --launches 2 \
  --budget-s 100 --map $OUT/map-sweep.tsv > $OUT/ncu-sweep.csv 2>&1)
echo "== branch sweep: ncu rc $? after $(( $(date +%s) - t0 )) s"
python3 benchmarks/ncu_summary.py $OUT/ncu-sweep.csv --map $OUT/map-sweep.tsv | cut -c1-150
# at most 8 files come back: the CSVs and maps in one archive
(cd $OUT && tar -cJf ncu.tar.xz ncu-*.csv map-*.tsv && rm -f ncu-*.csv map-*.tsv)
