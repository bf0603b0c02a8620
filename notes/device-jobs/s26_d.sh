# Session 26, call D: the paged decode with writing as a runtime value (commit "Paged decode:
# writing is a runtime value"): its GPU tests, the engine's compiled decode on the GPU, and
# what the kernels cost NVRTC now (benchmarks/compile_cost.py; call C measured the template
# version). Carry [".devkit/wheels", ".devkit/setup.sh"].
#   source .devkit/setup.sh && bash notes/device-jobs/s26_d.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
timeout 250 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_attention_kernels.py \
  tests/test_kv_pool.py > $OUT/gpu_attention.txt 2>&1
echo "== attention GPU tests rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/gpu_attention.txt)"
grep -E "^(FAILED|ERROR)" $OUT/gpu_attention.txt | head -20
timeout 170 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_compiled_decode.py \
  > $OUT/gpu_compiled_decode.txt 2>&1
echo "== compiled decode GPU tests rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/gpu_compiled_decode.txt)"
grep -E "^(FAILED|ERROR)" $OUT/gpu_compiled_decode.txt | head -20
timeout 100 python3 benchmarks/compile_cost.py > $OUT/compile_cost.txt 2>&1
cat $OUT/compile_cost.txt
echo "== done after $(( $(date +%s) - t0 )) s"
