# Planned for session 25 (written in session 24), call A, main: the GPU tests that session
# 24's call E cut at their time limits (no failure among those that ran): the writing kernel
# reading the fused product's heads in place (packed, every other case), the compiled decode
# against the eager one, then the KV pool; last the step's operations and the arrays they
# make (step_graph.py: 236 operations in session 24's call E; arrays newly counted). ~94 s
# and ~150 s in session 24's call A; the limits leave room for a slow first compile.
#   source .devkit/setup.sh && bash notes/device-jobs/s25_a.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
bash notes/device-jobs/gpu_tests.sh "220 tests/test_attention_kernels.py -m gpu -k writing" \
  "250 tests/test_compiled_decode.py" "50 tests/test_kv_pool.py"
timeout 50 python3 benchmarks/step_graph.py > $OUT/step_graph.txt 2>&1
echo "== step_graph rc $?"; head -12 $OUT/step_graph.txt
