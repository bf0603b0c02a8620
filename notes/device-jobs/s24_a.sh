# Planned for session 24 (written in session 23), call A, with branch next/rope-in-attention
# checked out (or notes/patches/rope-in-attention.patch applied on main): the paged decode
# kernel rotating q and the new keys itself, one MLX rope launch a layer fewer. Its GPU tests
# (the writing kernel with rotation at every warp count and span count, the compiled decode
# against eager, the engine), then the step alternated in one process against
# `ab.py --separate-rope` (the rope before the attention, as main does).
#   source .devkit/setup.sh && bash notes/device-jobs/s24_a.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
timeout 160 python3 benchmarks/alternate.py --rounds 8 --tokens 256 --separate-rope \
  > $OUT/alternate.txt 2>&1
echo "== alternate rc $? after $(( $(date +%s) - t0 )) s"; tail -10 $OUT/alternate.txt
# (limits: at most 160 + 140 + 170 + 100 s, within a call's 600; session 23's call D took
# 78 s for the A/B, 146 s for test_compiled_decode and 74 s for test_engine)
# (run in session 24 with this loop written out here and pytest -q; gpu_tests.sh is that
# loop, verbose)
bash notes/device-jobs/gpu_tests.sh "140 tests/test_attention_kernels.py -m gpu -k writing" \
  "170 tests/test_compiled_decode.py" "100 tests/test_engine.py"
