# Session 35, call H, branch next/ff-tiled (notes/patches/ff-tiled.patch) with main's
# feed_forward.cuh beside it as benchmarks/ff_rows.cuh: ff_phases.py's cuts of both kernels in
# one process (does the tiled kernel's down loop wait on its atomics?). Carry
# [".devkit/wheels", ".devkit/setup.sh"] after `tree_slim.sh out`.
#   source .devkit/setup.sh && bash notes/device-jobs/s35_h.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/vx
t0=$(date +%s)
(cd benchmarks && timeout 240 python3 ff_phases.py --rounds 3 --rows-kernel ff_rows.cuh \
  > $OUT/ff_phases.txt 2>&1)
echo "== ff_phases.py rc $? after $(( $(date +%s) - t0 )) s"
grep -v -i warn $OUT/ff_phases.txt | tail -40
