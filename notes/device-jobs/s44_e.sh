# Session 44, call E: main after the merge of gemm_blocks' staging as one list of words, with 8
# k-warps and one stage everywhere and 3 rows as its start. llama.cpp builds at nice 19 while
# gemm_blocks' GPU tests run and Vexel serves 16 and 8 requests of 512 + 128 of a random Q4_K
# Llama-3-8B (as session 43's call B did); then llama-bench tg128 and llama-batched-bench -npl
# 8,16 on the same file, then Vexel's one request alone. Carry [".devkit/wheels",
# ".devkit/setup.sh", ".devkit/peers"] after `tree_slim.sh out --model`.
#   source .devkit/setup.sh && bash notes/device-jobs/s44_e.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/vx
t0=$(date +%s)
(timeout 400 nice -n 19 bash .devkit/peers/llamacpp.sh > $OUT/llamacpp-build.log 2>&1; echo "build rc $?" >> $OUT/llamacpp-build.log) &
timeout 150 python3 -m pytest -q -p no:cacheprovider --tb=short -rfE -m gpu -n 6 \
  tests/test_gemm_blocks.py > $OUT/tests.txt 2>&1
echo "== gemm_blocks tests rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/tests.txt)"
B="bench --random llama3-8b --dtype q4_k --kv-cache-memory 16GiB"
for n in 16 8; do
  timeout 150 vexel $B -n $n --prompt-len 512 --output-len 128 > $OUT/b$n.txt 2>&1
  echo "== $n requests: rc $? after $(( $(date +%s) - t0 )) s:" \
    $(grep -E "generated tok/s|ITL|TTFT|peak memory|rror" $OUT/b$n.txt | sed 's/│//g' | tr -s ' ')
done
wait
echo "== build done after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/llamacpp-build.log)"
M=/tmp/vx/random-llama3-8b-q4_k.gguf
L=/tmp/lc/llama.cpp/build/bin
timeout 60 $L/llama-bench -m $M -p 512 -n 128 -ngl 99 -fa 1 -r 3 > $OUT/llamacpp-bench.log 2>&1
echo "== llama-bench rc $?"; grep -E "^\|" $OUT/llamacpp-bench.log
timeout 90 $L/llama-batched-bench -m $M -c 16384 -b 2048 -ub 512 -npp 512 -ntg 128 -npl 8,16 \
  -ngl 99 -fa on > $OUT/llamacpp-batched.log 2>&1
echo "== llama-batched-bench rc $? after $(( $(date +%s) - t0 )) s"; grep -E "^\|" $OUT/llamacpp-batched.log
timeout 100 vexel $B -n 1 --prompt-len 128 --output-len 256 > $OUT/b1.txt 2>&1
echo "== one request: rc $? after $(( $(date +%s) - t0 )) s:" \
  $(grep -E "generated tok/s|ITL|rror" $OUT/b1.txt | sed 's/│//g' | tr -s ' ')
