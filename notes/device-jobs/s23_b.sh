# Planned for session 23 (written in session 22), call B, on branch next/decode-segment, if
# call A's segment is still slower than its four launches: Nsight Compute on one launch of the
# segment and one step of the four launches, warp stalls by SASS line, to see where the
# segment's extra ~24 us go (per-CTA atomics and fences, the norms' sums, the phase waits).
#   source .devkit/setup.sh && bash notes/device-jobs/s23_b.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
# segment.py --untimed runs 2 + 6 steps of each arm: skip 4 launches of the segment, or 3
# steps (12 kernels) of the four launches, then profile one step.
for arm in segment:vx_decode_segment:4:1 separate:vx_gemv:12:4; do
  IFS=: read -r name k skip count <<< "$arm"
  timeout 250 ncu --clock-control none --set full --import-source no -k regex:$k \
    --launch-skip $skip -c $count -f -o /tmp/$name \
    python3 benchmarks/segment.py --launches 6 --untimed > /tmp/$name.log 2>&1
  echo "== $name: ncu rc $? after $(( $(date +%s) - t0 )) s"; tail -3 /tmp/$name.log | cut -c1-200
  ncu -i /tmp/$name.ncu-rep --page details --print-details all > $OUT/$name-details.txt 2>&1
  ncu -i /tmp/$name.ncu-rep --page source --csv --print-source sass > $OUT/$name-sass.csv 2>&1
  grep -E "Duration|Registers|Achieved Occupancy|DRAM Throughput|Warp Cycles Per Issued|Block Limit|Dynamic Shared" \
    $OUT/$name-details.txt | head -24
done
