# Session 44, call C: gemm_blocks' chunk staged as one list of 16-byte words (branch
# next/blocks-issue, cherry-picked onto main; call B timed it at 28672x4096: Q4_K 8 rows 58.3
# against 78.0 us) on the GPU: its GPU tests, the pacing's GPU test (its contrast now against
# the paced run's own overshoot) twice, then 16 requests of 512 + 128 of a random Q4_K
# Llama-3-8B with the new staging, the old, the new (one PTX cache each: MLX keys it by kernel
# name, not by the headers). Before the call: main's old header in the untracked blocks_old/
# (`git show <old>:vexel_core/quant/kernels/cuda/gemm_blocks.cuh > blocks_old/gemm_blocks.cuh`).
# Carry [".devkit/wheels", ".devkit/setup.sh"] after `tree_slim.sh out`.
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
timeout 150 python3 -m pytest -q -p no:cacheprovider --tb=short -rfE -m gpu -n 6 \
  tests/test_gemm_blocks.py > $OUT/tests.txt 2>&1
echo "== gemm_blocks tests rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/tests.txt)"
for i in 1 2; do
  timeout 90 python3 -m pytest -q -p no:cacheprovider --tb=short -rfE -m gpu \
    tests/test_device_memory.py -k large_prompt >> $OUT/tests.txt 2>&1
  echo "== pacing test $i rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/tests.txt)"
done
cp vexel_core/quant/kernels/cuda/gemm_blocks.cuh /tmp/new_gemm_blocks.cuh
B="bench --random llama3-8b --dtype q4_k --kv-cache-memory 16GiB -n 16 --prompt-len 512 --output-len 128"
arm() {  # name round
  cp /tmp/$1_gemm_blocks.cuh vexel_core/quant/kernels/cuda/gemm_blocks.cuh 2>/dev/null \
    || cp blocks_old/gemm_blocks.cuh vexel_core/quant/kernels/cuda/gemm_blocks.cuh
  MLX_PTX_CACHE_DIR=/tmp/ptx-$1 timeout 150 vexel $B > $OUT/b16-$1-$2.txt 2>&1
  echo "== 16 requests, $1 staging, round $2: rc $? after $(( $(date +%s) - t0 )) s:" \
    $(grep -E "generated tok/s|ITL|TTFT|rror" $OUT/b16-$1-$2.txt | sed 's/│//g' | tr -s ' ')
}
arm new 1; arm old 1; arm new 2
cp /tmp/new_gemm_blocks.cuh vexel_core/quant/kernels/cuda/gemm_blocks.cuh
