# Session 32, call B, main: where a decode step's GPU time goes now, and the q/k/v product
# under Nsight Compute. (1) `gpu_timeline.py` over `vexel bench` (one Q4_0 request, 256
# tokens): the kernels grouped by name, for a fresh per-layer budget (the last was session
# 26's). (2) The q/k/v product (6144x4096, packed Q4_0, the engine's tiling) with the full set
# and its SASS samples: is x's load and rounding 40% here too, as in the plain 4096x4096
# product (session 31)? If so, x rounded by its writer is the lever.
# Carry [".devkit/wheels", ".devkit/setup.sh"].
#   source .devkit/setup.sh && bash notes/device-jobs/s32_b.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/vx
t0=$(date +%s)
B="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 --kv-cache-memory 16GiB"
timeout 200 python3 benchmarks/gpu_timeline.py --bin-ms 50 --top 16 -- $B > $OUT/timeline-bs1.txt 2>&1
echo "== timeline rc $? after $(( $(date +%s) - t0 )) s"
grep -E "^span|^ *[0-9.]+ +[0-9]+ " $OUT/timeline-bs1.txt | cut -c1-160 | head -20
timeout 150 ncu --clock-control none --set full --import-source no -k regex:vx_gemv_int8_1002 \
  --launch-skip 1 -c 1 -f -o /tmp/qkv \
  python3 benchmarks/packed_ncu.py --shapes Q4_0/qkv --launches 2 --tilings 4/4/1056 \
  --map /tmp/qkv-map.tsv > /tmp/qkv.log 2>&1
echo "== qkv: ncu rc $? after $(( $(date +%s) - t0 )) s"; grep -E "rror" /tmp/qkv.log | head -3
ncu -i /tmp/qkv.ncu-rep --page details --print-details all > $OUT/qkv-details.txt 2>&1
ncu -i /tmp/qkv.ncu-rep --page source --csv --print-source sass > $OUT/qkv-sass.csv 2>&1
grep -E "Duration|Registers Per|Achieved Occupancy|Warp Cycles Per Issued|Grid Size|Block Size|Memory Throughput" \
  $OUT/qkv-details.txt | head -12
cp /tmp/qkv-map.tsv $OUT/ 2>/dev/null
gzip $OUT/*-sass.csv
