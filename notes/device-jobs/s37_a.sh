# Session 37, call A: the feed-forward kernel with the next product (branch next/ff-qkv):
# its GPU tests, then benchmarks/feed_forward.py --next (the one launch and the q/k/v launch
# against the one launch with then=q/k/v) and the plain A/B for the kernel without it.
# Carry [".devkit/wheels", ".devkit/setup.sh"] after `tree_slim.sh out`.
#   source .devkit/setup.sh && bash notes/device-jobs/s37_a.sh
: "${OUT:?set OUT to the output folder}"
export PYTHONUNBUFFERED=1
t0=$(date +%s)
timeout 200 python -m pytest -q -m gpu -p no:cacheprovider tests/test_feed_forward.py \
  > $OUT/tests.txt 2>&1
echo "tests rc $? after $(( $(date +%s) - t0 )) s"; tail -3 $OUT/tests.txt
timeout 150 python benchmarks/feed_forward.py --next --rounds 3 > $OUT/next.txt 2>&1
echo "next rc $? after $(( $(date +%s) - t0 )) s"; cat $OUT/next.txt
timeout 100 python benchmarks/feed_forward.py --rounds 2 > $OUT/plain.txt 2>&1
echo "plain rc $? after $(( $(date +%s) - t0 )) s"; cat $OUT/plain.txt
