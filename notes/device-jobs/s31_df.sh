# Planned for session 31 (written in session 30): calls D and F in one, on branch
# next/s31-probes (next/ff-slices and next/device-step merged onto main: they touch different
# files), to pay one machine start instead of two. D: the feed-forward kernel's down matrix
# in column slices (GPU test, then feed_forward.py's three arms); F: the decode step's array
# made on the device (the engine alternated against ab.py --host-step-arrays, then the paged
# decode's launches in order). Each half is its own script too (s31_d.sh, s31_f.sh).
# Carry [".devkit/wheels", ".devkit/setup.sh"].
#   git checkout next/s31-probes && source .devkit/setup.sh && bash notes/device-jobs/s31_df.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/vx
t0=$(date +%s)
timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_feed_forward.py \
  > $OUT/ff_gpu_tests.txt 2>&1
echo "== feed-forward GPU tests rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/ff_gpu_tests.txt)"
grep -E "^(FAILED|ERROR)" $OUT/ff_gpu_tests.txt | head -10
(cd benchmarks && timeout 200 python3 feed_forward.py --rounds 3 2>&1) | grep -v -i warn \
  | tee $OUT/feed_forward.txt
echo "== feed_forward.py rc ${PIPESTATUS[0]} after $(( $(date +%s) - t0 )) s"
timeout 240 python3 benchmarks/alternate.py --rounds 8 --tokens 256 --host-step-arrays \
  > $OUT/alternate.txt 2>&1
echo "== alternate rc $? after $(( $(date +%s) - t0 )) s"; tail -3 $OUT/alternate.txt
[ $(( $(date +%s) - t0 )) -gt 450 ] && exit 0
timeout $(( 580 - $(date +%s) + t0 )) python3 benchmarks/gpu_timeline.py --bin-ms 50 --top 8 \
  --where paged_decode --last 96 -- bench --random llama3-8b --dtype q4_0 -n 1 \
  --prompt-len 128 --output-len 128 --kv-cache-memory 16GiB > $OUT/timeline.txt 2>&1
echo "== gpu_timeline rc $? after $(( $(date +%s) - t0 )) s"
grep -A6 "'paged_decode'" $OUT/timeline.txt | grep -v -i warn
