# s45_a.sh's engine part: one request of a random Q5_K and a Q5_K_M Llama-3-8B with the
# branch and with main (main_tree/, see s45_a.sh), one PTX cache an arm. Run alone in session
# 45 after s45_a.sh's first run lost these arms to PYTHONPATH replacing the devkit's site.
: "${OUT:?}"; export VEXEL_CACHE=/tmp/vx; t0=$(date +%s)
for dtype in q5_k q5_k_m; do
  for arm in branch main; do
    path=$PWD; [ $arm = main ] && path=$PWD/main_tree
    PYTHONPATH=$path:$PYTHONPATH MLX_PTX_CACHE_DIR=/tmp/ptx-$arm timeout 120 python3 -c \
      'from vexel_core.cli import console_main; console_main()' bench \
      --random llama3-8b --dtype $dtype --kv-cache-memory 16GiB -n 1 --prompt-len 128 \
      --output-len 256 > $OUT/b1-$dtype-$arm.txt 2>&1
    echo "== $dtype one request, $arm: rc $? after $(( $(date +%s) - t0 )) s:" \
      $(grep -E "generated tok/s|ITL|rror" $OUT/b1-$dtype-$arm.txt | sed 's/│//g' | tr -s ' ')
  done
done
