# Start-up on CUDA: `vexel serve` on a GGUF file, the seconds until /health answers 200 and
# the first requests' times (benchmarks/serve_ready.py), once plain and once under py-spy with
# native frames, then which Python calls the NVRTC compiles come from. Needs .devkit/pyspy
# carried.
#   bash notes/device-jobs/serve_startup.sh MODEL.gguf [LIMIT_S]
: "${OUT:?set OUT to the output folder}"
M=${1:?a GGUF file}; LIMIT=${2:-150}
python3 -m pip install -q --no-index --no-deps --target /tmp/pyspy .devkit/pyspy/*.whl
export PATH=/tmp/pyspy/bin:$PATH  # where --target puts the wheel's executable
bash notes/device-jobs/devkit_sync.sh  # the server's wheels, on a machine first met without them
serve_once() {  # $1: label; the rest: a command prefix (none, or py-spy's)
  local label=$1; shift
  local s0; s0=$(date +%s.%N)
  "$@" python3 "$(which vexel)" serve -m "$M" --kv-cache-memory 16GiB --port 8123 \
    --log-format json --log-level ${LOG_LEVEL:-info} > "$OUT/serve-$label.log" 2>&1 &
  timeout "$LIMIT" python3 benchmarks/serve_ready.py http://127.0.0.1:8123 "$s0" \
    > "$OUT/ready-$label.txt" 2>&1
  echo "== serve $label rc $?: $(tail -1 "$OUT/ready-$label.txt")"
  grep '"warmed up"' "$OUT/serve-$label.log" | cut -c1-160
  pkill -INT -f "vexel serve"  # py-spy too (its command line holds the server's): it writes
  for _ in $(seq 30); do pgrep -f "vexel serve" > /dev/null || break; sleep 1; done
  pkill -KILL -f "vexel serve"; wait
}
serve_once plain
serve_once spy py-spy record --native --rate 100 --format raw -o "$OUT/spy-serve.txt" --
python3 benchmarks/spy_summary.py "$OUT/spy-serve.txt" --through nvrtcCompile --top 60 \
  > "$OUT/through-nvrtc.txt"
head -64 "$OUT/through-nvrtc.txt" | cut -c1-160
gzip "$OUT/spy-serve.txt"
