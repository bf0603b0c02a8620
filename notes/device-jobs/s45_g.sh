# Session 45, call G: gemm_blocks at two rows of Q2_K, Q4_K, Q5_K and Q6_K (BLOCKS_TWO_ROWS,
# from call F's table) in the engine: two requests of 512 + 128 of a random Q4_K Llama-3-8B,
# new routing, old routing (BLOCKS_TWO_ROWS emptied in the process), then gemm_blocks' GPU
# routing tests, then new again. Carry [".devkit/wheels", ".devkit/setup.sh"] after
# `tree_slim.sh out`.
#   source .devkit/setup.sh && bash notes/device-jobs/s45_g.sh
# (Found in session 46: `import vexel_core.quant.kernels.library as l` binds the package's
# `library` function, which shadows the submodule, so the old arm below ran the new routing:
# both arms were the same code. Use importlib.import_module for such arms.)
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
arm() {  # name round
  pre=""; [ $1 = old ] && pre="import vexel_core.quant.kernels.library as l; l.BLOCKS_TWO_ROWS = frozenset(); "
  timeout 100 python3 -c "${pre}from vexel_core.cli import console_main; console_main()" bench \
    --random llama3-8b --dtype q4_k --kv-cache-memory 16GiB -n 2 --prompt-len 512 \
    --output-len 128 > $OUT/b2-$1-$2.txt 2>&1
  echo "== two requests, $1 routing, round $2: rc $? after $(( $(date +%s) - t0 )) s:" \
    $(grep -E "generated tok/s|ITL|rror" $OUT/b2-$1-$2.txt | sed 's/│//g' | tr -s ' ')
}
arm new 1; arm old 1
timeout 60 python3 -m pytest -q -p no:cacheprovider --tb=short -rfE -m gpu -n 6 \
  tests/test_gemm_blocks.py -k "gguf_matmul or selection" > $OUT/tests.txt 2>&1
echo "== routing tests rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/tests.txt)"
arm new 2
