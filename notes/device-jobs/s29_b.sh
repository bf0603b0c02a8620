# Planned for session 29 (written in session 28), call B, main: gemv_int8's tilings at the
# shapes of the two 4,096-row products, one row, which INT8_TILINGS never swept (its 4/2/4/924
# came from 14336x4096): the q/k/v product (6144x4096, 9.9 us in the step for 14 MB) and the
# output product (4096x4096, 9.6 us with its AddNorm for 9.4 MB). Each shape: the default,
# then the sweep's candidates (benchmarks/int8_sweep.py), each also on x rounded beforehand
# (global), so that the per-CTA rounding's share shows. Nsight Compute, caches flushed.
# The sweep knows the file's Q4_0 layout only; the engine reads the packed one (format 1002),
# 12.5 against 13.6 us at 14336x4096 with the same tiling: compare tilings, not the figures.
# Carry [".devkit/wheels", ".devkit/setup.sh"].
#   source .devkit/setup.sh && bash notes/device-jobs/s29_b.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
M=$M,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active
M=$M,launch__registers_per_thread
for rows in 6144 4096; do
  timeout 170 ncu --clock-control none --kernel-name regex:vx_ --csv --metrics $M \
    python3 benchmarks/kernel_ncu.py --int8-sweep --cols 4096 --rows $rows --formats Q4_0 \
    --x-rounded global --launches 2 --budget-s 110 --map $OUT/map-$rows.tsv \
    > $OUT/ncu-$rows.csv 2>&1
  echo "== $rows x 4096: ncu rc $? after $(( $(date +%s) - t0 )) s"
  python3 benchmarks/ncu_summary.py $OUT/ncu-$rows.csv --map $OUT/map-$rows.tsv | cut -c1-150
done
# The sweep's candidates give these shapes 256-1,024 CTAs of 1-2 rows a warp; fewer CTAs with
# more rows a warp round x fewer times (a CTA rounds all of it): time those too.
for rows in 6144 4096; do
  timeout 110 ncu --clock-control none --kernel-name regex:vx_ --csv --metrics $M \
    python3 benchmarks/kernel_ncu.py --int8-sweep --cols 4096 --rows $rows --formats Q4_0 \
    --tilings 4/2/4/924,4/2/4/264,4/2/4/132,8/2/4/132,8/2/4/264,4/3/4/396 \
    --x-rounded global --launches 2 --map $OUT/map-few-$rows.tsv > $OUT/ncu-few-$rows.csv 2>&1
  echo "== $rows x 4096, few CTAs: ncu rc $? after $(( $(date +%s) - t0 )) s"
  python3 benchmarks/ncu_summary.py $OUT/ncu-few-$rows.csv --map $OUT/map-few-$rows.tsv | cut -c1-150
done
