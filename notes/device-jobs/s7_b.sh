# Session 7, call B (warm machine after call A): three engines on the final code, bf16 and
# Q4_0, 64 requests of 512 + 128 tokens (issue 4's acceptance), with llama.cpp's llama-bench
# (pp512, tg128: its one-request figure) and batched-bench on the same files.
export VEXEL_CACHE=/tmp/vx
B="vexel bench --random llama3-8b -n 64 --prompt-len 512 --output-len 128 --kv-cache-memory 16GiB --compare mlx-lm"
timeout 170 $B --dtype bf16 --trace-steps $OUT/steps-bf16.jsonl --json-out $OUT/bf16.json 2>&1 | grep -E "tok/s|TTFT|ITL|x$|rror"
timeout 100 bash .devkit/peers/llamacpp.sh /tmp/vx/random-llama3-8b-bf16.gguf > $OUT/llamacpp-bf16.log 2>&1; grep -E "pp512|tg128|  64 " $OUT/llamacpp-bf16.log
timeout 200 $B --dtype q4_0 --json-out $OUT/q4_0.json 2>&1 | grep -E "tok/s|TTFT|ITL|x$|rror"
timeout 100 bash .devkit/peers/llamacpp.sh /tmp/vx/random-llama3-8b-q4_0.gguf > $OUT/llamacpp-q4_0.log 2>&1; grep -E "pp512|tg128|  64 " $OUT/llamacpp-q4_0.log
