# Session 10, call C (fresh machine): gemv_int8 now fills every staging slot before rounding x
# (one chunk more in flight during the prologue). GPU tests of it and of the all-dynamic shared
# memory, then round four of the sweep at 14336x4096 with the grid as Int8Tiling.grid makes it
# (even rows per warp) and filled (every CTA of the tiling; SMs evenly loaded), and at
# 4096x14336 filled.
#   source .devkit/setup.sh && bash notes/device-jobs/s10_c.sh
export VEXEL_CACHE=/tmp/vx FORMATS=Q4_0,Q4_K,Q6_K
timeout 200 python3 -m pytest -q -p no:cacheprovider --tb=short tests/test_quant_kernels.py -k "int8" > $OUT/tests-int8.txt 2>&1
tail -4 $OUT/tests-int8.txt
for run in "4096 even 95" "4096 fill 120" "14336 fill 90"; do
  set -- $run
  M=gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
  M=$M,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active
  M=$M,launch__registers_per_thread,launch__waves_per_multiprocessor
  M=$M,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem
  timeout $(($3 + 40)) ncu --clock-control none --kernel-name regex:vx_gemv --csv --metrics $M \
    python3 benchmarks/kernel_ncu.py --int8-sweep --cols $1 --grid $2 --formats $FORMATS \
    --launches 2 --budget-s $3 --map $OUT/sweep_map-$1-$2.tsv > $OUT/sweep_ncu-$1-$2.csv 2>&1
  echo "== $1 columns, grid $2: ncu rc $?"
  grep -E "fails|rror|WRONG" $OUT/sweep_ncu-$1-$2.csv | cut -c1-200
  python3 benchmarks/ncu_summary.py $OUT/sweep_ncu-$1-$2.csv --map $OUT/sweep_map-$1-$2.tsv | cut -c1-150
done
