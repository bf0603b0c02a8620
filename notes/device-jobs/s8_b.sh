# Session 8, calls B0, B1, B2, one after the other on the warm machine:
#   source .devkit/setup.sh && bash notes/device-jobs/s8_b.sh 0   (then 1, then 2)
# B0 (fresh machine): llama.cpp builds in the background while the GPU tests of compiled
# decode steps and of gemv_int8's new default tilings run (call A's ran out of time or met a
# test bug), then the tiling sweep's second round at 4096x14336.
# B1: one request of a Q4_0 Llama-3-8B shape with compiled decode steps (the default on a GPU)
# beside the same engine without them, mlx-lm and llama.cpp. B2: 64 x 512/128 with and
# without, Q4_0 and bf16.
export VEXEL_CACHE=/tmp/vx
case "$1" in
0)
  mkdir -p /tmp/lc
  (bash .devkit/peers/llamacpp.sh > /tmp/lc/build-bg.log 2>&1; echo $? > /tmp/lc/built) &
  timeout 170 python3 -m pytest -q -p no:cacheprovider --tb=short tests/test_compiled_decode.py 2>&1 | tail -6
  timeout 150 python3 -m pytest -q -p no:cacheprovider --tb=line tests/test_quant_kernels.py -k "int8 and gguf_kernel" 2>&1 | tail -6
  bash notes/device-jobs/s8_kernel_sweep.sh 14336 100 | grep -v "skipped: over the budget"
  wait
  echo "llama.cpp build rc $(cat /tmp/lc/built)"
  ;;
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
