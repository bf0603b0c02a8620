# Session 26, call G: start-up with the paged decode's writing as a runtime value against the
# template value (notes/patches/write-runtime.patch reversed), alternated on one machine:
# calls B-E saw NVRTC's times move by a third between machines. `vexel serve` to a healthy
# /health, twice each, then benchmarks/compile_cost.py once each.
# Carry [".devkit/wheels", ".devkit/setup.sh"].
#   source .devkit/setup.sh && bash notes/device-jobs/s26_g.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
M=$VEXEL_CACHE/random-llama3-8b-q4_0.gguf
mkdir -p $VEXEL_CACHE
[ -f $M ] || python3 -c "
from pathlib import Path; from vexel_core.bench.random_model import write_random_model
write_random_model(Path('$M'), 'llama3-8b', 'q4_0')"
python3 -c "import mlx.core as mx; mx.eval(mx.ones(4) + 1)"  # MLX's own first kernels
serve() {  # $1: label
  local s0; s0=$(date +%s.%N)
  python3 "$(which vexel)" serve -m "$M" --kv-cache-memory 16GiB --port 8123 --log-format json \
    --log-level debug > "$OUT/serve-$1.log" 2>&1 &
  local pid=$!
  timeout 100 python3 benchmarks/serve_ready.py http://127.0.0.1:8123 "$s0" > "$OUT/ready-$1.txt" 2>&1
  echo "== serve $1 rc $?: $(tail -1 "$OUT/ready-$1.txt")"
  grep -E '"warm-up round"' "$OUT/serve-$1.log" | grep -o '"round": "[^"]*", "seconds": [0-9.]*' | tr '\n' ' '; echo
  kill -INT $pid; wait $pid
}
serve runtime-1
patch -s -p1 -R < notes/patches/write-runtime.patch && serve template-1
patch -s -p1 < notes/patches/write-runtime.patch && serve runtime-2
patch -s -p1 -R < notes/patches/write-runtime.patch && serve template-2
timeout 60 python3 benchmarks/compile_cost.py > $OUT/compile_cost-template.txt 2>&1
patch -s -p1 < notes/patches/write-runtime.patch
timeout 60 python3 benchmarks/compile_cost.py > $OUT/compile_cost-runtime.txt 2>&1
cat $OUT/compile_cost-template.txt; cat $OUT/compile_cost-runtime.txt
echo "== done after $(( $(date +%s) - t0 )) s"
