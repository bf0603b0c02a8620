# Planned for session 30 (written in session 29), call A, main: where the 4,096-column
# products' ~6-9 us go. Session 29 found them no faster with their whole weight in L2
# (benchmarks/l2_prefetch.py), so their time is a chain of dependent steps. Nsight Compute's
# full set with the SASS's warp samples (as session 28's call B did for the paged decode) on
# the engine's three launches: the output product's AddNorm kernel (gemv_int8_norm) and the
# plain product at 4096x4096 (benchmarks/add_norm.py --untimed), and the q/k/v product at
# 6144x4096 (the second launch of packed_ncu.py's "int8 packed" run). Read the samples
# by phase: x's load and rounding, the barrier after it, the first stage's wait, the main
# loop, the reduction, the AddNorm's last CTA.
# Carry [".devkit/wheels", ".devkit/setup.sh"].
#   source .devkit/setup.sh && bash notes/device-jobs/s30_a.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
report() {  # name: the ncu-rep's details and SASS source view into $OUT
  ncu -i /tmp/$1.ncu-rep --page details --print-details all > $OUT/$1-details.txt 2>&1
  ncu -i /tmp/$1.ncu-rep --page source --csv --print-source sass > $OUT/$1-sass.csv 2>&1
  grep -E "Duration|Registers Per|Achieved Occupancy|Warp Cycles Per Issued|Grid Size|Block Size" \
    $OUT/$1-details.txt | head -12
}
for arm in norm:gemv_int8_norm plain:vx_gemv_int8_1002; do
  IFS=: read -r name kernel <<< "$arm"
  timeout 150 ncu --clock-control none --set full --import-source no -k regex:$kernel \
    --launch-skip 3 -c 1 -f -o /tmp/$name \
    python3 benchmarks/add_norm.py --untimed --launches 4 > /tmp/$name.log 2>&1
  echo "== $name: ncu rc $? after $(( $(date +%s) - t0 )) s"; grep -E "rror" /tmp/$name.log | head -3
  report $name
done
timeout 150 ncu --clock-control none --set full --import-source no -k regex:vx_gemv_int8_1002 \
  --launch-skip 1 -c 1 -f -o /tmp/qkv \
  python3 benchmarks/packed_ncu.py --shapes Q4_0/qkv --launches 2 --tilings 4/4/1056 \
  --map /tmp/qkv-map.tsv > /tmp/qkv.log 2>&1
echo "== qkv: ncu rc $? after $(( $(date +%s) - t0 )) s"; grep -E "rror" /tmp/qkv.log | head -3
report qkv
gzip $OUT/*-sass.csv
