# Session 17, call A (fresh machine): session 16's engine fixes on CUDA (the engine's tests and
# the Hypothesis searches, where the paged backend runs the real kernels), then session 15's
# open tiling question in both orders: 8/2/4/512 against the default 4/2/4/792 for one row of
# Q4_0 and Q4_K at 4096x14336. Carry [".devkit/wheels", ".devkit/setup.sh"]:
#   source .devkit/setup.sh && bash notes/device-jobs/s17_a.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/vx
t0=$(date +%s)
timeout 240 python3 -m pytest -q -p no:cacheprovider -x tests/test_engine.py \
  tests/test_engine_interleavings.py tests/test_async_engine_leaving.py > $OUT/engine_tests.txt 2>&1
echo "== engine tests rc $? after $(( $(date +%s) - t0 )) s"; tail -15 $OUT/engine_tests.txt
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
M=$M,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active
M=$M,launch__registers_per_thread
sweep() {  # sweep NAME TILINGS
  timeout 130 ncu --clock-control none --kernel-name regex:vx_gemv --csv --metrics $M \
    python3 benchmarks/kernel_ncu.py --int8-sweep --cols 14336 --formats Q4_0,Q4_K \
    --launches 3 --tilings "$2" --map $OUT/map-$1.tsv > $OUT/ncu-$1.csv 2>&1
  echo "== $1: ncu rc $? after $(( $(date +%s) - t0 )) s"
  python3 benchmarks/ncu_summary.py $OUT/ncu-$1.csv --map $OUT/map-$1.tsv | cut -c1-150
}
sweep a 4/2/4/792,8/2/4/512
sweep b 8/2/4/512,4/2/4/792
