# Prepared in session 42 for session 43 (not run): branch next/paced-prefill. Steps of more
# than `paced_step_tokens` tokens (512 for Llama-3-8B at 8,192 tokens a step) are evaluated a
# layer at a time as they are built (`mx.async_eval` of each layer, a wait for the one
# before). Session 42 measured the engine's memory bound alone: 16 Q4_0 requests of 512 + 128
# peaked at 36.08 GiB under a 24.5 GiB limit (67.20 without it), 2,311.7-2,420.6 tok/s, TTFT
# 223-245 ms. Expected here: a peak near 24.5 + one layer, the same tok/s, a TTFT a few
# percent longer at most. GPU tests first (test_device_memory.py: the peak of a wide 8-layer
# model's 8,192-token step within the bound + one layer; built whole it was 1.81 GB against
# 1.03). Then the branch and main alternated twice, main's files from mainsrc/ (below).
# Before the call: `git checkout next/paced-prefill` and copy main's engine/core.py,
# model/decoder.py, model/architecture.py and memory.py into the untracked mainsrc/ (with
# `git show main:PATH > mainsrc/NAME`). Carry [".devkit/wheels", ".devkit/setup.sh"] after
# `tree_slim.sh out`.
#   source .devkit/setup.sh && bash notes/device-jobs/s43_a.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/vx
t0=$(date +%s)
timeout 120 python3 -m pytest -q -p no:cacheprovider --tb=short -rfE -m gpu \
  tests/test_device_memory.py > $OUT/tests.txt 2>&1
echo "== tests rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/tests.txt)"
grep -E "^(FAILED|ERROR|E ) " $OUT/tests.txt | cut -c1-240 | head -8
mkdir -p /tmp/paced && for f in engine/core.py model/decoder.py model/architecture.py memory.py; do
  cp vexel_core/$f /tmp/paced/$(basename $f); done
arm() {  # name: the files in place, 16 requests
  timeout 100 vexel bench --random llama3-8b --dtype q4_0 --prompt-len 512 --output-len 128 \
    --kv-cache-memory 16GiB -n 16 --log-level info > $OUT/$1.txt 2>&1
  echo "== $1: rc $? after $(( $(date +%s) - t0 )) s:" \
    $(grep -E "generated tok/s|TTFT|ITL|peak memory|rror" $OUT/$1.txt | sed 's/│//g' | tr -s ' ')
}
use() {  # folder with core.py decoder.py architecture.py memory.py
  cp $1/core.py vexel_core/engine/core.py; cp $1/decoder.py vexel_core/model/decoder.py
  cp $1/architecture.py vexel_core/model/architecture.py; cp $1/memory.py vexel_core/memory.py
}
for round in 1 2; do
  use /tmp/paced; arm paced-$round
  use mainsrc; arm main-$round
done
