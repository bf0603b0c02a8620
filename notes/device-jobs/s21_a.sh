# Planned for session 21 (written in session 20), call A: the AddNorm epilogue with its
# grid-sync fencing. Run with branch next/add-norm checked out (or notes/patches/add-norm.patch
# applied on c1084e7): benchmarks/add_norm.py is the branch's.
#   source .devkit/setup.sh && bash notes/device-jobs/s21_a.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
timeout 150 python3 benchmarks/add_norm.py --launches 64 > $OUT/add_norm.txt 2>&1
echo "== add_norm.py rc $? after $(( $(date +%s) - t0 )) s"; grep -E "^(==|  )" $OUT/add_norm.txt | cut -c1-150
W="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 128 --cache-dir /tmp/vx"
timeout 100 python3 benchmarks/gpu_timeline.py --top 12 --where gemv_int8_norm -- $W \
  > $OUT/timeline.txt 2>&1
echo "== timeline rc $? after $(( $(date +%s) - t0 )) s"; grep -E "^ +[0-9.]+ +[0-9]+ +[0-9.]+" $OUT/timeline.txt | cut -c1-150
grep -A4 -E "^'gemv_int8_norm'" $OUT/timeline.txt | grep -v "last 96" | cut -c1-150
bash notes/device-jobs/arms_rounds.sh 2 "vexel" "python3 benchmarks/ab.py --separate-add-norm"
