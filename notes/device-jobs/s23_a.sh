# Planned for session 23 (written in session 22), call A, with branch next/decode-segment
# checked out (or notes/patches/decode-segment.patch applied on main): the segment whose last
# phase's last part zeroes the queue (no exit count) on the H200. Its GPU tests first (that
# change has not run on a GPU), then the launch beside its four launches and its variants
# (exit-count, block-order: what the per-CTA atomics cost), then alternated engine rounds.
#   source .devkit/setup.sh && bash notes/device-jobs/s23_a.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_decode_segment.py -rfE \
  --durations=5 > $OUT/tests.txt 2>&1
echo "== tests rc $? after $(( $(date +%s) - t0 )) s"; tail -8 $OUT/tests.txt | cut -c1-200
timeout 150 python3 benchmarks/segment.py --variants > $OUT/segment.txt 2>&1
echo "== segment.py rc $? after $(( $(date +%s) - t0 )) s"; grep -E "^  [a-z]" $OUT/segment.txt | cut -c1-200
bash notes/device-jobs/arms_rounds.sh 2 "vexel" "python3 benchmarks/ab.py --separate-segment"
