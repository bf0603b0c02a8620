# Prepared in session 41 for session 42 (not run): what session 41 merged after its device time
# ran out, and the K-quant batch. GPU tests of gemm_blocks (its 8 k-warp, one-stage default past
# 4096 columns, `test_gguf_matmul_on_the_gpu` at 5120 columns) and of the float kernel's GPU path
# (now through kernels.cuh's staged_loop, shared with gemm_blocks); gemm_blocks' kernel table at
# 3 rows too (BLOCKS_ROWS starts there on an estimate); then a random Q4_K Llama-3-8B (`--dtype
# q4_k`, new) at 8 requests with gemm_blocks and without (ab.py --no-gemm-blocks).
# Carry [".devkit/wheels", ".devkit/setup.sh"] after `tree_slim.sh out`.
#   source .devkit/setup.sh && bash notes/device-jobs/s42_a.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/vx
t0=$(date +%s)
M=/tmp/vx/random-llama3-8b-q4_k.gguf
python3 -c "from pathlib import Path; from vexel_core.bench.random_model import write_random_model as w; w(Path('$M'), 'llama3-8b', 'q4_k')" \
  > $OUT/model.log 2>&1 &
timeout 200 python3 -m pytest -q -p no:cacheprovider --tb=short -rfE -m gpu tests/test_gemm_blocks.py \
  tests/test_quant_kernels.py -k "gemm_blocks or gguf_kernel" > $OUT/tests.txt 2>&1
echo "== tests rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/tests.txt)"
grep -E "^(FAILED|ERROR) " $OUT/tests.txt | cut -c1-240 | head -8
(cd benchmarks && timeout 100 python3 -u gemm_blocks.py --rows 2,3,8,16 \
  --shapes 28672x4096,4096x14336) > $OUT/kern.txt 2>&1
echo "== gemm_blocks.py rc $? after $(( $(date +%s) - t0 )) s"; grep -v -i warn $OUT/kern.txt | tail -25
wait
echo "== model after $(( $(date +%s) - t0 )) s: $(ls -la $M 2>&1)"; tail -3 $OUT/model.log
B="bench --random llama3-8b --dtype q4_k --prompt-len 512 --output-len 128 --kv-cache-memory 16GiB -n 8"
timeout 75 vexel $B > $OUT/blocks-b8.txt 2>&1
echo "== gemm_blocks, 8 requests: rc $? after $(( $(date +%s) - t0 )) s:" \
  $(grep -E "generated tok/s|ITL|peak memory|rror" $OUT/blocks-b8.txt | sed 's/│//g' | tr -s ' ')
timeout 75 python3 benchmarks/ab.py --no-gemm-blocks $B > $OUT/float-b8.txt 2>&1
echo "== float kernel, 8 requests: rc $? after $(( $(date +%s) - t0 )) s:" \
  $(grep -E "generated tok/s|ITL|peak memory|rror" $OUT/float-b8.txt | sed 's/│//g' | tr -s ' ')
