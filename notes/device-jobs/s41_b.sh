# Prepared in session 40 for session 41 (not run), on main: where gemm_packed's time goes
# (Nsight Compute, full set, one launch each of 8 rows of 28672x4096 and of 4096x14336 at the
# default tiling: session 40 measured 42.2 and 25.4 us, 1,565 and 1,302 GB/s, with the time
# nearly the same from 2 to 8 rows), while llama.cpp builds in the background at nice 19; then
# the three engines at 8 requests of 512 + 128, each alone: llama-batched-bench -npl 1,8 on the
# random Q4_0 file, and `vexel bench --compare mlx-lm` (mlx-lm's BatchGenerator did not finish
# within 150 s in session 40's call C: 400 s here).
# Carry [".devkit/wheels", ".devkit/setup.sh", ".devkit/peers"] after `tree_slim.sh out --model`.
#   source .devkit/setup.sh && bash notes/device-jobs/s41_b.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/vx
t0=$(date +%s)
(timeout 450 nice -n 19 bash .devkit/peers/llamacpp.sh > $OUT/llamacpp-build.log 2>&1; echo "build rc $?" >> $OUT/llamacpp-build.log) &
cat > /tmp/gemm_launches.py <<'PY'
import sys
import mlx.core as mx
sys.path.insert(0, "benchmarks")
from gguf import GGMLQuantizationType as Q
from kernels import random_blocks
from vexel_core.quant.kernels import library
from vexel_core.quant.kernels.packed import pack_q4_0
n, k, m = map(int, sys.argv[1:4])
w = pack_q4_0(random_blocks(Q.Q4_0, n, k))
x = mx.random.normal((m, k)).astype(mx.bfloat16)
mx.eval(w, x)
for _ in range(4):
    mx.eval(library("cuda").gemm_packed(x, w))
PY
for shape in "28672 4096 8" "4096 14336 8"; do
  name=$(echo $shape | tr ' ' _)
  timeout 150 ncu --clock-control none --set full --import-source no -k regex:vx_gemm_packed \
    --launch-skip 2 -c 1 -f -o /tmp/$name python3 /tmp/gemm_launches.py $shape > /tmp/$name.log 2>&1
  echo "== ncu $name: rc $? after $(( $(date +%s) - t0 )) s"; tail -2 /tmp/$name.log | cut -c1-200
  ncu -i /tmp/$name.ncu-rep --page details --print-details all > $OUT/$name-details.txt 2>&1
  ncu -i /tmp/$name.ncu-rep --page source --csv --print-source sass > $OUT/$name-sass.csv 2>&1
  gzip -f $OUT/$name-sass.csv
  grep -E "Duration|Registers Per|Achieved Occupancy|DRAM Throughput|L2 Cache Throughput|L1/TEX Cache Throughput|Warp Cycles Per Issued|Issue Slots Busy|Block Limit" $OUT/$name-details.txt | head -16
done
M=/tmp/vx/random-llama3-8b-q4_0.gguf
[ -s $M ] || python3 .devkit/peers/make_random_gguf_fast.py $M --qtype Q4_0 > /dev/null 2>&1
wait
echo "== build done after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/llamacpp-build.log)"
L=/tmp/lc/llama.cpp/build/bin
timeout 90 $L/llama-batched-bench -m $M -c 16384 -b 2048 -ub 512 -npp 512 -ntg 128 -npl 1,8 \
  -ngl 99 -fa on > $OUT/llamacpp-batched.log 2>&1
echo "== llama-batched-bench rc $? after $(( $(date +%s) - t0 )) s"; grep -E "^\|" $OUT/llamacpp-batched.log
timeout 400 vexel bench --random llama3-8b --dtype q4_0 --prompt-len 512 --output-len 128 --kv-cache-memory 16GiB \
  -n 8 --compare mlx-lm --json-out $OUT/b8.json > $OUT/b8.txt 2>&1
echo "== 8 requests, vexel and mlx-lm: rc $? after $(( $(date +%s) - t0 )) s"
grep -E "engine|generated tok/s|TTFT|ITL|rror" $OUT/b8.txt | sed 's/│//g' | tr -s ' '
