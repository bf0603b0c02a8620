# Session 11, call D (fresh machine), main alone: (1) the GPU suites not run since session 9
# (test_quant_kernels' other products, attention backends, KV pool) while llama.cpp builds on
# cores 4-15; (2) one Q4_0 request (Llama-3-8B shape, 128 + 256 tokens) in Vexel and mlx-lm on
# cores 0-3, so the build does not take their host time; (3) llama.cpp on the same file.
#   source .devkit/setup.sh && bash notes/device-jobs/s11_d.sh  (carry .devkit's wheels,
#   setup.sh and peers: all of .devkit with the tree passes the 64 MiB a call may carry)
# $OUT: gpu-tests.txt, bs1.txt, bs1.json, steps-bs1.jsonl, llamacpp-q4_0.log. ~540 s.
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/lc /tmp/vx
start=$(date +%s)
(taskset -c 4-15 bash .devkit/peers/llamacpp.sh > /tmp/lc/build.log 2>&1; echo $? > /tmp/lc/built) &
suite() {  # suite SECONDS FILE [pytest args]
  local limit=$1 file=$2; shift 2
  timeout $limit python3 -m pytest -q -p no:cacheprovider --tb=short tests/$file "$@" > /tmp/t.txt 2>&1
  echo "$file $* (rc $?): $(tail -1 /tmp/t.txt)"; cat /tmp/t.txt >> $OUT/gpu-tests.txt
}
suite 130 test_quant_kernels.py -k "not int8"
suite 60 test_attention_backends.py
suite 40 test_kv_pool.py
echo "tests done after $(( $(date +%s) - start )) s"
B="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 --kv-cache-memory 16GiB"
timeout 200 taskset -c 0-3 vexel $B --compare mlx-lm --json-out $OUT/bs1.json \
  --trace-steps $OUT/steps-bs1.jsonl > $OUT/bs1.txt 2>&1
echo "bs1 (rc $?) after $(( $(date +%s) - start )) s:"
grep -E "tok/s|ITL|rror" $OUT/bs1.txt | sed 's/│//g' | tr -s ' '
[ -s $OUT/steps-bs1.jsonl ] && python3 benchmarks/step_summary.py $OUT/steps-bs1.jsonl
while [ ! -f /tmp/lc/built ] && [ $(( $(date +%s) - start )) -lt 470 ]; do sleep 5; done
echo "llama.cpp build: $(cat /tmp/lc/built 2>/dev/null || echo unfinished) after $(( $(date +%s) - start )) s"
timeout 100 bash .devkit/peers/llamacpp.sh /tmp/vx/random-llama3-8b-q4_0.gguf > $OUT/llamacpp-q4_0.log 2>&1
grep -E "tg128|pp512|^\| +512 \| +128 \| +1 " $OUT/llamacpp-q4_0.log
