# Session 11, call B: (1) the packed Q4_0 kernel's round two (branch next/packed-q4_0 with its
# loads pipelined across passes, "+p": int8_sweep.PACKED), its GPU tests and Nsight Compute
# at both shapes (packed_check.sh); (2) branch next/gated-gate-up: the gated mode's GPU tests
# with the time they need (call A's 140 s ran out at about half of them, none failing), then
# gated_check.sh's A/B round one (one Q4_0 request fused, then unfused).
#   source .devkit/setup.sh && bash notes/device-jobs/s11_b.sh      (carry .devkit's wheels, wt)
# $OUT: packed.tgz, gated.tgz.
: "${OUT:?set OUT to the output folder}"
source notes/device-jobs/branch_tree.sh  # tree NAME, main_again
export VEXEL_CACHE=/tmp/vx

tree packed
mkdir -p /tmp/packed-out
(cd /tmp/packed && OUT=/tmp/packed-out bash notes/device-jobs/packed_check.sh)
tar -czf $OUT/packed.tgz -C /tmp/packed-out .

tree gated
cd /tmp/gated
mkdir -p /tmp/gated-out /tmp/gated
timeout 250 python3 -m pytest -q -p no:cacheprovider --tb=short -rP tests/test_quant_kernels.py \
  -k "gated and not emulated" > /tmp/gated-out/tests.txt 2>&1
rc=$?
echo "gated tests (rc $rc): $(grep -E '[0-9]+ (passed|failed|error)' /tmp/gated-out/tests.txt | sed -n '$p')"
echo "  comparisons with the unfused path: $(grep -c 'of outputs equal' /tmp/gated-out/tests.txt)," \
  "lowest $(grep -oE '[0-9.]+ of outputs equal' /tmp/gated-out/tests.txt | sort -n | sed -n 1p)"
tar -czf $OUT/gated.tgz -C /tmp/gated-out .
B="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --kv-cache-memory 16GiB"
for name in fused unfused; do
  case $name in fused) cmd="vexel" ;; unfused) cmd="python3 benchmarks/ab.py --unfused-glu" ;; esac
  timeout 60 $cmd $B --output-len 256 --trace-steps /tmp/gated-out/steps-$name.jsonl \
    > /tmp/gated-out/bench-$name.txt 2>&1
  echo "$name (rc $?):" $(grep -E "generated tok/s|ITL p50" /tmp/gated-out/bench-$name.txt | sed 's/│//g' | tr -s ' ')
  [ -s /tmp/gated-out/steps-$name.jsonl ] && python3 benchmarks/step_summary.py /tmp/gated-out/steps-$name.jsonl | sed -n '$p'
  tar -czf $OUT/gated.tgz -C /tmp/gated-out .
done
main_again; cd "$root"
