# Session 31, call B: llama.cpp's build (~5.5 min, kept in /tmp/lc for call C on the same warm
# machine) and, beside it (untimed), the engine's tests on the GPU with the step array made on
# the device (merged from next/device-step): test_engine.py, test_compiled_decode.py.
# Carry [".devkit/wheels", ".devkit/setup.sh", ".devkit/peers"] with notes/bench moved out.
#   source .devkit/setup.sh && bash notes/device-jobs/s31_b.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/vx
t0=$(date +%s)
(timeout 560 bash .devkit/peers/llamacpp.sh > $OUT/llamacpp-build.log 2>&1; echo "build rc $?" >> $OUT/llamacpp-build.log) &
timeout 400 python3 -m pytest -q -p no:cacheprovider tests/test_engine.py tests/test_compiled_decode.py \
  > $OUT/engine_tests.txt 2>&1
echo "== engine tests rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/engine_tests.txt)"
grep -E "^(FAILED|ERROR)" $OUT/engine_tests.txt | head -10
M=/tmp/vx/random-llama3-8b-q4_0.gguf
[ -s $M ] || python3 .devkit/peers/make_random_gguf_fast.py $M --qtype Q4_0 > /dev/null 2>&1
wait
echo "== build done after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/llamacpp-build.log)"; ls /tmp/lc/llama.cpp/build/bin/ 2>&1 | head
