# Session 8: gemv_int8 tilings under Nsight Compute, one bf16 row of 14336x4096 for Q4_0, Q4_K,
# Q6_K and Q8_0 (the candidates and why: benchmarks/int8_sweep.py):
#   source .devkit/setup.sh && bash notes/device-jobs/s8_kernel_sweep.sh [COLS [BUDGET_S]]
# (COLS 4096: 14336x4096, the default; 14336: 4096x14336. Call A ran the first round's list.)
# Call A (first round, 47 tilings): ~10 s a tiling (NVRTC compile and ncu's replays), so the
# 170 s budget reached 19. The sweep starts no tiling after BUDGET_S of its own time (formats
# round-robin, each format's default first, so a cut run loses the last candidates of each
# format); the outer timeout only guards against a hang.
# Outputs: $OUT/sweep_ncu-COLS.csv (ncu's CSV with the sweep's "int8-sweep ..." lines),
# $OUT/sweep_map-COLS.tsv (tiling -> Nsight Compute IDs), the summary on stdout.
export VEXEL_CACHE=/tmp/vx
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
M=$M,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active
M=$M,launch__registers_per_thread,launch__waves_per_multiprocessor
M=$M,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem
start=$(date +%s)
COLS=${1:-4096} BUDGET=${2:-170}
timeout $((BUDGET + 45)) ncu --clock-control none --kernel-name regex:vx_gemv --csv --metrics $M \
  python3 benchmarks/kernel_ncu.py --int8-sweep --cols $COLS --formats ${FORMATS:-Q4_0,Q4_K,Q6_K,Q8_0} \
  --launches 2 --budget-s $BUDGET --map $OUT/sweep_map-$COLS.tsv > $OUT/sweep_ncu-$COLS.csv 2>&1
echo "ncu rc $? after $(( $(date +%s) - start )) s"
grep -E "^int8-sweep|rror|ERR" $OUT/sweep_ncu-$COLS.csv | cut -c1-220
python3 benchmarks/ncu_summary.py $OUT/sweep_ncu-$COLS.csv --map $OUT/sweep_map-$COLS.tsv
