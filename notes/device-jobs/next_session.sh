# Proposed first calls of the next session (written at the end of session 9), one after the
# other on the warm machine:
#   source .devkit/setup.sh && bash notes/device-jobs/next_session.sh 1   (then 2, then 3)
# 1: every GPU test while llama.cpp builds (session 9 ran the tests of its changes only: norm,
#    int8 products, attention kernels, compiled decode).
# 2: round three of the gemv_int8 sweep (Q4_0, Q4_K, Q6_K: tilings over 48 KiB, now that the
#    staging slots are in dynamic shared memory; benchmarks/int8_sweep.py) at both shapes.
# 3: one Q4_0 request beside mlx-lm and llama.cpp.
# Then, with branch next/gated-gate-up checked out (act(gate) x up inside the gate/up product;
# written in session 9, never run on a GPU): bash notes/device-jobs/gated_check.sh
export VEXEL_CACHE=/tmp/vx
case "$1" in
1)
  mkdir -p /tmp/lc
  (bash .devkit/peers/llamacpp.sh > /tmp/lc/build-bg.log 2>&1; echo $? > /tmp/lc/built) &
  timeout 300 python3 -m pytest -q -p no:cacheprovider --tb=line tests/test_quant_kernels.py 2>&1 | tail -4
  for t in test_norm_kernels test_compiled_decode test_attention_kernels test_attention_backends test_engine test_kv_pool; do
    timeout 100 python3 -m pytest -q -p no:cacheprovider --tb=line tests/$t.py 2>&1 | tail -2
  done
  ;;
2)
  export FORMATS=Q4_0,Q4_K,Q6_K
  bash notes/device-jobs/s8_kernel_sweep.sh 4096 150
  bash notes/device-jobs/s8_kernel_sweep.sh 14336 150
  ;;
3)
  B="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 --kv-cache-memory 16GiB"
  timeout 150 vexel $B --compare mlx-lm --json-out $OUT/bs1.json --trace-steps $OUT/steps-bs1.jsonl 2>&1 | grep -E "tok/s|ITL|x$|rror"
  python3 benchmarks/step_summary.py $OUT/steps-bs1.jsonl
  for i in $(seq 1 60); do [ -f /tmp/lc/built ] && break; sleep 5; done
  timeout 100 bash .devkit/peers/llamacpp.sh /tmp/vx/random-llama3-8b-q4_0.gguf > $OUT/llamacpp-q4_0.log 2>&1; grep -E "tg128|pp512" $OUT/llamacpp-q4_0.log
  ;;
esac
