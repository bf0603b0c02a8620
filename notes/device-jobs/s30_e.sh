# Session 30, call E, on branch next/fused-attention: why the one launch takes 163 us a layer
# at 128 tokens where the two it replaces take 18 (call D, after_product.py). Nsight Compute's
# full set and SASS warp samples on one fused launch at 128 tokens (the 13th: the first pass's
# twelve compile and warm up).
# Carry [".devkit/wheels", ".devkit/setup.sh"].
#   source .devkit/setup.sh && bash notes/device-jobs/s30_e.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
cd benchmarks
timeout 240 ncu --clock-control none --set full --import-source no -k regex:after_product \
  --launch-skip 12 -c 1 -f -o /tmp/fused \
  python3 after_product.py --contexts 128 --passes 1 --untimed > /tmp/fused.log 2>&1
echo "== ncu rc $? after $(( $(date +%s) - t0 )) s"; grep -iE "rror|==PROF" /tmp/fused.log | head -5
ncu -i /tmp/fused.ncu-rep --page details --print-details all > $OUT/fused-details.txt 2>&1
ncu -i /tmp/fused.ncu-rep --page source --csv --print-source sass > $OUT/fused-sass.csv 2>&1
grep -E "Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Warp Cycles Per Issued|Grid Size|Block Size|Block Limit|Shared Memory Config|Dynamic Shared|Static Shared|Waves" \
  $OUT/fused-details.txt | head -24
gzip $OUT/fused-sass.csv
