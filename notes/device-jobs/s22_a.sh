# Planned for session 22 (written in session 21), call A: the decode segment on the H200, with
# notes/patches/decode-segment.patch and segment-consumer-norm.patch applied on main (or
# branch next/segment-consumer-norm). Its tests first (this version has not run on a GPU; the
# engine test never has), then alternated rounds against the separate launches, then its
# timeline.
#   source .devkit/setup.sh && bash notes/device-jobs/s22_a.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/test_decode_segment.py -rfE \
  --durations=5 > $OUT/tests.txt 2>&1
echo "== tests rc $? after $(( $(date +%s) - t0 )) s"; tail -12 $OUT/tests.txt | cut -c1-200
bash notes/device-jobs/arms_rounds.sh 2 "vexel" "python3 benchmarks/ab.py --separate-segment"
W="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 128 --cache-dir /tmp/vx"
timeout 100 python3 benchmarks/gpu_timeline.py --top 10 --where decode_segment -- $W \
  > $OUT/timeline.txt 2>&1
echo "== timeline rc $? after $(( $(date +%s) - t0 )) s"; grep -E "^ +[0-9.]+ +[0-9]+ +[0-9.]+" $OUT/timeline.txt | cut -c1-150
grep -A4 -E "^'decode_segment'" $OUT/timeline.txt | grep -v "last 96" | cut -c1-150
