# Session 32, call C, main + the argmax kernel (vexel_core/sampling/kernels, uncommitted
# probe): MLX's argmax against ours on logits rows (benchmarks/argmax.py, CUPTI), then the
# decode's small kernels (gpu_timeline.py --top 40: everything a step launches besides the
# four big ones).
# Carry [".devkit/wheels", ".devkit/setup.sh"].
#   source .devkit/setup.sh && bash notes/device-jobs/s32_c.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/vx
t0=$(date +%s)
(cd benchmarks && timeout 120 python3 argmax.py --rows 1 8 --runs 64 2>&1) | grep -v -i warn \
  | tee $OUT/argmax.txt
echo "== argmax rc ${PIPESTATUS[0]} after $(( $(date +%s) - t0 )) s"
B="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 --kv-cache-memory 16GiB"
timeout 200 python3 benchmarks/gpu_timeline.py --bin-ms 50 --top 40 -- $B > $OUT/timeline-bs1.txt 2>&1
echo "== timeline rc $? after $(( $(date +%s) - t0 )) s"
grep -E "^ *[0-9.]+ +[0-9]+ " $OUT/timeline-bs1.txt | cut -c1-150 | sed -n 17,40p
