# Branch next/q4_0-words on a GPU for the first time (~150 s, a guess: not yet run): gemv_int8's
# Q4_0 path reading a block's d with its quants from five aligned words (no 2-byte load), the
# nibbles multiplied in place (dp4a.u32.s32, -8 x's block sum as the low sum's start: no
# __vsub4), a lane's blocks addressed from its first, and chunks within the row run without
# bounds checks (a second instance of the loop). nvdisasm (nvcc 13.0, session 15): 297 -> 177
# instructions a chunk of four sub-blocks, static stall sum 610 -> 308, shared-memory loads
# 36 a chunk either way (the 2-byte d loads became x's block sums); Q4_K's aligned chunk is
# 227 and its code does not move. Q4_0 stood at 14.3 us at 14336x4096, Q4_K at 13.2 (its
# reads trimmed so: next/q4k-aligned, merged). Make wt/q40w from the branch (next_session.sh
# says how), carry [".devkit/wheels", ".devkit/setup.sh", "wt"], then
#   source .devkit/setup.sh && bash wt/q40w/notes/device-jobs/q4_0_words_check.sh
# 1. Q4_0's GPU tests (the plain product at two tilings and three activation dtypes, the offset
#    buffer (an offset of 2 swaps the lanes' word layouts), the longest rows, the gated mode).
# 2. Nsight Compute, main's tree and the branch's on one machine: the default tilings of Q4_0
#    and Q4_K (the control now: its code should not move) at both shapes, and the gated product.
# What decides: Q4_0 faster at both shapes and gated by more than the control moves.
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
source notes/device-jobs/branch_tree.sh
tree q40w
t0=$(date +%s)
K="gguf_kernel and Q4_0 and (offset or default or longest or 2warps-2stages-2ctas-2perlane"
K="$K or (gated and silu and bf16)) and not emulated"
(cd /tmp/q40w && timeout 60 python3 -m pytest -q -p no:cacheprovider --tb=short \
  tests/test_quant_kernels.py -k "$K" > $OUT/tests.txt 2>&1)
echo "tests rc $? after $(( $(date +%s) - t0 )) s: $(grep -E '[0-9]+ (passed|failed|error)' $OUT/tests.txt | sed -n '$p')"
grep -E "^(FAILED|ERROR)" $OUT/tests.txt | cut -c1-200 | sed -n 1,6p
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
M=$M,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active
M=$M,launch__registers_per_thread
# Shape by shape, main then the branch (PYTHONPATH picks the tree: it precedes the editable
# install; the devkit's own entries stay after it, or gguf is missing: session 15's first run),
# so that a time limit loses the last pair at most; the tarball is rewritten after every run
# for the same reason.
N=/tmp/q40w-ncu
rm -rf $N && mkdir -p $N
for run in "14336" "4096" "4096 --act silu"; do
  for side in main branch; do
    [ $side = main ] && dir=$root || dir=/tmp/q40w
    name=$side-${run// /}
    (cd $dir && PYTHONPATH=$dir:$PYTHONPATH timeout 40 ncu --clock-control none \
      --kernel-name regex:vx_gemv --csv --metrics $M python3 /tmp/q40w/benchmarks/kernel_ncu.py --int8-sweep --defaults \
      --formats Q4_0,Q4_K --launches 3 --cols $run --map $N/map-$name.tsv > $N/ncu-$name.csv 2>&1)
    echo "== $side, $run: ncu rc $? after $(( $(date +%s) - t0 )) s"
    python3 benchmarks/ncu_summary.py $N/ncu-$name.csv --map $N/map-$name.tsv | cut -c1-150
    (cd $N && tar -cJf $OUT/ncu.tar.xz ncu-*.csv map-*.tsv)
  done
done
