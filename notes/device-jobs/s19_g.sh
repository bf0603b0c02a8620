# Session 19, call G: which paged decode launches are the slow ones (call F: 4,320 launches,
# median 14.1 us, mean 18.1, max 383): the last 96 in order (three decode steps of 32 layers),
# and the same for the token table's gather and the rope, the other readers of arrays the
# host writes every step.
#   source .devkit/setup.sh && bash notes/device-jobs/s19_g.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
W="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 128 --cache-dir /tmp/vx"
timeout 110 python3 benchmarks/gpu_timeline.py --top 3 --last 96 --where paged_decode \
  --where rope_single --where 4_2_4_4096_f_0_0 -- $W > $OUT/timeline.txt 2>&1
echo "== timeline rc $? after $(( $(date +%s) - t0 )) s"; grep -E "grid|launches" $OUT/timeline.txt | cut -c1-700
