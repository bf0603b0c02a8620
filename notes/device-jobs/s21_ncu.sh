# Session 21, call B: Nsight Compute on one launch of the plain 4096x4096 Q4_0 product and one
# of the fused AddNorm launch (branch next/add-norm), to see where the fused one's ~20 us go.
#   source .devkit/setup.sh && bash notes/device-jobs/s21_ncu.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
for arm in fused:gemv_int8_norm plain:vx_gemv_int8_1002; do
  name=${arm%%:*}; k=${arm#*:}
  timeout 200 ncu --clock-control none --set full --import-source no -k regex:$k --launch-skip 3 -c 1 -f -o /tmp/$name \
    python3 benchmarks/add_norm.py --launches 4 --untimed > /tmp/$name.log 2>&1
  echo "== $name: ncu rc $? after $(( $(date +%s) - t0 )) s"; tail -3 /tmp/$name.log | cut -c1-200
  ncu -i /tmp/$name.ncu-rep --page details --print-details all > $OUT/$name-details.txt 2>&1
  ncu -i /tmp/$name.ncu-rep --page source --csv --print-source sass > $OUT/$name-sass.csv 2>&1
  cp /tmp/$name.ncu-rep $OUT/ 2>/dev/null
  grep -E "Duration|Registers|Achieved Occupancy|DRAM Throughput|Warp Cycles Per Issued|Block Limit|Dynamic Shared|Static Shared" $OUT/$name-details.txt | head -20
done
