# Session 19, calls A and B on one warm machine: the paged decode with a KV head's query heads
# split over CTAs in small grids (`kernels.head_parts`, HEADS in paged_decode_kernel.cuh).
# Carry [".devkit/wheels", ".devkit/setup.sh", ".devkit/peers"], notes/bench moved out of the
# tree (the carry's 64 MiB).
#   source .devkit/setup.sh && bash notes/device-jobs/s19_a.sh 1   (fresh machine, ~550 s)
#   source .devkit/setup.sh && bash notes/device-jobs/s19_a.sh 2   (at once after, ~450 s)
# 1: llama.cpp built in the background (kept in /tmp/lc for call 2); the attention kernels'
#    GPU tests (every warp count, one and three spans, a KV head's query heads in one CTA or
#    one a CTA); then benchmarks/decode_attention.py's grid (GPU time only, CUPTI: the build's
#    host load does not enter it).
# 2: alternated rounds of one Q4_0 request, head parts (main) against whole KV heads
#    (`ab.py --whole-kv-heads`); then the three engines on one file.
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/lc /tmp/vx
t0=$(date +%s)
case "$1" in
1)
  (timeout 430 bash .devkit/peers/llamacpp.sh > /tmp/lc/build-run.log 2>&1
   echo "llama.cpp build rc $? after $(( $(date +%s) - t0 )) s") &
  timeout 280 python3 -m pytest -q -p no:cacheprovider --tb=short -m gpu \
    tests/test_attention_kernels.py > $OUT/tests.txt 2>&1
  echo "tests rc $? after $(( $(date +%s) - t0 )) s: $(grep -E '[0-9]+ (passed|failed|error)' $OUT/tests.txt | sed -n '$p')"
  grep -E "^(FAILED|ERROR)" $OUT/tests.txt | cut -c1-200 | sed -n 1,12p
  timeout 170 python3 benchmarks/decode_attention.py --batches 1 4 16 \
    --contexts 128 256 512 1024 4096 --json $OUT/decode.json > $OUT/decode.txt 2>&1
  echo "decode_attention rc $? after $(( $(date +%s) - t0 )) s"
  cut -c1-60 $OUT/decode.txt
  wait
  ;;
2)
  bash notes/device-jobs/arms_rounds.sh 3 "vexel" "python3 benchmarks/ab.py --whole-kv-heads"
  B="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 --kv-cache-memory 16GiB"
  timeout 150 vexel $B --compare mlx-lm --json-out $OUT/bs1.json --trace-steps $OUT/steps-bs1.jsonl \
    > $OUT/bs1.txt 2>&1
  echo "bs1 (rc $?, $(( $(date +%s) - t0 )) s):"; grep -E "tok/s|ITL|rror" $OUT/bs1.txt | sed 's/│//g' | tr -s ' '
  [ -s $OUT/steps-bs1.jsonl ] && python3 benchmarks/step_summary.py $OUT/steps-bs1.jsonl | sed -n '$p'
  timeout 100 bash .devkit/peers/llamacpp.sh /tmp/vx/random-llama3-8b-q4_0.gguf > $OUT/llamacpp-q4_0.log 2>&1
  echo "llama.cpp rc $? after $(( $(date +%s) - t0 )) s"; grep -E "tg128|pp512" $OUT/llamacpp-q4_0.log
  ;;
esac
