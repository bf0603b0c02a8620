# Prepared in session 43 for session 44 (plan A of next_session.sh), not run: Nsight Compute on
# one launch of gemm_blocks, Q4_K 28672x4096 (the gate/up product), at 8 and 16 rows, for
# main's kernel and branch next/blocks-issue's (its chunk staged as one list of words: 95
# registers instead of 127 at 8 rows, per local nvcc). Where do its 78-95 us go, against
# ~18 us for its bytes: occupancy (registers, 24 KiB of static shared memory a CTA), the
# stall reasons, shared-memory bank conflicts? Before the call: the branch's header in the
# untracked blocks_issue/ (`git show next/blocks-issue:vexel_core/quant/kernels/cuda/
# gemm_blocks.cuh > blocks_issue/gemm_blocks.cuh`). Carry [".devkit/wheels", ".devkit/setup.sh"]
# after `tree_slim.sh out`.
#   source .devkit/setup.sh && bash notes/device-jobs/s44_a.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
cat > /tmp/blocks_work.py <<'PY'
# gemm_blocks alone, three launches of one activation-row count (sys.argv[1]), one
# evaluation each: the third is profiled
import sys

import mlx.core as mx
from gguf import GGMLQuantizationType as Q

sys.path.insert(0, "benchmarks")
from kernels import random_blocks  # noqa: E402

from vexel_core.quant.kernels import library  # noqa: E402

lib, rows = library("cuda"), int(sys.argv[1])
w = random_blocks(Q.Q4_K, 28672, 4096)
x = mx.random.normal((rows, 4096)).astype(mx.bfloat16)
mx.eval(w, x)
for _ in range(3):
    mx.eval(lib.gemm_blocks(x, w, Q.Q4_K))
PY
profile() {  # name rows; a PTX cache of its own (MLX keys it by kernel name, not by headers)
  MLX_PTX_CACHE_DIR=/tmp/ptx-$1 timeout 150 ncu --clock-control none --set full \
    --import-source no -k regex:vx_gemm_blocks --launch-skip 2 -c 1 -f -o /tmp/$1-$2 \
    python3 /tmp/blocks_work.py $2 > /tmp/$1-$2.log 2>&1
  echo "== $1 $2 rows: ncu rc $? after $(( $(date +%s) - t0 )) s"; tail -2 /tmp/$1-$2.log | cut -c1-200
  ncu -i /tmp/$1-$2.ncu-rep --page details --print-details all > $OUT/$1-$2-details.txt 2>&1
  grep -E "Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|DRAM Throughput|Warp Cycles Per Issued|Block Limit|Static Shared|Bank Conflicts" \
    $OUT/$1-$2-details.txt | head -20
}
profile main 8
profile main 16
cp vexel_core/quant/kernels/cuda/gemm_blocks.cuh /tmp/main_gemm_blocks.cuh
cp blocks_issue/gemm_blocks.cuh vexel_core/quant/kernels/cuda/gemm_blocks.cuh
profile words 8
profile words 16
cp /tmp/main_gemm_blocks.cuh vexel_core/quant/kernels/cuda/gemm_blocks.cuh
ncu -i /tmp/main-8.ncu-rep --page source --csv --print-source sass > $OUT/main-8-sass.csv 2>&1
