# Session 46, call 2: gemv_int8 on 2-4 activation rows (XROWS). The engine first (two Q4_K_M
# requests and four Q4_0 requests of 512 + 128, new routing against INT8_ROWS = 1 set in the
# process: the paths before), then the kernel table (benchmarks/gemv_rows.py), then the GPU
# tests of the new rows and of the routing. Carry [".devkit/wheels", ".devkit/setup.sh"] after
# `tree_slim.sh out`.
#   source .devkit/setup.sh && bash notes/device-jobs/s46_2.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
arm() {  # name dtype requests
  # As it ran, the old arm's `import vexel_core.quant.kernels.library as l` bound the package's
  # `library` function (it shadows the submodule), so l.INT8_ROWS = 1 changed nothing: both arms
  # were the new routing (so was s45_g.sh's). Fixed here with importlib; call 3 reran the old arm.
  pre=""; [ $1 = old ] && pre="import importlib; l = importlib.import_module('vexel_core.quant.kernels.library'); l.INT8_ROWS = {}; "
  timeout 100 python3 -c "${pre}from vexel_core.cli import console_main; console_main()" bench \
    --random llama3-8b --dtype $2 --kv-cache-memory 16GiB -n $3 --prompt-len 512 \
    --output-len 128 > $OUT/b$3-$2-$1.txt 2>&1
  echo "== $3 $2 requests, $1 routing: rc $? after $(( $(date +%s) - t0 )) s:" \
    $(grep -E "generated tok/s|ITL|rror" $OUT/b$3-$2-$1.txt | sed 's/│//g' | tr -s ' ')
}
arm new q4_k_m 2; arm old q4_k_m 2; arm new q4_0 4; arm old q4_0 4
(cd benchmarks && timeout 150 python3 gemv_rows.py --shapes 6144x4096,28672x4096,4096x14336) \
  > $OUT/rows.txt 2>&1
echo "== gemv_rows rc $? after $(( $(date +%s) - t0 )) s"; cat $OUT/rows.txt | grep -v Warn
bash notes/device-jobs/gpu_tests.sh \
  "110 tests/test_quant_kernels.py -m gpu -n 6 -k several_rows" \
  "60 tests/test_quant_kernels.py -m gpu -n 6 -k product_equals" \
  "50 tests/test_gemm_blocks.py tests/test_gemm_packed.py -m gpu -n 6 -k gguf_matmul"
