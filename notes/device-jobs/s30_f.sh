# Session 30, call F, on branch next/fused-attention after its fix: the launch's two counts
# (`after_product._ready`) were 8 bytes, served by MLX's small pool of managed memory, so every
# producer's atomic add and the attention's polls crossed the bus (call E: 70% of the warp
# samples a drain after EXIT, 153 us a launch). Now `gpu.TOKEN_SHAPE`. Its GPU tests, its GPU
# time a layer against the two launches, the engine alternated, the compiled decode's tests.
# Carry [".devkit/wheels", ".devkit/setup.sh"].
#   source .devkit/setup.sh && bash notes/device-jobs/s30_f.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
timeout 120 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_after_product.py \
  > $OUT/gpu_tests.txt 2>&1
echo "== GPU tests rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/gpu_tests.txt)"
grep -E "^(FAILED|ERROR)|Error|assert" $OUT/gpu_tests.txt | head -20
(cd benchmarks && timeout 150 python3 after_product.py --contexts 128 256 384 1024 --passes 5 \
  2>&1) | grep -v -i warn | tee $OUT/after_product.txt
echo "== after_product.py rc ${PIPESTATUS[0]} after $(( $(date +%s) - t0 )) s"
timeout 200 python3 benchmarks/alternate.py --rounds 8 --tokens 256 --separate-qkv-product \
  > $OUT/alternate.txt 2>&1
echo "== alternate rc $? after $(( $(date +%s) - t0 )) s"; tail -3 $OUT/alternate.txt
[ $(( $(date +%s) - t0 )) -gt 400 ] && exit 0
timeout $(( 560 - $(date +%s) + t0 )) python3 -m pytest -q -p no:cacheprovider \
  tests/test_compiled_decode.py > $OUT/compiled_decode.txt 2>&1
echo "== compiled decode rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/compiled_decode.txt)"
grep -E "^(FAILED|ERROR)" $OUT/compiled_decode.txt | head -10
