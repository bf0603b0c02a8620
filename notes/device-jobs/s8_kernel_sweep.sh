# Session 8: gemv_int8 tilings under Nsight Compute, one bf16 row of 14336x4096 for Q4_0, Q4_K,
# Q6_K and Q8_0 (the candidates and why: benchmarks/int8_sweep.py):
#   source .devkit/setup.sh && bash notes/device-jobs/s8_kernel_sweep.sh
# 47 tilings (6 more are skipped for shared memory over 48 KiB), 2 profiled launches each, 35
# kernel variants to compile. Expected ~75-175 s (35-70 s of NVRTC at 1-2 s a variant, 30-95 s
# of ncu at ~0.3-1 s a profiled launch, ~10 s to start; session 7's calls give no finer split).
# The sweep starts no tiling after 170 s of its own time (formats round-robin, each format's
# default first, so a cut run loses the last candidates of each format) and ncu prints its CSV
# when the sweep exits, so ~185 s at most; the outer timeout only guards against a hang.
# Outputs: $OUT/sweep_ncu.csv (ncu's CSV with the sweep's "int8-sweep ..." lines),
# $OUT/sweep_map.tsv (tiling -> Nsight Compute IDs), the summary on stdout.
export VEXEL_CACHE=/tmp/vx
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
M=$M,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active
M=$M,launch__registers_per_thread,launch__waves_per_multiprocessor
M=$M,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem
start=$(date +%s)
timeout 215 ncu --clock-control none --kernel-name regex:vx_gemv --csv --metrics $M \
  python3 benchmarks/kernel_ncu.py --int8-sweep --formats Q4_0,Q4_K,Q6_K,Q8_0 --launches 2 \
  --budget-s 170 --map $OUT/sweep_map.tsv > $OUT/sweep_ncu.csv 2>&1
echo "ncu rc $? after $(( $(date +%s) - start )) s"
grep -E "^int8-sweep|rror|ERR" $OUT/sweep_ncu.csv | cut -c1-220
python3 benchmarks/ncu_summary.py $OUT/sweep_ncu.csv --map $OUT/sweep_map.tsv
