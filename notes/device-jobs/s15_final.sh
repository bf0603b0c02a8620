# Session 15's last call (~330 s on a fresh machine): branch next/q4_0-words (Q4_0's
# shared-memory reads in gemv_int8, as next/q4k-aligned did for Q4_K) under its own check,
# then one Q4_0 request on main (session 15's merges: Q4_K's reads, short kernel bodies) in
# Vexel and mlx-lm, twice. llama.cpp is not built: its 380 s build does not
# fit the device time left; its tg128 has been 331-348 tok/s in every session that built it.
# Make wt/q40w from the branch (next_session.sh says how), carry
# [".devkit/wheels", ".devkit/setup.sh", "wt"], then
#   source .devkit/setup.sh && bash notes/device-jobs/s15_final.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/vx
t0=$(date +%s)
timeout 200 bash wt/q40w/notes/device-jobs/q4_0_words_check.sh
echo "== check done after $(( $(date +%s) - t0 )) s"
source notes/device-jobs/branch_tree.sh && main_again
B="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 --kv-cache-memory 16GiB"
for run in 1 2; do  # each: Vexel, then mlx-lm in the same process
  timeout 150 vexel $B --compare mlx-lm --json-out $OUT/bs1-$run.json --trace-steps $OUT/steps-bs1-$run.jsonl \
    > $OUT/bs1-$run.txt 2>&1
  echo "bs1 run $run (rc $?, $(( $(date +%s) - t0 )) s):"
  grep -E "tok/s|ITL|rror" $OUT/bs1-$run.txt | sed 's/│//g' | tr -s ' '
  [ -s $OUT/steps-bs1-$run.jsonl ] && python3 benchmarks/step_summary.py $OUT/steps-bs1-$run.jsonl
done
(cd $OUT && tar -czf bs1.tar.gz bs1-* steps-bs1-* && rm -f bs1-*.json bs1-*.txt steps-bs1-*)
