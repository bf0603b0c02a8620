# Session 4, call E2 (warm machine after E1): the three engines, one after the other, nothing
# else running: bf16 and q4_0 64 x 512/128, then q4_0 one request.
export VEXEL_CACHE=/tmp/vx
timeout 70 python3 -m pytest -q -p no:cacheprovider -x tests/test_engine.py -k "concurrent_equals_sequential and paged" 2>&1 | grep -E "Error|error|^E " | head -12
B="vexel bench --random llama3-8b -n 64 --prompt-len 512 --output-len 128 --kv-cache-memory 16GiB --compare mlx-lm"
timeout 150 $B --dtype bf16 --json-out $OUT/bf16.json 2>&1 | grep -v "━"
timeout 120 bash .devkit/peers/llamacpp.sh /tmp/vx/random-llama3-8b-bf16.gguf > $OUT/llamacpp-bf16.log 2>&1; grep -E "pp512|tg128|  64 " $OUT/llamacpp-bf16.log
timeout 200 $B --dtype q4_0 --json-out $OUT/q4_0.json 2>&1 | grep -v "━"
timeout 100 bash .devkit/peers/llamacpp.sh /tmp/vx/random-llama3-8b-q4_0.gguf > $OUT/llamacpp-q4_0.log 2>&1; grep -E "pp512|tg128|  64 " $OUT/llamacpp-q4_0.log
timeout 100 vexel bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 --compare mlx-lm --json-out $OUT/q4_0-bs1.json 2>&1 | grep -E "tok/s|ITL|TTFT|x$"
