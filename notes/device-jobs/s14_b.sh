# Session 14, the last call (~300 s on a fresh machine; it ran 289 s): the rotary embedding
# inside the paged decode kernel (ROPE), on a GPU for the first time, run from the tree of branch
# next/rope-in-decode (main has neither the tests nor `ab.py --separate-rope`; the record of what
# the call ran). Carry [".devkit/wheels", ".devkit/setup.sh"].
#   source .devkit/setup.sh && bash notes/device-jobs/s14_b.sh
# 1. Its GPU tests: the kernel against float64 (interleaved and halves, partial dims, frequency
#    factors, position scale, attention factor; one and three spans), and every block kind's
#    runs with the backend rotating against the model rotating (compiled and eager decode).
# 2. A short alternated A/B of one Q4_0 Llama-3-8B request (128 + 256 tokens): the rotation in
#    the kernel against `ab.py --separate-rope` (MLX's rope in the model, one launch a layer):
#    A B, B A, no warm-ups (each first run compiles its kernels, so the runs' tok/s include
#    NVRTC; the median step of each run's trace does not). What decides merging: the tests
#    pass, and the kernel's arm has the shorter median step in both rounds (expected ~0.1-0.2
#    ms a token: one MLX launch a layer fewer).
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
# (the block kinds' test for LLaMA and Phi-2, both rotary modes: each compiles twelve variants)
timeout 150 python3 -m pytest -q -p no:cacheprovider --tb=short tests/test_attention_kernels.py \
  tests/test_compiled_decode.py -k "(rotates and device) or (rotates_gives and (llama or phi2))" \
  > $OUT/tests.txt 2>&1
echo "tests rc $? after $(( $(date +%s) - t0 )) s: $(grep -E '[0-9]+ (passed|failed|error)' $OUT/tests.txt | sed -n '$p')"
grep -E "^(FAILED|ERROR)" $OUT/tests.txt | cut -c1-200 | sed -n 1,10p
mkdir -p /tmp/ab
W="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --kv-cache-memory 16GiB"
run() {  # NAME COMMAND LIMIT OUTPUT_LEN
  echo "== $1: $2" >> $OUT/bench.txt
  timeout $3 $2 $W --output-len $4 --trace-steps /tmp/ab/steps-$1.jsonl > /tmp/ab/$1.txt 2>&1
  local rc=$?
  cat /tmp/ab/$1.txt >> $OUT/bench.txt
  echo "$1 (rc $rc, $(( $(date +%s) - t0 )) s):" \
    $(grep -E "generated tok/s|ITL p50" /tmp/ab/$1.txt | sed 's/│//g' | tr -s ' ')
  [ -s /tmp/ab/steps-$1.jsonl ] && echo "  $(python3 benchmarks/step_summary.py /tmp/ab/steps-$1.jsonl | sed -n '$p')"
}
A="vexel" B="python3 benchmarks/ab.py --separate-rope"
for name in A-1 B-1 B-2 A-2; do
  case $name in A-*) cmd=$A ;; B-*) cmd=$B ;; esac
  run $name "$cmd" 75 256
done
tar -czf $OUT/steps.tar.gz -C /tmp/ab $(cd /tmp/ab && ls steps-*.jsonl)
echo "all done after $(( $(date +%s) - t0 )) s"
