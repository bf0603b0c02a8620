# Planned for session 31 (written in session 30), call D, on branch next/ff-slices: the
# feed-forward kernel reading its down matrix in column slices (packed.slice_q4_0, SLICES),
# a probe. Session 30's Nsight Compute run found the down phase (~15 us of ~37.7) waiting on
# its weight loads, each lane's 16 bytes of quants and 2 of scale of one row in two sectors;
# in slices a CTA streams contiguous 576-byte super-blocks of its own 64 columns. The same
# values, the same order: equal bit for bit in the emulation. Its GPU test (equal to the
# packed rows' launch), then benchmarks/feed_forward.py's three arms alternated (CUPTI).
# Carry [".devkit/wheels", ".devkit/setup.sh"].
#   git checkout next/ff-slices && source .devkit/setup.sh && bash notes/device-jobs/s31_d.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_feed_forward.py \
  > $OUT/gpu_tests.txt 2>&1
echo "== GPU tests rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/gpu_tests.txt)"
grep -E "^(FAILED|ERROR)" $OUT/gpu_tests.txt | head -10
(cd benchmarks && timeout 240 python3 feed_forward.py --rounds 3 2>&1) | grep -v -i warn \
  | tee $OUT/feed_forward.txt
echo "== feed_forward.py rc ${PIPESTATUS[0]} after $(( $(date +%s) - t0 )) s"
