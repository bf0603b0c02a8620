: "${OUT:?}"
export VEXEL_CACHE=/tmp/vx
timeout 200 python3 benchmarks/add_norm.py --variants --launches 64 2>&1 | grep -v warn | tee $OUT/variants.txt
