# Runs test files on the GPU machine, each under its own time limit: one quoted spec a file,
# "LIMIT FILE [pytest arguments without spaces inside one]". Each file's verbose output goes
# to $OUT/<file>.txt (a file cut by its limit still says which tests ran), a line of results
# here. Other device jobs call it, e.g.
#   bash notes/device-jobs/gpu_tests.sh "250 tests/test_attention_kernels.py -m gpu -k writing"
: "${OUT:?set OUT to the output folder}"
t0=$(date +%s)
for spec in "$@"; do
  set -- $spec
  limit=$1 file=$2
  shift 2
  log=$OUT/$(basename "$file" .py).txt
  timeout "$limit" python3 -m pytest -v -p no:cacheprovider -rfE --durations=5 \
    -o faulthandler_timeout=120 "$file" "$@" > "$log" 2>&1
  echo "== $file rc $? after $(( $(date +%s) - t0 )) s"
  grep -E "FAILED|ERROR|passed|failed" "$log" | tail -4 | cut -c1-200
done
