# Session 31, call A, main with next/device-step merged: one request beside mlx-lm (the
# workload of session 30's call H), then Nsight Compute's warp samples on the 4,096-column
# products (session 30's s30_a.sh, as far as the call's time allows).
# Carry [".devkit/wheels", ".devkit/setup.sh"].
#   source .devkit/setup.sh && bash notes/device-jobs/s31_a.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/vx
t0=$(date +%s)
B="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 --kv-cache-memory 16GiB"
timeout 260 vexel $B --compare mlx-lm --json-out $OUT/bs1.json --trace-steps $OUT/steps-bs1.jsonl \
  > $OUT/bs1.txt 2>&1
echo "bs1 (rc $?, $(( $(date +%s) - t0 )) s):"; grep -E "tok/s|ITL|TTFT|rror" $OUT/bs1.txt | sed 's/│//g' | tr -s ' '
[ -s $OUT/steps-bs1.jsonl ] && python3 benchmarks/step_summary.py $OUT/steps-bs1.jsonl
gzip $OUT/steps-bs1.jsonl
left() { echo $(( 580 - $(date +%s) + t0 )); }
report() {  # name: the ncu-rep's details and SASS source view into $OUT
  ncu -i /tmp/$1.ncu-rep --page details --print-details all > $OUT/$1-details.txt 2>&1
  ncu -i /tmp/$1.ncu-rep --page source --csv --print-source sass > $OUT/$1-sass.csv 2>&1
  grep -E "Duration|Registers Per|Achieved Occupancy|Warp Cycles Per Issued|Grid Size|Block Size|DRAM Throughput" \
    $OUT/$1-details.txt | head -12
}
for arm in norm:gemv_int8_norm plain:vx_gemv_int8_1002; do
  [ $(left) -lt 100 ] && break
  IFS=: read -r name kernel <<< "$arm"
  timeout $(( $(left) < 150 ? $(left) : 150 )) ncu --clock-control none --set full \
    --import-source no -k regex:$kernel --launch-skip 3 -c 1 -f -o /tmp/$name \
    python3 benchmarks/add_norm.py --untimed --launches 4 > /tmp/$name.log 2>&1
  echo "== $name: ncu rc $? after $(( $(date +%s) - t0 )) s"; grep -E "rror" /tmp/$name.log | head -3
  report $name
done
gzip $OUT/*-sass.csv
