# Session 6, call 2 (warm machine after call 1, llama.cpp built there): three engines in one call.
export VEXEL_CACHE=/tmp/vx
B="vexel bench --random llama3-8b -n 64 --prompt-len 512 --output-len 128 --kv-cache-memory 16GiB"
timeout 140 $B --dtype bf16 --compare mlx-lm --json-out $OUT/bf16.json 2>&1 | grep -v "━" | grep -E "tok/s|TTFT|ITL|x$|rror"
timeout 110 bash .devkit/peers/llamacpp.sh /tmp/vx/random-llama3-8b-bf16.gguf > $OUT/llamacpp-bf16.log 2>&1; grep -E "pp512|tg128|  64 " $OUT/llamacpp-bf16.log
timeout 110 $B --dtype q4_0 --json-out $OUT/q4_0.json 2>&1 | grep -v "━" | grep -E "tok/s|TTFT|ITL|rror"
timeout 100 bash .devkit/peers/llamacpp.sh /tmp/vx/random-llama3-8b-q4_0.gguf > $OUT/llamacpp-q4_0.log 2>&1; grep -E "pp512|tg128|  64 " $OUT/llamacpp-q4_0.log
timeout 90 vexel bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 --compare mlx-lm --json-out $OUT/q4_0-bs1.json 2>&1 | grep -E "tok/s|ITL|TTFT|x$"
