# Planned for session 30 (written in session 29), call C, on branch next/fused-attention
# (prepared in session 29: the q/k/v product inside the paged decode's launch for one
# request, kernels/after_product.py; CPU emulation equal to the two launches bit for bit;
# local nvcc compiles it at 130 registers a thread for 8 warps; never run on a GPU). Check out
# the branch first (the device runs the working tree). Its GPU tests (equal to the two
# launches bit for bit, one and two spans), the attention kernel's (its AFTER-free path is
# main's SASS), the compiled decode's (the engine takes the launch on CUDA), then the engine
# alternated against the two launches (ab.py --separate-qkv-product) at 128 + 256 tokens and
# at a 1,024-token prompt (spans of 8 warps where main has 16).
# Carry [".devkit/wheels", ".devkit/setup.sh"].
#   source .devkit/setup.sh && bash notes/device-jobs/s30_c.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_after_product.py \
  tests/test_attention_kernels.py > $OUT/gpu_tests.txt 2>&1
echo "== GPU tests rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/gpu_tests.txt)"
grep -E "^(FAILED|ERROR)|Error|assert" $OUT/gpu_tests.txt | head -20
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/test_compiled_decode.py \
  > $OUT/compiled_decode.txt 2>&1
echo "== compiled decode rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/compiled_decode.txt)"
grep -E "^(FAILED|ERROR)" $OUT/compiled_decode.txt | head -10
[ $(( $(date +%s) - t0 )) -gt 380 ] && exit 0
timeout 200 python3 benchmarks/alternate.py --rounds 8 --tokens 256 --separate-qkv-product \
  > $OUT/alternate.txt 2>&1
echo "== alternate rc $? after $(( $(date +%s) - t0 )) s"; tail -10 $OUT/alternate.txt
