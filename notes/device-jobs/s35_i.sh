# Session 35, call I, branch next/ff-pairs-tiled: session 34's CTA pairs (the second of a pair
# to finish multiplies the pair's 128 down columns: half the atomics) reading the down matrix
# tiled by 128 columns; main's kernel beside it (benchmarks/ff_rows.cuh). Its GPU tests, then
# ff_phases.py's cuts of both in one process. Carry [".devkit/wheels", ".devkit/setup.sh"]
# after `tree_slim.sh out`.
#   source .devkit/setup.sh && bash notes/device-jobs/s35_i.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/vx
t0=$(date +%s)
timeout 100 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_feed_forward.py \
  tests/test_kernel_arrays.py -k "feed_forward_on_the_gpu or kernel_arrays" -rfE \
  > $OUT/gpu_tests.txt 2>&1
echo "== GPU tests rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/gpu_tests.txt)"
grep -E "^(FAILED|ERROR|E  )" $OUT/gpu_tests.txt | head -10
(cd benchmarks && timeout 150 python3 ff_phases.py --rounds 3 --rows-kernel ff_rows.cuh \
  > $OUT/ff_phases.txt 2>&1)
echo "== ff_phases.py rc $? after $(( $(date +%s) - t0 )) s"
grep -v -i warn $OUT/ff_phases.txt | tail -30
