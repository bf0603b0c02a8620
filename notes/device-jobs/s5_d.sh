# Session 5, call D: the engine's tests after the rope workaround; one request q4_0 with the
# in-place cache write and with the scatter (A/B/A); q4_0 64 x 512/128.
export VEXEL_CACHE=/tmp/vx
timeout 120 python3 -m pytest -q -p no:cacheprovider --tb=line tests/test_engine.py tests/test_rope.py tests/test_kv_pool.py 2>&1 | grep -vE "^\.|^$" | head -12
A="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256"
for way in in-place scatter in-place scatter; do
  if [ $way = scatter ]; then V="python3 notes/device-jobs/s5_vexel_with_scatter.py"; else V=vexel; fi
  echo "== $way"; timeout 60 $V $A --json-out $OUT/s5d-q4_0-bs1-$way.json 2>&1 | grep -E "generated tok/s|ITL"
done
timeout 150 vexel bench --random llama3-8b --dtype q4_0 -n 64 --prompt-len 512 --output-len 128 --kv-cache-memory 16GiB --json-out $OUT/s5d-q4_0.json 2>&1 | grep -E "tok/s|TTFT|ITL|peak"
