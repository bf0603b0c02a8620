# Session 29, call G (main at ffb4eee plus benchmarks/l2_prefetch.py, new): does a
# latency-bound kernel that requests the next product's weight into L2 (sm_90's bulk
# prefetch) make that product faster? A stand-in for the paged decode spins 4-10 us with or
# without the prefetch, then the packed Q4_0 product runs: the output, q/k/v and gate/up
# shapes, CUPTI durations. Carry [".devkit/wheels", ".devkit/setup.sh"].
#   source .devkit/setup.sh && bash notes/device-jobs/s29_g.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
(cd benchmarks && timeout 200 python3 l2_prefetch.py 2>&1) | grep -v -i "warn" | tee $OUT/l2_prefetch.txt
echo "== rc ${PIPESTATUS[0]} after $(( $(date +%s) - t0 )) s"
