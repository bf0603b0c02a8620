# The record of session 13's calls 1 and A on branch next/fenced-decode (93ae04b), where FENCE
# was a template flag; main has since made the fence the kernel's only form (REP < 8), so the
# flag, `ab.py --fenced-decode` and decode_attention.py's fence column are gone.
# Branch next/fenced-decode on a GPU for the first time: FENCE in the paged decode kernel (a
# __syncwarp after each batch of a lane's loads, so that ptxas issues them together; nvdisasm
# showed each of a lane's 16 key words loaded only after the products of the one before).
#   source .devkit/setup.sh && bash notes/device-jobs/fence_check.sh kernel    (~250 s)
#   source .devkit/setup.sh && bash notes/device-jobs/fence_check.sh ab        (~300 s)
# kernel: the fenced variants' GPU tests (against float64, NaN-poisoned output, every warp
#   count, one and three spans), then benchmarks/decode_attention.py (CUPTI, L2 flushed; the
#   "fence" column is the launcher's shape with FENCE) for one request and a batch of 16.
# ab: one request through the engine, fenced (ab.py --fenced-decode) against main's kernel.
# What decides: fenced faster at the launcher's shapes in the benchmark and ahead in every A/B
# round; then FENCE becomes the kernel's only form (the flag and the unfenced batches go).
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
case "$1" in
kernel)
  t0=$(date +%s)
  timeout 150 python3 -m pytest -q -p no:cacheprovider --tb=short tests/test_attention_kernels.py \
    -k "device and fence" > $OUT/tests.txt 2>&1
  echo "tests rc $? after $(( $(date +%s) - t0 )) s: $(grep -E '[0-9]+ (passed|failed|error)' $OUT/tests.txt | sed -n '$p')"
  timeout 200 python3 benchmarks/decode_attention.py --batches 1 16 --contexts 256 1024 4096 \
    --json $OUT/decode_attention.json > $OUT/decode_attention.txt 2>&1
  echo "decode_attention rc $? after $(( $(date +%s) - t0 )) s"; cut -c1-60 $OUT/decode_attention.txt
  ;;
ab)
  bash notes/device-jobs/ab_rounds.sh "python3 benchmarks/ab.py --fenced-decode" "vexel"
  ;;
*)
  echo "usage: fence_check.sh kernel|ab"; exit 2
  ;;
esac
