# Proposed first calls of the next session (written at the end of session 7), one after the
# other on the warm machine:
#   source .devkit/setup.sh && bash notes/device-jobs/next_session_first_call.sh 1   (then 2)
# Session 7 ran every GPU test on its final code in pieces (calls A and D) and the three
# engines at 64 x 512/128 (call B), but never one request with all three engines in one call
# after gemv_int8, nor the whole quantized-kernel suite in one run on the final code.
export VEXEL_CACHE=/tmp/vx
case "$1" in
1)
  # llama.cpp builds in the background (the peers script with no model only builds) while the
  # GPU tests run (~4.5 min on a fresh machine).
  mkdir -p /tmp/lc
  (bash .devkit/peers/llamacpp.sh > /tmp/lc/build-bg.log 2>&1; echo $? > /tmp/lc/built) &
  timeout 400 python3 -m pytest -q -p no:cacheprovider --tb=line tests/test_quant_kernels.py 2>&1 | tail -4
  for t in test_attention_kernels test_attention_backends test_engine; do
    timeout 80 python3 -m pytest -q -p no:cacheprovider --tb=line tests/$t.py 2>&1 | tail -2
  done
  wait
  echo "llama.cpp build rc $(cat /tmp/lc/built)"
  ;;
2)
  # One request, Q4_0, all three engines in one call; then the compiled-MLP experiment again.
  B="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 --kv-cache-memory 16GiB"
  timeout 150 vexel $B --compare mlx-lm --json-out $OUT/bs1.json --trace-steps $OUT/steps-bs1.jsonl 2>&1 | grep -E "tok/s|ITL|x$|rror"
  timeout 100 bash .devkit/peers/llamacpp.sh /tmp/vx/random-llama3-8b-q4_0.gguf > $OUT/llamacpp-q4_0.log 2>&1; grep -E "tg128|  1 " $OUT/llamacpp-q4_0.log
  timeout 60 python3 benchmarks/ab.py --compile-mlp $B 2>&1 | grep -E "generated tok/s|ITL|rror"
  ;;
esac
