# Prepared in session 41 for session 42 (not run): where `vexel bench`'s peak memory comes from
# (46.7 GiB for 8 Q4_0 requests of 512 + 128, 66.7 for 16, with 4.5 GB of weights and a 16 GiB
# KV pool). MLX keeps a launched op's inputs alive until the GPU has run it and waits for the
# GPU only past 10 tasks in flight or past its memory limit (95% of GPU memory on CUDA; see
# next_session.sh, C). The same workload under mx.set_memory_limit(32 GiB) and (24 GiB): if
# the peak falls to the limit and TTFT barely moves, the engine should set a limit from its
# own budget. Carry [".devkit/wheels", ".devkit/setup.sh"] after `tree_slim.sh out`.
#   source .devkit/setup.sh && bash notes/device-jobs/s42_c.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/vx
t0=$(date +%s)
ARGS="'bench', '--random', 'llama3-8b', '--dtype', 'q4_0', '--prompt-len', '512', '--output-len', '128', '--kv-cache-memory', '16GiB', '-n', '16'"
for gib in 0 32 24; do
  timeout 100 python3 -c "
import sys
import mlx.core as mx
if $gib:
    mx.set_memory_limit($gib << 30)
from vexel_core.cli import console_main
sys.argv = ['vexel', $ARGS]
console_main()" > $OUT/limit-$gib.txt 2>&1
  echo "== memory limit $gib GiB (0: MLX's default): rc $? after $(( $(date +%s) - t0 )) s:" \
    $(grep -E "generated tok/s|TTFT|ITL|peak memory|rror" $OUT/limit-$gib.txt | sed 's/│//g' | tr -s ' ')
done
