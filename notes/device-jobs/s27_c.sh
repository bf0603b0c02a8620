# (The probe was removed at the session's end: git show a345f4512210:benchmarks/mlp_probe.py
# and mlp_probe.cuh restore it.)
# Session 27, call C (main): the fused feed-forward probe (benchmarks/mlp_probe.py: checked
# against the engine's two launches, then timed alternated with them), and whether two
# activation rows need their own compiled tile (ACTIVATION_TILES' 2) or may take the 4-row
# kernel: one kernel fewer to compile at start-up if the times match.
# Carry [".devkit/wheels", ".devkit/setup.sh"].
#   source .devkit/setup.sh && bash notes/device-jobs/s27_c.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
cd benchmarks
timeout 240 python3 mlp_probe.py ${MLP_VARIANTS:+--variants $MLP_VARIANTS} > $OUT/mlp_probe.txt 2>&1
echo "== mlp_probe rc $? after $(( $(date +%s) - t0 )) s"; cat $OUT/mlp_probe.txt | grep -v "^\s*$" | tail -30
timeout 150 python3 - > $OUT/two_rows.txt 2>&1 <<'PY'
# two activation rows by the 2-row tile and by the 4-row tile (half its rows idle), us a product
import mlx.core as mx
from gguf import GGMLQuantizationType as Q
from kernels import NOT_IN_L2, random_blocks, timed
from vexel_core.quant.kernels import library
from vexel_core.quant.kernels.packed import pack_q4_0
lib = library("cuda")
for rows, cols in [(4096, 4096), (6144, 4096), (28672, 4096), (4096, 14336)]:
    w = pack_q4_0(random_blocks(Q.Q4_0, rows, cols))
    ws = [w] + [w + mx.zeros((), w.dtype) for _ in range(int(NOT_IN_L2 // w.nbytes))]
    mx.eval(ws)
    x = mx.random.normal((2, cols)).astype(mx.bfloat16)
    line = []
    for rnd in range(2):
        for tile in (2, 4):
            t = timed(lambda a, tile=tile: lib.gemv(x, a, Q.Q4_0, tile=tile, packed=True), ws, w.nbytes)
            line.append(f"tile {tile}: {t.us:6.1f}")
    print(f"{rows}x{cols}: " + "  ".join(line), flush=True)
PY
echo "== two rows rc $? after $(( $(date +%s) - t0 )) s"; tail -6 $OUT/two_rows.txt
