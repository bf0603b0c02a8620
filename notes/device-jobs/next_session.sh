# Proposed device calls of the next session (written at the end of session 10). Each is one
# call on a fresh or warm machine; never pipe the call's whole output through tail (a limit
# kill loses it; notes/gpu-kernels.md, session 10):
#   source .devkit/setup.sh && bash notes/device-jobs/next_session.sh 1     (then 2, 3)
# Before any of them, optionally: check out branch next/gated-gate-up (rebased onto session 10's main)
# and run notes/device-jobs/gated_check.sh: act(gate) x up inside the gate/up product, never
# run on a GPU; it removes a custom kernel and two views a layer (~4.5 us of host time each).
# Likewise branch next/packed-q4_0 and notes/device-jobs/packed_check.sh (~300 s): a repacked
# Q4_0 layout and a one-row kernel without staging, timed against gemv_int8 (the kernel goals).
# 1: every GPU test, with llama.cpp building in the background (session 10's call D printed no
#    summary for the compiled-decode and attention-kernel suites before its limit).
# 2: one Q4_0 request beside mlx-lm and llama.cpp in one call (needs part 1's llama.cpp build on
#    the same warm machine; otherwise it builds it first, ~5 min).
# 3: the sweep's round four again with its "+x" candidates (4/2/4/792 with x in registers,
#    added after session 10's last call), 14336x4096 then 4096x14336, ~150 s each.
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/lc /tmp/vx
case "$1" in
1)
  [ -f /tmp/lc/built ] || (bash .devkit/peers/llamacpp.sh > /tmp/lc/build-bg.log 2>&1; echo $? > /tmp/lc/built) &
  for t in test_quant_kernels test_norm_kernels test_compiled_decode test_attention_kernels \
           test_attention_backends test_engine test_kv_pool; do
    timeout 240 python3 -m pytest -q -p no:cacheprovider --tb=short tests/$t.py > /tmp/t.txt 2>&1
    echo "$t (rc $?): $(tail -1 /tmp/t.txt)"; cat /tmp/t.txt >> $OUT/gpu-tests.txt
  done
  ;;
2)
  B="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 --kv-cache-memory 16GiB"
  timeout 200 vexel $B --compare mlx-lm --json-out $OUT/bs1.json --trace-steps $OUT/steps-bs1.jsonl > $OUT/bs1.txt 2>&1
  grep -E "tok/s|ITL|x$|rror" $OUT/bs1.txt
  python3 benchmarks/step_summary.py $OUT/steps-bs1.jsonl
  [ -f /tmp/lc/built ] || bash .devkit/peers/llamacpp.sh > /tmp/lc/build-fg.log 2>&1
  timeout 100 bash .devkit/peers/llamacpp.sh /tmp/vx/random-llama3-8b-q4_0.gguf > $OUT/llamacpp-q4_0.log 2>&1
  grep -E "tg128|pp512" $OUT/llamacpp-q4_0.log
  ;;
3)
  export FORMATS=Q4_0,Q4_K,Q6_K
  bash notes/device-jobs/s8_kernel_sweep.sh 4096 150
  bash notes/device-jobs/s8_kernel_sweep.sh 14336 150
  ;;
esac
