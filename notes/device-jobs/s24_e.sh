# Session 24, call E (branch next/packed-heads): the paged decode kernel reading q, k and v
# from the fused projection's heads as one array (`Unrotated.heads`, packed=True) instead of
# as five slices and reshapes a layer (call B: 396 arrays in a step, 131 slices, 98
# reshapes). The step alternated in one process against `ab.py --sliced-heads`, the GPU
# tests of the writing kernel (packed on every other case), the compiled decode and the
# engine, then the step's operations again.
#   source .devkit/setup.sh && bash notes/device-jobs/s24_e.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
timeout 150 python3 benchmarks/alternate.py --rounds 8 --tokens 256 --sliced-heads \
  > $OUT/alternate.txt 2>&1
echo "== alternate rc $? after $(( $(date +%s) - t0 )) s"; tail -10 $OUT/alternate.txt
# (run in session 24 with this loop written out here and pytest -q; gpu_tests.sh is that
# loop, verbose)
bash notes/device-jobs/gpu_tests.sh "130 tests/test_attention_kernels.py -m gpu -k writing" \
  "170 tests/test_compiled_decode.py" "100 tests/test_engine.py"
timeout 60 python3 benchmarks/step_graph.py > $OUT/step_graph.txt 2>&1
echo "== step_graph rc $? after $(( $(date +%s) - t0 )) s"; head -12 $OUT/step_graph.txt
