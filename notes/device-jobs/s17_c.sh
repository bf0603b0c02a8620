# Session 17, call C: the merged packed layout, round_x and gemv_int8 on x rounded beforehand.
# Nsight Compute: packed_ncu.py (Q4_0 at both Llama shapes and gated: gemv_int8 on the file's
# blocks, round_x, gemv_int8 on x rounded beforehand, gemv_int8 on the packed layout,
# gemv_packed's tilings in both orders); the GPU tests of all three; then the other int8
# formats on x rounded beforehand. Carry [".devkit/wheels", ".devkit/setup.sh"]:
#   source .devkit/setup.sh && bash notes/device-jobs/s17_c.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/vx
t0=$(date +%s)
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
M=$M,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active
M=$M,launch__registers_per_thread
timeout 230 ncu --clock-control none --kernel-name regex:vx_ --csv --metrics $M \
  python3 benchmarks/packed_ncu.py --map $OUT/map.tsv > $OUT/ncu.csv 2>&1
echo "== packed ncu rc $? after $(( $(date +%s) - t0 )) s"
python3 benchmarks/ncu_summary.py $OUT/ncu.csv --map $OUT/map.tsv | cut -c1-150
grep -E "^packed .*(fails|WRONG)|Error" $OUT/ncu.csv | head
timeout 190 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_quant_kernels.py \
  tests/test_gemv_packed.py -k "packed or packs or round_x or rounded_beforehand" \
  > $OUT/gpu_tests.txt 2>&1
echo "== gpu tests rc $? after $(( $(date +%s) - t0 )) s"; tail -8 $OUT/gpu_tests.txt
left=$(( 560 - ($(date +%s) - t0) ))
timeout $left ncu --clock-control none --kernel-name regex:vx_ --csv --metrics $M \
  python3 benchmarks/kernel_ncu.py --int8-sweep --defaults --x-rounded shared,global \
  --cols 4096 --formats Q4_K,Q6_K,Q8_0 --launches 3 --map $OUT/map-int8.tsv > $OUT/ncu-int8.csv 2>&1
echo "== int8 ncu rc $? after $(( $(date +%s) - t0 )) s"
python3 benchmarks/ncu_summary.py $OUT/ncu-int8.csv --map $OUT/map-int8.tsv | cut -c1-150
