# Session 7, call C1: gemv_int8 (one activation row of Q4_0/Q8_0/Q4_K/Q6_K, int8 activations
# by dp4a, few long-lived CTAs). GPU tests of the one-row paths, Nsight Compute beside the float
# kernel, its tilings with the copy bandwidth of the same run.
export VEXEL_CACHE=/tmp/vx
T=tests/test_quant_kernels.py
timeout 150 python3 -m pytest -q -p no:cacheprovider --tb=short $T -k "(gguf_kernel and (int8 or unaligned or -1-)) or (selected_path and (Q4_0 or Q8_0 or Q4_K or Q6_K)) or headers or refuse" 2>&1 | tail -12
timeout 120 ncu --clock-control none --kernel-name regex:vx_gemv --csv --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed python3 benchmarks/kernel_ncu.py --formats Q4_0,Q8_0,Q4_K,Q6_K --one-row > $OUT/ncu.csv 2>&1
python3 benchmarks/ncu_summary.py $OUT/ncu.csv
timeout 230 python3 benchmarks/kernels.py --formats Q4_0,Q8_0,Q4_K,Q6_K --quick-formats "" --rows 1 --shapes 14336x4096,4096x14336 --sweep --json $OUT/sweep.json 2>&1 | grep -v "^$" | cut -c1-700
