# Session 37, call E: the next product's rows two at a time (both rows' loads in flight): its
# GPU tests, benchmarks/feed_forward.py --next, and the engine's A/B against the q/k/v product
# in a launch of its own (alternate.py --separate-qkv).
# Carry [".devkit/wheels", ".devkit/setup.sh"] after `tree_slim.sh out`.
#   source .devkit/setup.sh && bash notes/device-jobs/s37_e.sh
: "${OUT:?set OUT to the output folder}"
export PYTHONUNBUFFERED=1 VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/vx
t0=$(date +%s)
timeout 150 python -m pytest -q -m gpu -p no:cacheprovider tests/test_feed_forward.py -k next \
  > $OUT/tests.txt 2>&1
echo "tests rc $? after $(( $(date +%s) - t0 )) s"; tail -2 $OUT/tests.txt
(cd benchmarks && timeout 120 python3 feed_forward.py --next --rounds 2 > $OUT/next.txt 2>&1)
echo "next rc $? after $(( $(date +%s) - t0 )) s"; grep -v Warn $OUT/next.txt
timeout 200 python benchmarks/alternate.py --rounds 6 --tokens 256 --separate-qkv \
  > $OUT/alternate.txt 2>&1
echo "alternate rc $? after $(( $(date +%s) - t0 )) s"; tail -9 $OUT/alternate.txt
