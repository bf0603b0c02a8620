# Branch next/q4k-aligned on a GPU for the first time (~300 s on a fresh machine): gemv_int8's
# Q4_K path with its alignment tested once a chunk (two instances of the loop) instead of twice
# a sub-block, its 6-bit scale and min decoded without a branch, and odd sub-blocks' nibbles
# multiplied in place (dp4a.u32.s32, the sum shifted). nvdisasm (session 14): 315 -> 219
# instructions a chunk of four sub-blocks, where Q4_0 takes 284; Q4_K stood at 14.8-14.9 us at
# 14336x4096 against its goal of 14.4 and Q4_0's 14.3. Make wt/q4ka from the branch
# (next_session.sh says how), carry [".devkit/wheels", ".devkit/setup.sh", "wt"], then
#   source .devkit/setup.sh && bash wt/q4ka/notes/device-jobs/q4k_aligned_check.sh
# 1. Q4_K's GPU tests (the plain product at two tilings and three activation dtypes, the offset
#    buffer, whose 2-byte offset takes the unaligned instance, the longest rows, the gated mode).
# 2. Nsight Compute, main's tree then the branch's on one machine: the default tilings of Q4_0
#    (the control: its code should not move) and Q4_K at both shapes, and the gated product.
# What decides: Q4_K faster at both shapes by more than the control moves, Q4_0 not slower.
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
source notes/device-jobs/branch_tree.sh
tree q4ka
t0=$(date +%s)
K="gguf_kernel and Q4_K and (offset or default or longest or 2warps-2stages-2ctas-2perlane"
K="$K or (gated and silu and bf16)) and not emulated"
(cd /tmp/q4ka && timeout 150 python3 -m pytest -q -p no:cacheprovider --tb=short \
  tests/test_quant_kernels.py -k "$K" > $OUT/tests.txt 2>&1)
echo "tests rc $? after $(( $(date +%s) - t0 )) s: $(grep -E '[0-9]+ (passed|failed|error)' $OUT/tests.txt | sed -n '$p')"
grep -E "^(FAILED|ERROR)" $OUT/tests.txt | cut -c1-200 | sed -n 1,6p
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
M=$M,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active
M=$M,launch__registers_per_thread
for side in main branch; do
  [ $side = main ] && main_again && dir=$root || dir=/tmp/q4ka
  [ $side = branch ] && (cd /tmp/q4ka && python3 -m pip install -q --no-index --no-deps \
    --no-build-isolation --no-compile -e . > /dev/null 2>&1)
  for run in "4096" "14336" "4096 --act silu"; do
    name=$side-${run// /}
    (cd $dir && timeout 80 ncu --clock-control none --kernel-name regex:vx_gemv --csv --metrics $M \
      python3 /tmp/q4ka/benchmarks/kernel_ncu.py --int8-sweep --defaults --formats Q4_0,Q4_K \
      --launches 3 --cols $run --map $OUT/map-$name.tsv > $OUT/ncu-$name.csv 2>&1)
    echo "== $side, $run: ncu rc $? after $(( $(date +%s) - t0 )) s"
    python3 benchmarks/ncu_summary.py $OUT/ncu-$name.csv --map $OUT/map-$name.tsv | cut -c1-150
  done
done
(cd $OUT && tar -cJf ncu.tar.xz ncu-*.csv map-*.tsv && rm -f ncu-*.csv map-*.tsv)
