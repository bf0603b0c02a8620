# Planned for session 30 (written in session 29), call D, on branch next/fused-attention right
# after s30_c.sh if its tests pass: GPU time a layer of the fused launch against the two it
# replaces (benchmarks/after_product.py: twelve layers a pass, L2 flushed, CUPTI), at one span
# and at several (where the separate decode takes 16 warps and the fused one 8); then one
# request beside mlx-lm (vexel bench, the same workload as session 28's call A).
# Carry [".devkit/wheels", ".devkit/setup.sh"].
#   source .devkit/setup.sh && bash notes/device-jobs/s30_d.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/vx
t0=$(date +%s)
(cd benchmarks && timeout 200 python3 after_product.py --contexts 128 256 384 1024 --passes 5 \
  2>&1) | grep -v -i warn | tee $OUT/after_product.txt
echo "== after_product.py rc ${PIPESTATUS[0]} after $(( $(date +%s) - t0 )) s"
B="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 --kv-cache-memory 16GiB"
timeout 260 vexel $B --compare mlx-lm --json-out $OUT/bs1.json --trace-steps $OUT/steps-bs1.jsonl \
  > $OUT/bs1.txt 2>&1
echo "bs1 (rc $?, $(( $(date +%s) - t0 )) s):"; grep -E "tok/s|ITL|TTFT|rror" $OUT/bs1.txt | sed 's/│//g' | tr -s ' '
[ -s $OUT/steps-bs1.jsonl ] && python3 benchmarks/step_summary.py $OUT/steps-bs1.jsonl
gzip $OUT/steps-bs1.jsonl
