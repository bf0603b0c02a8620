# Session 47, call 2 (follows call 1 at once, on the same machine). B: the engine on main's
# routing against the routing before XROWS (INT8_ROWS emptied through importlib, never through
# `import vexel_core.quant.kernels.library as l`, which binds the package's `library` function),
# two requests of Q4_0 and Q8_0, four of Q4_K_M, and one Q4_0 request; then gemv_rows.py at the
# two small shapes (4096x4096: o; 6144x4096: q/k/v) for INT8_ROWS by output rows too, Q6_K's
# 2 rows of 6144x4096 (27.0 us in session 46) among them. D: the whole-once patch (measured, then deleted; gpu-kernels.md, sessions 47-48)
# (the WHOLE formats' quants read once for every row) against main's header, Q4_0, 1-4 rows,
# each arm a copy of the package in arms/<name>/ (untracked, excluded from git, carried) with
# its own MLX_PTX_CACHE_DIR (MLX keys its PTX cache by kernel name, not by header).
# Carry ["arms", ".devkit/wheels", ".devkit/setup.sh"] after `tree_slim.sh out`.
#   source .devkit/setup.sh && bash notes/device-jobs/s47_2.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
arm() {  # routing dtype requests
  pre=""; [ $1 = old ] && pre="import importlib; l = importlib.import_module('vexel_core.quant.kernels.library'); l.INT8_ROWS = {}; "
  timeout 100 python3 -c "${pre}from vexel_core.cli import console_main; console_main()" bench \
    --random llama3-8b --dtype $2 --kv-cache-memory 16GiB -n $3 --prompt-len 512 \
    --output-len 128 > $OUT/b$3-$2-$1.txt 2>&1
  echo "== $3 $2 requests, $1 routing: rc $? after $(( $(date +%s) - t0 )) s:" \
    $(grep -E "generated tok/s|ITL|rror" $OUT/b$3-$2-$1.txt | sed 's/│//g' | tr -s ' ')
}
arm new q4_0 1
arm new q4_0 2; arm old q4_0 2; arm new q4_0 2; arm old q4_0 2
arm new q8_0 2; arm old q8_0 2
arm new q4_k_m 4; arm old q4_k_m 4
(cd benchmarks && timeout 100 python3 gemv_rows.py --shapes 4096x4096,6144x4096) \
  > $OUT/rows-small.txt 2>&1
echo "== gemv_rows small rc $? after $(( $(date +%s) - t0 )) s"; grep -v Warn $OUT/rows-small.txt
for a in main whole main whole; do
  echo "### arm $a: $(PYTHONPATH=$PWD/arms/$a:$PYTHONPATH python3 -c 'import vexel_core; print(vexel_core.__file__)')" \
    >> $OUT/rows-whole.txt
  (cd benchmarks && MLX_PTX_CACHE_DIR=/tmp/ptx-$a PYTHONPATH=$PWD/../arms/$a:$PYTHONPATH \
    timeout 60 python3 gemv_rows.py --formats Q4_0 --shapes 6144x4096,28672x4096,4096x14336) \
    >> $OUT/rows-whole.txt 2>&1
  echo "== whole-once arm $a rc $? after $(( $(date +%s) - t0 )) s"
done
grep -v Warn $OUT/rows-whole.txt
