# Prepared in session 45 for session 46 (not run): q and k stacked into one product where v's
# format differs (3f11408), in the engine. A random Q4_K_M Llama-3-8B (16 of its 32 layers
# have a Q6_K attn_v: q/k/v there were three products, now two): one request of 128 + 256 and
# two of 512 + 128, main against the tree before 3f11408, alternated (new, old, new). Run from
# main's checkout with the old package in the untracked old_tree/ (`mkdir old_tree && git
# archive 3f11408^ vexel_core ':!vexel_core/assets' | tar -x -C old_tree`). One PTX cache an
# arm (MLX keys it by kernel name; the kernels are the same here, so this only keeps the arms
# apart). Carry [".devkit/wheels", ".devkit/setup.sh"] after `tree_slim.sh out`.
#   source .devkit/setup.sh && bash notes/device-jobs/s46_a.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
[ -d old_tree/vexel_core ] || { echo "old_tree/vexel_core is missing: see the header"; exit 2; }
arm() {  # name round requests prompt output
  path=$PWD; [ $1 = old ] && path=$PWD/old_tree
  PYTHONPATH=$path:$PYTHONPATH MLX_PTX_CACHE_DIR=/tmp/ptx-$1 timeout 120 python3 -c \
    'from vexel_core.cli import console_main; console_main()' bench --random llama3-8b \
    --dtype q4_k_m --kv-cache-memory 16GiB -n $3 --prompt-len $4 --output-len $5 \
    > $OUT/b$3-$1-$2.txt 2>&1
  echo "== $3 request(s), $1, round $2: rc $? after $(( $(date +%s) - t0 )) s:" \
    $(grep -E "generated tok/s|ITL|rror" $OUT/b$3-$1-$2.txt | sed 's/│//g' | tr -s ' ')
}
for n in 1 2; do
  p=128 o=256; [ $n = 2 ] && p=512 o=128
  arm new 1 $n $p $o; arm old 1 $n $p $o; arm new 2 $n $p $o
done
