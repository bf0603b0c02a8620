# Session 12, call B (fresh machine, ~460 s): (1) the read ceiling: how fast one kernel reads
# buffers of the one-row products' sizes (benchmarks/read_ceiling.py under Nsight Compute,
# ~90 s); (2) branch next/gated-gate-up's alternated A/B without its tests (~350 s). Carry
# [".devkit/wheels", ".devkit/setup.sh", "wt"] with the branch's files in wt/gated.
#   source .devkit/setup.sh && bash notes/device-jobs/s12_b.sh
: "${OUT:?set OUT to the output folder}"
t0=$(date +%s)
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
M=$M,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active
mkdir -p $OUT/read
timeout 150 ncu --clock-control none --kernel-name regex:vx_read --csv --metrics $M \
  python3 benchmarks/read_ceiling.py --map $OUT/read/map.tsv > $OUT/read/ncu.csv 2>&1
echo "read ceiling rc $? after $(( $(date +%s) - t0 )) s: $(grep -c ' ok$' $OUT/read/ncu.csv) ok," \
  "$(grep -c 'WRONG' $OUT/read/ncu.csv) wrong"
python3 benchmarks/ncu_summary.py $OUT/read/ncu.csv --map $OUT/read/map.tsv > $OUT/read/summary.txt 2>&1
cut -c1-120 $OUT/read/summary.txt
tar -cJf $OUT/read.tar.xz -C $OUT read && rm -rf $OUT/read

source notes/device-jobs/branch_tree.sh
tree gated
(cd /tmp/gated && GATED_TESTS=0 bash notes/device-jobs/gated_check.sh)
echo "all done after $(( $(date +%s) - t0 )) s"
