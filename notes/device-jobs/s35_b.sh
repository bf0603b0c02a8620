# Session 35, the feed-forward kernel reading its down matrix tiled by column (packed.py,
# tile_q4_0), before the engine keeps the down matrices so: the kernel's GPU test and
# feed_forward.py (the two launches, unchanged, are the same run's reference: 37.7-38.0 us
# against the one launch's 37.8-38.0 in session 33). Carry [".devkit/wheels",
# ".devkit/setup.sh"] after `tree_slim.sh out`.
#   source .devkit/setup.sh && bash notes/device-jobs/s35_b.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/vx
t0=$(date +%s)
timeout 120 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_feed_forward.py \
  -k test_feed_forward_on_the_gpu > $OUT/gpu_tests.txt 2>&1
echo "== GPU tests rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/gpu_tests.txt)"
grep -E "^(FAILED|ERROR|E  )" $OUT/gpu_tests.txt | head -10
(cd benchmarks && timeout 150 python3 feed_forward.py --rounds 3 > $OUT/feed_forward.txt 2>&1)
echo "== feed_forward.py rc $? after $(( $(date +%s) - t0 )) s"
grep -v -i warn $OUT/feed_forward.txt
