# Not run: session 30 measured the real fused launch instead, and removed fused_boundary.*
# (restore with `git show 94b0bddf085c:benchmarks/fused_boundary.py` and its .cu, .cuh).
# Planned for session 30 (written in session 29), call B, main: is a phase boundary inside one
# launch cheaper than the launch it saves? benchmarks/fused_boundary.py (new in session 29,
# compiled locally with nvcc, never run): the q/k/v product and a stand-in for the paged
# decode in one launch (the product's CTAs first, counting themselves done; the stand-in's
# last, waiting after their prologue) against two launches. Three stand-ins: the decode's
# prologue as 2, 6 and 10 dependent DRAM loads, 5 us of work after it. If "fused" is not
# clearly ahead of "separate, 8/2/4/528" (the same product tiling), the fused attention launch
# (gpu-kernels.md, "Next") is not worth building. Last, the real paged decode of one request at
# 128 tokens (attention_ncu.py --time), to set beside the stand-in's own time.
# Carry [".devkit/wheels", ".devkit/setup.sh"].
#   source .devkit/setup.sh && bash notes/device-jobs/s30_b.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
t0=$(date +%s)
for p in 6 2 10; do
  (cd benchmarks && timeout 120 python3 fused_boundary.py --prologue $p --spin-ns 5000 2>&1) \
    | grep -v -i "warn" | tee -a $OUT/fused_boundary.txt
  echo "== prologue $p: after $(( $(date +%s) - t0 )) s"
done
timeout 60 python3 benchmarks/attention_ncu.py --contexts 128 256 --time 5 2>&1 | grep -E "context|rror" \
  | tee -a $OUT/fused_boundary.txt
echo "== after $(( $(date +%s) - t0 )) s"
