# Session 8, calls B1 and B2 (warm after call A, which built llama.cpp):
#   source .devkit/setup.sh && bash notes/device-jobs/s8_b.sh 1   (then 2)
# B1: one request of a Q4_0 Llama-3-8B shape with compiled decode steps (the default on a GPU)
# beside the same engine without them, mlx-lm and llama.cpp. B2: 64 x 512/128 with and
# without, Q4_0 and bf16.
export VEXEL_CACHE=/tmp/vx
case "$1" in
1)
  B="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 --kv-cache-memory 16GiB"
  timeout 150 vexel $B --compare mlx-lm --json-out $OUT/bs1.json --trace-steps $OUT/steps-bs1.jsonl 2>&1 | grep -E "tok/s|ITL|x$|rror"
  VEXEL_ENGINE__COMPILED_DECODE_ROWS=0 timeout 60 vexel $B --json-out $OUT/bs1-eager.json --trace-steps $OUT/steps-bs1-eager.jsonl 2>&1 | grep -E "generated tok/s|ITL|rror" | sed 's/^/eager: /'
  timeout 60 vexel $B 2>&1 | grep -E "generated tok/s|ITL|rror" | sed 's/^/compiled again: /'
  python3 benchmarks/step_summary.py $OUT/steps-bs1.jsonl $OUT/steps-bs1-eager.jsonl
  timeout 100 bash .devkit/peers/llamacpp.sh /tmp/vx/random-llama3-8b-q4_0.gguf > $OUT/llamacpp-q4_0.log 2>&1; grep -E "tg128|pp512" $OUT/llamacpp-q4_0.log
  ;;
2)
  for dtype in q4_0 bf16; do
    M="bench --random llama3-8b --dtype $dtype -n 64 --prompt-len 512 --output-len 128 --kv-cache-memory 16GiB"
    timeout 100 vexel $M --json-out $OUT/b64-$dtype.json --trace-steps $OUT/steps-b64-$dtype.jsonl 2>&1 | grep -E "generated tok/s|ITL|TTFT|rror" | sed "s/^/$dtype compiled: /"
    VEXEL_ENGINE__COMPILED_DECODE_ROWS=0 timeout 80 vexel $M 2>&1 | grep -E "generated tok/s|ITL|TTFT|rror" | sed "s/^/$dtype eager: /"
  done
  python3 benchmarks/step_summary.py $OUT/steps-b64-*.jsonl
  ;;
esac
