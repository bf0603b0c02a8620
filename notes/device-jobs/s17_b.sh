# Session 17, call B: gemv_packed (repacked Q4_0 on x rounded beforehand, the probe's
# structure) beside gemv_int8 under Nsight Compute at 14336x4096, 4096x14336 and the gated
# gate/up product; its GPU tests; then the engine's Hypothesis searches on CUDA that call A's
# 240 s cut off. Carry [".devkit/wheels", ".devkit/setup.sh"]:
#   source .devkit/setup.sh && bash notes/device-jobs/s17_b.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/vx
t0=$(date +%s)
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
M=$M,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active
M=$M,launch__registers_per_thread
timeout 220 ncu --clock-control none --kernel-name regex:vx_gemv --csv --metrics $M \
  python3 benchmarks/packed_ncu.py --map $OUT/map.tsv > $OUT/ncu.csv 2>&1
echo "== ncu rc $? after $(( $(date +%s) - t0 )) s"
python3 benchmarks/ncu_summary.py $OUT/ncu.csv --map $OUT/map.tsv | cut -c1-160
grep -E "^packed|Error|error" $OUT/ncu.csv | head -30
timeout 150 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gemv_packed.py \
  > $OUT/gpu_tests.txt 2>&1
echo "== gpu tests rc $? after $(( $(date +%s) - t0 )) s"; tail -8 $OUT/gpu_tests.txt
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/test_engine_interleavings.py \
  tests/test_async_engine_leaving.py --durations=5 > $OUT/engine_tests.txt 2>&1
echo "== engine searches rc $? after $(( $(date +%s) - t0 )) s"; tail -12 $OUT/engine_tests.txt
