# Session 32, call D, main + the argmax kernel and embedding rows dequantized into the model's
# dtype (uncommitted): their GPU tests, the compiled decode's, then where the step's small
# kernels went (gpu_timeline.py: vx_argmax in place of MLX's arg_reduce, 15.8 -> ~7.2 us;
# vx_dequant in bfloat16 and no copy_v<float, bf16> a step), then `vexel bench` beside mlx-lm.
# Carry [".devkit/wheels", ".devkit/setup.sh"].
#   source .devkit/setup.sh && bash notes/device-jobs/s32_d.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/vx
t0=$(date +%s)
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/test_sampling_kernels.py \
  tests/test_quant_formats.py tests/test_sampling.py \
  "tests/test_quant_kernels.py::test_packed_weight_through_the_selected_path" \
  "tests/test_quant_kernels.py::test_kernel_only_weight_builds_no_affine_copy" \
  > $OUT/gpu_tests.txt 2>&1
echo "== GPU tests rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/gpu_tests.txt)"
grep -E "^(FAILED|ERROR)" $OUT/gpu_tests.txt | head -10
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/test_compiled_decode.py \
  > $OUT/compiled_tests.txt 2>&1
echo "== compiled decode tests rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/compiled_tests.txt)"
grep -E "^(FAILED|ERROR)" $OUT/compiled_tests.txt | head -10
B="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 --kv-cache-memory 16GiB"
timeout 150 python3 benchmarks/gpu_timeline.py --bin-ms 50 --top 40 -- $B > $OUT/timeline-bs1.txt 2>&1
echo "== timeline rc $? after $(( $(date +%s) - t0 )) s"
grep -E "^ *[0-9.]+ +[0-9]+ " $OUT/timeline-bs1.txt | grep -E "argmax|arg_reduce|dequant|copy_v" | cut -c1-150
[ $(( $(date +%s) - t0 )) -gt 420 ] && exit 0
timeout 170 vexel $B --compare mlx-lm --json-out $OUT/bs1.json --trace-steps $OUT/steps-bs1.jsonl \
  > $OUT/bs1.txt 2>&1
echo "bs1 (rc $?, $(( $(date +%s) - t0 )) s):"; grep -E "tok/s|ITL|TTFT|rror" $OUT/bs1.txt | sed 's/│//g' | tr -s ' '
[ -s $OUT/steps-bs1.jsonl ] && python3 benchmarks/step_summary.py $OUT/steps-bs1.jsonl
gzip $OUT/steps-bs1.jsonl
