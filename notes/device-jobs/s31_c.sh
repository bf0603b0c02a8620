# Planned for session 31 (written in session 30), call C, main: where the feed-forward
# launch's ~37.7 us go (cuda/feed_forward.cuh: the gated phase ~20 us for 66 MB, the down phase
# ~15 us for 33 MB at ~2.2 TB/s, session 27's phase timer). Nsight Compute's full set with
# the SASS's warp samples on one launch of benchmarks/feed_forward.py --untimed 4 (its check's
# three launches, then four runs over three weight copies: the 7th launch). Read the samples
# by phase: the gated rows, the barrier between the phases, the down columns' loads, the
# int64 atomics at L2, the last CTA's AddNorm.
# Carry [".devkit/wheels", ".devkit/setup.sh"].
#   source .devkit/setup.sh && bash notes/device-jobs/s31_c.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
timeout 240 ncu --clock-control none --set full --import-source no -k regex:vx_feed_forward \
  --launch-skip 6 -c 1 -f -o /tmp/ff \
  python3 benchmarks/feed_forward.py --untimed 4 > /tmp/ff.log 2>&1
echo "== ncu rc $? after $(( $(date +%s) - t0 )) s"; grep -iE "rror|==PROF|check" /tmp/ff.log | head -5
ncu -i /tmp/ff.ncu-rep --page details --print-details all > $OUT/ff-details.txt 2>&1
ncu -i /tmp/ff.ncu-rep --page source --csv --print-source sass > $OUT/ff-sass.csv 2>&1
grep -E "Duration|Registers Per|Achieved Occupancy|Warp Cycles Per Issued|Grid Size|Block Size|DRAM Throughput|Stall" \
  $OUT/ff-details.txt | head -30
gzip $OUT/ff-sass.csv
