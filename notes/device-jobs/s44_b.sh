# Session 44, call B: one request of a random Q4_K Llama-3-8B alone (session 43 measured 355.0
# tok/s while llama.cpp compiled beside it), then a CUPTI timeline of its step (which launches
# hold the ~18 us a layer over Q4_0's); then s43_e.sh (the pacing's GPU test and its peaks,
# gemm_blocks of branch next/blocks-issue beside main's). Before the call: blocks_issue/ as
# s43_e.sh says. Carry [".devkit/wheels", ".devkit/setup.sh"] after `tree_slim.sh out`.
#   source .devkit/setup.sh && bash notes/device-jobs/s44_b.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
B="bench --random llama3-8b --dtype q4_k --kv-cache-memory 16GiB -n 1 --prompt-len 128"
timeout 150 vexel $B --output-len 256 > $OUT/k1.txt 2>&1
echo "== Q4_K one request: rc $? after $(( $(date +%s) - t0 )) s:" \
  $(grep -E "generated tok/s|ITL|build|rror" $OUT/k1.txt | sed 's/│//g' | tr -s ' ')
timeout 120 python3 benchmarks/gpu_timeline.py --bin-ms 20 --top 16 --where vx_ --last 140 \
  -- $B --output-len 64 > $OUT/k1-timeline.txt 2>&1
echo "== timeline rc $? after $(( $(date +%s) - t0 )) s"
bash notes/device-jobs/s43_e.sh
