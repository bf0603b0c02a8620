# Session 26, call E: does writing as a runtime value cost the paged decode GPU time? The
# kernel grid (benchmarks/decode_attention.py --write) on this commit and on the one before
# (notes/patches/write-runtime.patch reversed), alternated; then the engine's compiled decode
# (tests/test_compiled_decode.py: not marked gpu, it runs on the default device) and the
# server's start-up on the 8B Q4_0 file. Carry [".devkit/wheels", ".devkit/setup.sh"].
#   source .devkit/setup.sh && bash notes/device-jobs/s26_e.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
grid() {  # $1: label
  timeout 80 python3 benchmarks/decode_attention.py --write --batches 1 16 --contexts 128 384 \
    > "$OUT/grid-$1.txt" 2>&1
  echo "== grid $1 rc $? after $(( $(date +%s) - t0 )) s"; grep -E "^ +[0-9]+ +[0-9]+ \|" "$OUT/grid-$1.txt"
}
grid runtime-1
patch -s -p1 -R < notes/patches/write-runtime.patch && grid template-1
patch -s -p1 < notes/patches/write-runtime.patch && grid runtime-2
patch -s -p1 -R < notes/patches/write-runtime.patch && grid template-2
patch -s -p1 < notes/patches/write-runtime.patch
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/test_compiled_decode.py \
  > $OUT/compiled_decode.txt 2>&1
echo "== compiled decode tests rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/compiled_decode.txt)"
M=$VEXEL_CACHE/random-llama3-8b-q4_0.gguf
mkdir -p $VEXEL_CACHE
[ -f $M ] || python3 -c "
from pathlib import Path; from vexel_core.bench.random_model import write_random_model
write_random_model(Path('$M'), 'llama3-8b', 'q4_0')"
LIMIT=120
s0=$(date +%s.%N)
python3 "$(which vexel)" serve -m "$M" --kv-cache-memory 16GiB --port 8123 --log-format json \
  --log-level debug > "$OUT/serve.log" 2>&1 &
timeout $LIMIT python3 benchmarks/serve_ready.py http://127.0.0.1:8123 "$s0" > "$OUT/ready.txt" 2>&1
echo "== serve rc $?: $(tail -1 $OUT/ready.txt)"
grep -E '"warm-up round"|"warmed up"' "$OUT/serve.log" | cut -c1-120
kill -INT %1; wait
echo "== done after $(( $(date +%s) - t0 )) s"
