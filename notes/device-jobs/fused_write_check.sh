# Branch next/fused-cache-write on a GPU for the first time: a decode step's cache write done
# by the paged decode kernel (WRITE) instead of its own launch. Two calls (each ~300 s):
#   source .devkit/setup.sh && bash notes/device-jobs/fused_write_check.sh tests
#   source .devkit/setup.sh && bash notes/device-jobs/fused_write_check.sh ab
# tests: the kernel's writing variants against float64 with the pools compared bit for bit
#   (NaN rows where the new token goes; the new rows and the block tables as views), the
#   backends' step (the pool after it too), the pools, compiled decode against eager;
#   $OUT/tests.txt.
# ab: one request, the branch against `ab.py --separate-cache-write` (ab_rounds.sh).
# What decides merging: the fused arm ahead in every round (tok/s and median step), as the
# gated product was in session 12; expected ~0.15-0.3 ms a token (one custom launch a layer:
# ~4.5 us of MLX's host time and ~4 us of GPU).
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
case "$1" in
tests)
  t0=$(date +%s)
  timeout 280 python3 -m pytest -q -p no:cacheprovider --tb=short tests/test_attention_kernels.py \
    tests/test_attention_backends.py tests/test_kv_pool.py tests/test_compiled_decode.py \
    -k "not emulated and (writing or backends or pool or compiled)" > $OUT/tests.txt 2>&1
  echo "tests rc $? after $(( $(date +%s) - t0 )) s: $(grep -E '[0-9]+ (passed|failed|error)' $OUT/tests.txt | sed -n '$p')"
  grep -E "^(FAILED|ERROR)" $OUT/tests.txt | cut -c1-200 | sed -n 1,10p
  ;;
ab)
  bash notes/device-jobs/ab_rounds.sh "vexel" "python3 benchmarks/ab.py --separate-cache-write"
  ;;
*)
  echo "usage: fused_write_check.sh tests|ab"; exit 2
  ;;
esac
