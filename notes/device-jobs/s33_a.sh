# Planned for session 33 (written in session 32), branch next/argmax: the sampler's argmax as
# our kernel (vexel_core/sampling/kernels). Session 32 measured it 5.9-7.2 us alone (MLX's
# 15.8) but 25.9 us in the engine, its output then padded to 32 bytes; its GPU test then
# disagreed with mx.argmax on every row with a NaN. Now its output is [rows] (MLX's shape:
# MLX's small pool) and NaN ranks above every number (numpy's rule).
# Carry [".devkit/wheels", ".devkit/setup.sh"].
#   git checkout next/argmax && source .devkit/setup.sh && bash notes/device-jobs/s33_a.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/vx
t0=$(date +%s)
timeout 90 python3 -m pytest -q --tb=short -p no:cacheprovider tests/test_sampling_kernels.py \
  tests/test_sampling.py > $OUT/argmax_tests.txt 2>&1
echo "== argmax tests rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/argmax_tests.txt)"
grep -E "^(FAILED|E  )" $OUT/argmax_tests.txt | head -12
for rb in "" --read-back; do
  (cd benchmarks && timeout 40 python3 argmax.py --rows 1 8 --runs 32 $rb 2>&1) | grep -v -i warn \
    | tee -a $OUT/argmax.txt
done
B="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 --kv-cache-memory 16GiB"
timeout 150 python3 benchmarks/gpu_timeline.py --bin-ms 50 --top 40 --where vx_argmax --last 16 \
  -- $B > $OUT/timeline-bs1.txt 2>&1
echo "== timeline rc $? after $(( $(date +%s) - t0 )) s"
grep -E "^ *[0-9.]+ +[0-9]+ " $OUT/timeline-bs1.txt | grep -E "argmax|arg_reduce" | cut -c1-150
grep -A20 "vx_argmax" $OUT/timeline-bs1.txt | tail -20
