# Session 38, call C: the paged decode's value rows fenced, held raw (branch next/pd-values,
# on main after call B's table change). Its GPU tests (the words path of `RowPart` runs only
# on the GPU: the emulation loads element by element), its GPU time against main's kernel
# (attention_ncu.py --time, separate processes), the step against main's kernel in one process
# (alternate.py --old-attention), then one request beside mlx-lm.
# .ab_old/attention/cuda: `git show main:...` of vexel_core/attention/kernels/cuda (untracked).
# Carry [".devkit/wheels", ".devkit/setup.sh"].
#   source .devkit/setup.sh && bash notes/device-jobs/s38_c.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_attention_kernels.py \
  > $OUT/gpu_attention.txt 2>&1
echo "== attention GPU tests rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/gpu_attention.txt)"
grep -E "^(FAILED|ERROR)" $OUT/gpu_attention.txt | head -10
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/test_compiled_decode.py \
  > $OUT/compiled_decode.txt 2>&1
echo "== compiled decode rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/compiled_decode.txt)"
K=vexel_core/attention/kernels/cuda
mkdir -p /tmp/new && cp $K/* /tmp/new/
for round in 1 2; do
  for arm in new old; do
    rm -f $K/*; if [ $arm = new ]; then cp /tmp/new/* $K/; else cp .ab_old/attention/cuda/* $K/; fi
    echo "-- round $round, $arm" >> $OUT/ab.txt
    timeout 60 python3 benchmarks/attention_ncu.py --contexts 128 256 384 --time 5 \
      >> $OUT/ab.txt 2>&1
  done
done
rm -f $K/*; cp /tmp/new/* $K/
grep -E "^--|context" $OUT/ab.txt
echo "== after $(( $(date +%s) - t0 )) s"
timeout 150 python3 benchmarks/alternate.py --rounds 8 --tokens 256 --old-attention \
  > $OUT/alternate.txt 2>&1
echo "== alternate rc $? after $(( $(date +%s) - t0 )) s"
grep -E "round|median|greedy" $OUT/alternate.txt
left=$(( 570 - ($(date +%s) - t0) ))
[ $left -lt 90 ] && { echo "no time left for the request beside mlx-lm"; exit 0; }
B="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 --kv-cache-memory 16GiB"
timeout $left vexel $B --compare mlx-lm --json-out $OUT/bs1.json --trace-steps $OUT/steps-bs1.jsonl \
  > $OUT/bs1.txt 2>&1
echo "bs1 (rc $?, $(( $(date +%s) - t0 )) s):"; grep -E "tok/s|ITL|TTFT|rror" $OUT/bs1.txt | sed 's/│//g' | tr -s ' '
[ -s $OUT/steps-bs1.jsonl ] && python3 benchmarks/step_summary.py $OUT/steps-bs1.jsonl
gzip $OUT/steps-bs1.jsonl
