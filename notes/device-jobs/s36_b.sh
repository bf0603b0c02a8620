# Session 36, call B: branch next/ff-grid-sum (the feed-forward kernel's down phase as whole
# rows after the grid's count of done slices, no atomics). Carry [".devkit/wheels",
# ".devkit/setup.sh"] after `tree_slim.sh out`.
#   source .devkit/setup.sh && bash notes/device-jobs/s36_b.sh
# Its GPU tests and the compiled decode's; feed_forward.py (the one launch against the two it
# replaces, CUPTI, three rounds); ff_phases.py (its parts); the engine with it against the two
# launches (alternate.py --separate-feed-forward, eight rounds).
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/vx
t0=$(date +%s)
timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_feed_forward.py \
  > $OUT/gpu_tests.txt 2>&1
echo "== GPU tests rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/gpu_tests.txt)"
grep -E "^(FAILED|ERROR)|Error" $OUT/gpu_tests.txt | head -10
(cd benchmarks && timeout 120 python3 feed_forward.py --rounds 3 > $OUT/feed_forward.txt 2>&1)
echo "== feed_forward.py rc $? after $(( $(date +%s) - t0 )) s"
grep -v -i warn $OUT/feed_forward.txt | tail -12
timeout 150 python3 benchmarks/alternate.py --rounds 8 --tokens 256 --separate-feed-forward \
  > $OUT/alternate.txt 2>&1
echo "== alternate rc $? after $(( $(date +%s) - t0 )) s"; tail -4 $OUT/alternate.txt
(cd benchmarks && timeout 150 python3 ff_phases.py --rounds 3 > $OUT/ff_phases.txt 2>&1)
echo "== ff_phases.py rc $? after $(( $(date +%s) - t0 )) s"
grep -v -i warn $OUT/ff_phases.txt | tail -16
[ $(( $(date +%s) - t0 )) -gt 400 ] && exit 0
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/test_compiled_decode.py \
  > $OUT/compiled_tests.txt 2>&1
echo "== compiled decode tests rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/compiled_tests.txt)"
