# Session 27, call E (main): the one-launch feed-forward part (cuda/feed_forward.cuh): its GPU
# tests, the compiled decode's, then the step alternated against the two launches it replaces
# (`--separate-feed-forward`) in one process, then one request beside mlx-lm.
# Carry [".devkit/wheels", ".devkit/setup.sh"].
#   source .devkit/setup.sh && bash notes/device-jobs/s27_e.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_feed_forward.py \
  > $OUT/gpu_feed_forward.txt 2>&1
echo "== feed-forward GPU tests rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/gpu_feed_forward.txt)"
grep -E "^(FAILED|ERROR)|Error|assert" $OUT/gpu_feed_forward.txt | head -20
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/test_compiled_decode.py \
  > $OUT/compiled_decode.txt 2>&1
echo "== compiled decode rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/compiled_decode.txt)"
timeout 200 python3 benchmarks/alternate.py --rounds 8 --tokens 256 --separate-feed-forward \
  > $OUT/alternate.txt 2>&1
echo "== alternate rc $? after $(( $(date +%s) - t0 )) s"; tail -10 $OUT/alternate.txt
