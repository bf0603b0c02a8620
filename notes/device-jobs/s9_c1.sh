# Session 9, call C1 (fresh machine): GPU tests of this session's kernels (add_rms_norm;
# gemv_int8 with its staging slots in dynamic shared memory; paged decode with warps chosen by
# the launch), then round three of the gemv_int8 sweep (tilings over 48 KiB) at 14336x4096.
export VEXEL_CACHE=/tmp/vx
timeout 100 python3 -m pytest -q -p no:cacheprovider --tb=short tests/test_norm_kernels.py 2>&1 | tail -2
timeout 200 python3 -m pytest -q -p no:cacheprovider --tb=line tests/test_quant_kernels.py -k "int8 and gguf_kernel" 2>&1 | tail -3
timeout 150 python3 -m pytest -q -p no:cacheprovider --tb=short tests/test_attention_kernels.py 2>&1 | tail -3
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
M=$M,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active
M=$M,launch__registers_per_thread,launch__waves_per_multiprocessor
M=$M,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem
timeout 200 ncu --clock-control none --kernel-name regex:vx_gemv --csv --metrics $M \
  python3 benchmarks/kernel_ncu.py --int8-sweep --cols 4096 --formats Q4_0,Q4_K,Q6_K \
  --launches 2 --budget-s 150 --map $OUT/sweep_map-4096.tsv > $OUT/sweep_ncu-4096.csv 2>&1
grep -E "^int8-sweep|rror|ERR" $OUT/sweep_ncu-4096.csv | cut -c1-200
python3 benchmarks/ncu_summary.py $OUT/sweep_ncu-4096.csv --map $OUT/sweep_map-4096.tsv
