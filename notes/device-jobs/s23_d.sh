# Session 23, call D (branch next/whole-step): call C's tests ran out of their 240 s inside
# test_compiled_decode's Gemma 2 case (slow JIT or a hang?), and its rounds were split by a
# host episode. Here: the whole step against the 33 segments alternated in one process
# (benchmarks/alternate.py), then the GPU tests one file at a time, verbose, with a traceback
# if one test runs 150 s (faulthandler).
#   source .devkit/setup.sh && bash notes/device-jobs/s23_d.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
timeout 200 python3 benchmarks/alternate.py --rounds 8 --tokens 256 > $OUT/alternate.txt 2>&1
echo "== alternate rc $? after $(( $(date +%s) - t0 )) s"; tail -10 $OUT/alternate.txt
for f in "tests/test_compiled_decode.py 220" "tests/test_kv_pool.py 60" "tests/test_engine.py 120"; do
  set -- $f
  timeout $2 python3 -m pytest -v -p no:cacheprovider -rfE --durations=0 -o faulthandler_timeout=150 \
    $1 > $OUT/$(basename $1 .py).txt 2>&1
  echo "== $1 rc $? after $(( $(date +%s) - t0 )) s"; grep -cE "PASSED|FAILED|ERROR" $OUT/$(basename $1 .py).txt
  grep -E "FAILED|ERROR|passed|failed" $OUT/$(basename $1 .py).txt | tail -4 | cut -c1-200
done
