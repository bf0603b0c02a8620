# Planned for session 24 (written in session 23), call C, with branch next/merge-in-kernel
# checked out (stacked on next/rope-in-attention): the split paged decode merging its spans
# inside the kernel on CUDA (no merge launch a layer; contexts over 512 tokens split). First
# its GPU tests (the read and writing kernels with three spans at every warp count, the
# counts back at zero), then one request at a 4,000-token context, the branch against the
# code it stacks on, alternated. Before the call, here:
#   mkdir -p .ab && git archive next/rope-in-attention vexel_core | tar -x -C .ab
# (an untracked folder travels with the tree; PYTHONPATH=.ab puts that copy first), then
#   source .devkit/setup.sh && bash notes/device-jobs/s24_c.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
[ -d .ab/vexel_core ] || { echo "no .ab/vexel_core: see the comment above"; exit 2; }
timeout 200 python3 -m pytest -q -p no:cacheprovider -rfE --durations=5 -m gpu \
  -k "device-3" tests/test_attention_kernels.py > $OUT/tests.txt 2>&1
echo "== tests rc $? after $(( $(date +%s) - t0 )) s"; tail -4 $OUT/tests.txt | cut -c1-200
W="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 4000 --output-len 128 --kv-cache-memory 16GiB"
for r in 1 2 3; do
  for arm in merged separate; do
    if [ $arm = merged ]; then cmd=vexel; else cmd="env PYTHONPATH=.ab:$PYTHONPATH vexel"; fi
    timeout 80 $cmd $W --trace-steps /tmp/steps-$arm-$r.jsonl > /tmp/$arm-$r.txt 2>&1
    echo "$arm $r (rc $?): $(grep -E "generated tok/s|ITL p50" /tmp/$arm-$r.txt | sed 's/│//g' | tr -s ' ')"
    [ -s /tmp/steps-$arm-$r.jsonl ] && python3 benchmarks/step_summary.py /tmp/steps-$arm-$r.jsonl
  done
done 2>&1 | tee $OUT/bench.txt
