# Session 38, call D: Nsight Compute on main's paged decode (after call B's table change) at
# one request, 128 and 256 tokens of context (a launch as the step makes it: packed heads,
# rotation, the write; caches flushed), to see where the ~10-12 us go now that the prologue
# is short: the details page and the SASS with its stall samples, per context.
# Carry [".devkit/wheels", ".devkit/setup.sh"].
#   source .devkit/setup.sh && bash notes/device-jobs/s38_d.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
for ctx in 128 256; do
  timeout 130 ncu --clock-control none --set full --import-source no -k regex:vx_paged_decode \
    --launch-skip 8 -c 1 -f -o /tmp/c$ctx \
    python3 benchmarks/attention_ncu.py --contexts $ctx > /tmp/c$ctx.log 2>&1
  echo "== c$ctx: ncu rc $? after $(( $(date +%s) - t0 )) s"; grep -E "context|rror" /tmp/c$ctx.log | cut -c1-200
  ncu -i /tmp/c$ctx.ncu-rep --page details --print-details all > $OUT/c$ctx-details.txt 2>&1
  ncu -i /tmp/c$ctx.ncu-rep --page source --csv --print-source sass > $OUT/c$ctx-sass.csv 2>&1
  gzip $OUT/c$ctx-sass.csv
  grep -E "Duration|Registers Per|Achieved Occupancy|Warp Cycles Per Issued|Grid Size|Block Size" \
    $OUT/c$ctx-details.txt | head -8
done
echo "== after $(( $(date +%s) - t0 )) s"
