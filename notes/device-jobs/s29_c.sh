# Session 29, call C (main at 6d504de plus benchmarks/packed_ncu.py's two new shapes): llama.cpp
# built in the background for call D (kept in /tmp/lc on the warm machine; the kernels timed
# here are GPU time, which the build's CPU load does not enter), then
# 1. the two 4,096-column products at their shapes, packed Q4_0 (the engine's layout): the
#    engine's kernel (gemv_int8 on the packed weight, each CTA rounding x) beside gemv_packed
#    on x rounded beforehand at several tilings, Nsight Compute;
# 2. next/ff-group-rot (the feed-forward kernel's down rows walked from one offset per group
#    of 16 CTAs; its feed_forward.cuh in .ab_old/ffrot, main's in .ab_old/ffmain): its GPU
#    tests, then benchmarks/feed_forward.py alternated with main's kernel in separate
#    processes (each run's "two launches" row is the same on both sides: the control).
# Carry [".devkit/wheels", ".devkit/setup.sh", ".devkit/peers", ".ab_old"], notes/bench moved
# out of the tree.
#   source .devkit/setup.sh && bash notes/device-jobs/s29_c.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
(bash .devkit/peers/llamacpp.sh > /tmp/lc_build.log 2>&1; echo "built rc $?" >> /tmp/lc_build.log) &
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
M=$M,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active
M=$M,launch__registers_per_thread
timeout 200 ncu --clock-control none --kernel-name regex:vx_ --csv --metrics $M \
  python3 benchmarks/packed_ncu.py --shapes Q4_0/qkv,Q4_0/o --launches 2 \
  --tilings 4/4/1056,8/4/1056,4/4/1584,2/4/3168,8/4/528 --map $OUT/map-packed.tsv \
  > $OUT/ncu-packed.csv 2>&1
echo "== packed: ncu rc $? after $(( $(date +%s) - t0 )) s"
python3 benchmarks/ncu_summary.py $OUT/ncu-packed.csv --map $OUT/map-packed.tsv | cut -c1-150
F=vexel_core/quant/kernels/cuda/feed_forward.cuh
cp .ab_old/ffrot/feed_forward.cuh $F
timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_feed_forward.py \
  > $OUT/gpu_ff.txt 2>&1
echo "== ffrot: feed-forward GPU tests rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/gpu_ff.txt)"
grep -E "^(FAILED|ERROR)" $OUT/gpu_ff.txt | head -10
for arm in ffmain ffrot ffmain ffrot; do
  [ $(( $(date +%s) - t0 )) -gt 520 ] && break
  cp .ab_old/$arm/feed_forward.cuh $F
  echo "-- $arm" | tee -a $OUT/ff_ab.txt
  (cd benchmarks && timeout 60 python3 feed_forward.py 2>&1) | grep -E "launch|check|rror" \
    | tee -a $OUT/ff_ab.txt
done
cp .ab_old/ffmain/feed_forward.cuh $F
echo "== after $(( $(date +%s) - t0 )) s"; tail -3 /tmp/lc_build.log
