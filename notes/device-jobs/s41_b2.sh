# Session 41, call 2 (s41_b.sh cut to the device time left after call A: no Nsight Compute):
# the 8-request peers for the README's row. llama.cpp builds at nice 19 while `vexel bench
# --compare mlx-lm` runs 8 requests of 512 + 128 (Vexel first, then mlx-lm's BatchGenerator in
# the same process; its batch did not finish within 150 s in session 40); then
# llama-batched-bench at 1, 8 and 16 sequences on the same random Q4_0 file.
# Carry [".devkit/wheels", ".devkit/setup.sh", ".devkit/peers"] after `tree_slim.sh out --model`.
#   source .devkit/setup.sh && bash notes/device-jobs/s41_b2.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/vx
t0=$(date +%s)
(timeout 450 nice -n 19 bash .devkit/peers/llamacpp.sh > $OUT/llamacpp-build.log 2>&1; echo "build rc $?" >> $OUT/llamacpp-build.log) &
timeout 400 vexel bench --random llama3-8b --dtype q4_0 --prompt-len 512 --output-len 128 --kv-cache-memory 16GiB \
  -n 8 --compare mlx-lm --json-out $OUT/b8.json > $OUT/b8.txt 2>&1
echo "== 8 requests, vexel and mlx-lm: rc $? after $(( $(date +%s) - t0 )) s"
grep -E "engine|generated tok/s|TTFT|ITL|rror" $OUT/b8.txt | sed 's/│//g' | tr -s ' '
M=/tmp/vx/random-llama3-8b-q4_0.gguf
ls -la /tmp/vx
wait
echo "== build done after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/llamacpp-build.log)"
L=/tmp/lc/llama.cpp/build/bin
timeout 120 $L/llama-batched-bench -m $M -c 16384 -b 2048 -ub 512 -npp 512 -ntg 128 -npl 1,8,16 \
  -ngl 99 -fa on > $OUT/llamacpp-batched.log 2>&1
echo "== llama-batched-bench rc $? after $(( $(date +%s) - t0 )) s"; grep -E "^\|" $OUT/llamacpp-batched.log
