# Planned for session 23 (written in session 22), call C, with branch next/whole-step checked
# out (or notes/patches/whole-step.patch applied on main): a decode step compiled whole, the
# attention included, against the 33 compiled segments of main. Its GPU tests first (never run
# on a GPU: the in-place writes through a compiled replica, the compiled decode against eager,
# the engine), then alternated rounds, then the build/submit split of each arm's steps.
#   source .devkit/setup.sh && bash notes/device-jobs/s23_c.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
timeout 240 python3 -m pytest -q -p no:cacheprovider -rfE --durations=5 \
  tests/test_kv_pool.py tests/test_compiled_decode.py tests/test_engine.py > $OUT/tests.txt 2>&1
echo "== tests rc $? after $(( $(date +%s) - t0 )) s"; tail -8 $OUT/tests.txt | cut -c1-200
bash notes/device-jobs/arms_rounds.sh 2 "vexel" "python3 benchmarks/ab.py --segment-compile"
