# Session 48, call 1: INT8_ROWS by weight size (two rows of a weight of at most 32 Mi elements,
# one of Q4_0; four of a larger one, two of Q4_0). GPU tests of every product that the
# default routing picks (the kernels themselves passed session 47's call 1 unchanged), then
# the engine against the routing before (every weight large: INT8_SMALL_WEIGHT = 0, set
# through importlib), alternated, then the legacy formats' 6144x4096 rows, untimed so far.
# Carry [".devkit/wheels", ".devkit/setup.sh"] after `tree_slim.sh out`.
#   source .devkit/setup.sh && bash notes/device-jobs/s48_1.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
timeout 240 python3 -m pytest -q -p no:cacheprovider -rfE -n 8 -o faulthandler_timeout=120 \
  tests/test_quant_kernels.py tests/test_quant_formats.py tests/test_gemm_packed.py \
  tests/test_gemm_blocks.py tests/test_feed_forward.py \
  -k "product or precision or unaligned or selected or packed_weight or gguf_matmul or feed_forward or gated" \
  > $OUT/tests.txt 2>&1
echo "== tests rc $? after $(( $(date +%s) - t0 )) s"; grep -E "FAILED|ERROR|passed|failed" $OUT/tests.txt | tail -6 | cut -c1-200
arm() {  # routing dtype requests
  pre=""; [ $1 = old ] && pre="import importlib; l = importlib.import_module('vexel_core.quant.kernels.library'); l.INT8_SMALL_WEIGHT = 0; "
  timeout 100 python3 -c "${pre}from vexel_core.cli import console_main; console_main()" bench \
    --random llama3-8b --dtype $2 --kv-cache-memory 16GiB -n $3 --prompt-len 512 \
    --output-len 128 > $OUT/b$3-$2-$1.txt 2>&1
  echo "== $3 $2 requests, $1 routing: rc $? after $(( $(date +%s) - t0 )) s:" \
    $(grep -E "generated tok/s|ITL|rror" $OUT/b$3-$2-$1.txt | sed 's/│//g' | tr -s ' ')
}
arm new q4_k_m 4; arm old q4_k_m 4; arm new q4_k_m 4; arm old q4_k_m 4
arm new q4_0 2; arm old q4_0 2
arm new q8_0 4; arm old q8_0 4
(cd benchmarks && timeout 60 python3 gemv_rows.py --formats Q4_1,Q5_0,Q5_1 --shapes 6144x4096) \
  > $OUT/rows.txt 2>&1
echo "== gemv_rows rc $? after $(( $(date +%s) - t0 )) s"; grep -v Warn $OUT/rows.txt
