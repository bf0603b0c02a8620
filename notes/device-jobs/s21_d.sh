# Session 21, call D (branch next/add-norm with the 16-byte eps): the arms again, the variants,
# and the engine's alternated rounds against main's separate launches.
#   source .devkit/setup.sh && bash notes/device-jobs/s21_d.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
timeout 120 python3 benchmarks/add_norm.py --launches 64 2>&1 | grep -v -i warn > $OUT/add_norm.txt
echo "== add_norm.py rc $? after $(( $(date +%s) - t0 )) s"; grep -E "^(==|  )" $OUT/add_norm.txt | cut -c1-150
timeout 100 python3 benchmarks/add_norm.py --variants --launches 64 2>&1 | grep -v -i warn > $OUT/variants.txt
echo "== variants rc $? after $(( $(date +%s) - t0 )) s"; grep -E "^  " $OUT/variants.txt
bash notes/device-jobs/arms_rounds.sh 2 "vexel" "python3 benchmarks/ab.py --separate-add-norm"
