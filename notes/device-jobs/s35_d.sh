# Session 35, call D: llama.cpp's build (~5.5 min, kept in /tmp/lc for call E, s31_c.sh, at
# once on the same warm machine) and the random Llama-3-8B Q4_0 file beside it.
# Carry [".devkit/wheels", ".devkit/setup.sh", ".devkit/peers"] after `tree_slim.sh out --model`.
#   source .devkit/setup.sh && bash notes/device-jobs/s35_d.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/vx
t0=$(date +%s)
(timeout 560 bash .devkit/peers/llamacpp.sh > $OUT/llamacpp-build.log 2>&1; echo "build rc $?" >> $OUT/llamacpp-build.log) &
M=/tmp/vx/random-llama3-8b-q4_0.gguf
[ -s $M ] || python3 .devkit/peers/make_random_gguf_fast.py $M --qtype Q4_0 > /dev/null 2>&1
echo "== model after $(( $(date +%s) - t0 )) s: $(ls -la $M)"
wait
echo "== build done after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/llamacpp-build.log)"; ls /tmp/lc/llama.cpp/build/bin/ 2>&1 | head
