# Planned for session 34 (written in session 33), branch next/ff-pairs, on the warm machine
# after s34_a/s34_b: carry [".devkit/setup.sh"] (or the wheels on a cold one).
#   git checkout next/ff-pairs && source .devkit/setup.sh && bash notes/device-jobs/s34_c.sh
# The feed-forward kernel with CTA pairs: each CTA leaves its rounded slice in its pair's slot,
# the second of the two to finish multiplies the pair's 128 columns of the down matrix (64
# bytes of quants a row, where one CTA's 64 columns were 32 scattered bytes), the first
# leaves; no CTA waits for another. Emulated: the same bounds as main's kernel (one more
# float32 rounding a term: the four-block tree), the scratch left zero; 89 registers (nvcc,
# sm_90a). Run only if down_layout.py (s34_a) shows "a pair's one" reading faster than the
# engine's way; compare with s34_a's bench of main, run in the same session.
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/vx
t0=$(date +%s)
timeout 120 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_feed_forward.py \
  > $OUT/gpu_tests.txt 2>&1
echo "== GPU tests rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/gpu_tests.txt)"
grep -E "^(FAILED|ERROR|E  )" $OUT/gpu_tests.txt | head -10
(cd benchmarks && timeout 150 python3 feed_forward.py --rounds 3 2>&1) | grep -v -i warn \
  | tee $OUT/feed_forward.txt
echo "== feed_forward.py rc ${PIPESTATUS[0]} after $(( $(date +%s) - t0 )) s"
bash notes/device-jobs/one_request.sh
echo "== bench after $(( $(date +%s) - t0 )) s"
