# Session 10, call B (fresh machine): GPU tests of gemv_int8 with all its shared memory dynamic
# (call A found 8/2/4 at K = 14,336 refused by cuGraphAddKernelNode: MLX opts a kernel in to
# more than 48 KiB by its dynamic part alone); then why the kernel waits: Nsight Compute's warp
# state, scheduler and memory sections for the Q4_0, Q4_K and Q6_K defaults at 14336x4096, and
# the same for llama.cpp's one-row products (built in the background meanwhile).
#   source .devkit/setup.sh && bash notes/device-jobs/s10_b.sh
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/lc /tmp/vx
(bash .devkit/peers/llamacpp.sh > /tmp/lc/build-bg.log 2>&1; echo $? > /tmp/lc/built) &
timeout 200 python3 -m pytest -q -p no:cacheprovider --tb=short tests/test_quant_kernels.py -k "int8" 2>&1 | tail -6
S="--section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis"
timeout 120 ncu --clock-control none --kernel-name regex:vx_gemv_int8 --launch-skip 0 --launch-count 6 $S \
  python3 - > $OUT/stalls-vexel.txt 2>&1 <<'PY'
import mlx.core as mx
from gguf import GGMLQuantizationType as Q
import sys; sys.path.insert(0, "benchmarks")
from kernels import random_blocks
from vexel_core.quant.kernels import library
lib = library("cuda")
x = mx.random.normal((1, 4096)).astype(mx.bfloat16)
for t in (Q.Q4_0, Q.Q4_K, Q.Q6_K):
    raw = random_blocks(t, 14336, 4096); mx.eval(raw, x)
    for _ in range(2):
        mx.eval(lib.gemv(x, raw, t))
PY
echo "vexel ncu rc $?"
grep -E "vx_gemv_int8|Duration|DRAM Throughput|Stall|Warp Cycles Per Issued|Issued Warp Per Scheduler|No Eligible|Active Warps Per Scheduler|Eligible Warps|Achieved Occupancy|Registers Per|Grid Size|Block Size|Mem Busy|Max Bandwidth|L2 Hit" $OUT/stalls-vexel.txt | head -120
for i in $(seq 1 100); do [ -f /tmp/lc/built ] && break; sleep 3; done
echo "llama.cpp build: $(cat /tmp/lc/built 2>/dev/null || echo unfinished)"
f=/tmp/vx/peer-Q4_0.gguf
python3 .devkit/peers/make_random_gguf_fast.py $f --qtype Q4_0 --layers 2 || echo "gguf failed"
timeout 100 ncu --clock-control none --kernel-name regex:mul_mat_vec --launch-skip 60 --launch-count 14 $S \
  /tmp/lc/llama.cpp/build/bin/llama-bench -m $f -p 0 -n 16 -r 1 -ngl 99 -fa 1 > $OUT/stalls-llamacpp.txt 2>&1
echo "llama.cpp ncu rc $?"
grep -E "mul_mat_vec|Duration|DRAM Throughput|Stall|Warp Cycles Per Issued|Issued Warp Per Scheduler|No Eligible|Active Warps Per Scheduler|Eligible Warps|Achieved Occupancy|Registers Per|Grid Size|Block Size|Mem Busy|Max Bandwidth|L2 Hit" $OUT/stalls-llamacpp.txt | head -200
