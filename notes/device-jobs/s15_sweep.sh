# Session 15, the last call (~150 s on a fresh machine, with the ~280 s of device time left):
# Q4_0's and Q4_K's shared-memory reads were trimmed this session (next/q4k-aligned,
# next/q4_0-words: 297 -> 177 and 315 -> 219 instructions a chunk), so the tilings chosen in
# sessions 8-14 for the old code may no longer be the fastest. Deeper pipelines, x in
# registers, shorter chunks and CTA counts that change the grid (`Int8Tiling.grid` gives each
# warp the same number of rows: at 14,336 rows 4-warp CTAs launch 896 for 924 or 1,188), each
# list run in both orders under Nsight Compute, the default first (the reference for the
# outputs' check), at both Llama shapes. Carry [".devkit/wheels", ".devkit/setup.sh"]:
#   source .devkit/setup.sh && bash notes/device-jobs/s15_sweep.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/vx
t0=$(date +%s)
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
M=$M,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active
M=$M,launch__registers_per_thread
sweep() {  # sweep NAME COLS TILINGS
  timeout 60 ncu --clock-control none --kernel-name regex:vx_gemv --csv --metrics $M \
    python3 benchmarks/kernel_ncu.py --int8-sweep --cols $2 --formats Q4_0,Q4_K \
    --launches 3 --tilings "$3" --map $OUT/map-$1.tsv > $OUT/ncu-$1.csv 2>&1
  echo "== $1: ncu rc $? after $(( $(date +%s) - t0 )) s"
  python3 benchmarks/ncu_summary.py $OUT/ncu-$1.csv --map $OUT/map-$1.tsv | cut -c1-150
}
A=4/2/4/924,4/3/4/792,4/2/4/924+x,4/2/2/924,8/2/4/528,2/2/4/1848
B=4/2/4/792,4/1/4/1024,8/2/4/512,8/1/4/512,4/3/4/792,4/2/2/792
sweep k4096-a 4096 $A
sweep k14336-a 14336 $B
sweep k4096-b 4096 4/2/4/924,$(echo $A | cut -d, -f2- | tr , '\n' | tac | paste -sd,)
sweep k14336-b 14336 4/2/4/792,$(echo $B | cut -d, -f2- | tr , '\n' | tac | paste -sd,)
(cd $OUT && tar -cJf ncu.tar.xz ncu-*.csv map-*.tsv && rm -f ncu-*.csv map-*.tsv)
