# Session 12, call E (fresh machine, ~110 s; the session's last 240 s of device time): where
# the packed Q4_0 prototype's 3 us over a plain read go (benchmarks/q4_0_ablation.py under
# Nsight Compute). Carry [".devkit/wheels", ".devkit/setup.sh"].
#   source .devkit/setup.sh && bash notes/device-jobs/s12_e.sh
# E1 ran the probe of commit 85c1ae7 (its MODE 0-3) and E2 that of 9f85437 with --modes
# 1,2,4,5; the probe now names its variants (VARIANTS="loads,+dot" picks some; the default is
# every one).
: "${OUT:?set OUT to the output folder}"
t0=$(date +%s)
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
M=$M,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active
M=$M,l1tex__throughput.avg.pct_of_peak_sustained_active,launch__registers_per_thread
timeout 150 ncu --clock-control none --kernel-name regex:vx_ --csv --metrics $M \
  python3 benchmarks/q4_0_ablation.py ${VARIANTS:+--variants "$VARIANTS"} --map $OUT/map.tsv > $OUT/ncu.csv 2>&1
echo "ablation rc $? after $(( $(date +%s) - t0 )) s: $(grep -c ' ok$' $OUT/ncu.csv) ok, $(grep -c 'WRONG' $OUT/ncu.csv) wrong"
grep -E "rror|Traceback" $OUT/ncu.csv | head -5
python3 benchmarks/ncu_summary.py $OUT/ncu.csv --map $OUT/map.tsv > $OUT/summary.txt 2>&1
cut -c1-150 $OUT/summary.txt
