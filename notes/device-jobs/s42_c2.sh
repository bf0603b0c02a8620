# Session 42 (replaces s42_c.sh, which probed main alone): the engine's memory bound
# (vexel_core/engine/memory.py: MLX's limit set to the weights + KV pool + a step's working
# set) beside main without it. Its GPU test first, then 16 Q4_0 requests of 512 + 128 with the
# bound, with an explicit 22 GiB limit (~1 GiB above the weights and the pool: how much a
# tight limit costs), and main's engine (its core.py and async_engine.py, copied into the
# untracked mainsrc/ before the call) at MLX's default.
# Carry [".devkit/wheels", ".devkit/setup.sh"] after `tree_slim.sh out`.
#   source .devkit/setup.sh && bash notes/device-jobs/s42_c2.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/vx
t0=$(date +%s)
timeout 120 python3 -m pytest -q -p no:cacheprovider --tb=short -rfE -m gpu \
  tests/test_device_memory.py > $OUT/tests.txt 2>&1
echo "== tests rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/tests.txt)"
grep -E "^(FAILED|ERROR|E ) " $OUT/tests.txt | cut -c1-240 | head -8
ARGS="'bench', '--random', 'llama3-8b', '--dtype', 'q4_0', '--prompt-len', '512', '--output-len', '128', '--kv-cache-memory', '16GiB', '-n', '16'"
arm() {  # name, explicit limit in GiB (0: none)
  timeout 100 python3 -c "
import sys
import mlx.core as mx
if $2:
    mx.set_memory_limit($2 << 30)
from vexel_core.cli import console_main
sys.argv = ['vexel', $ARGS, '--log-level', 'info']
console_main()" > $OUT/$1.txt 2>&1
  echo "== $1: rc $? after $(( $(date +%s) - t0 )) s:" \
    $(grep -oE "memory_limit_gib=[0-9.]+" $OUT/$1.txt | head -1) \
    $(grep -E "generated tok/s|TTFT|ITL|peak memory|rror" $OUT/$1.txt | sed 's/│//g' | tr -s ' ')
}
arm bound 0
arm limit22 22
cp mainsrc/core.py mainsrc/async_engine.py vexel_core/engine/
arm main 0
