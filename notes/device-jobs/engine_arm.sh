# Source this in a device job for `arm ROUTING DTYPE REQUESTS`: one `vexel bench` run of a random
# Llama-3-8B (512 + 128 tokens a request) into $OUT/b<REQUESTS>-<DTYPE>-<ROUTING>.txt, and a
# line of its results. ROUTING "old" runs $OLD_ROUTING (Python) first, in the same process:
# set module constants through importlib (`importlib.import_module("vexel_core.quant.kernels.
# library")`), never `import ... as l`, which binds the package's `library` function.
# Needs $OUT and $t0 (the job's start, for the elapsed seconds).
arm() {
  local pre=""
  [ "$1" = old ] && pre="$OLD_ROUTING; "
  timeout 100 python3 -c "${pre}from vexel_core.cli import console_main; console_main()" bench \
    --random llama3-8b --dtype "$2" --kv-cache-memory 16GiB -n "$3" --prompt-len 512 \
    --output-len 128 > "$OUT/b$3-$2-$1.txt" 2>&1
  echo "== $3 $2 requests, $1 routing: rc $? after $(( $(date +%s) - t0 )) s:" \
    $(grep -E "generated tok/s|ITL|rror" "$OUT/b$3-$2-$1.txt" | sed 's/│//g' | tr -s ' ')
}
