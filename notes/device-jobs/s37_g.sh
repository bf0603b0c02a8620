# Session 37, call G (prepared, not run): where the next product's phase goes, with
# notes/patches/ff-next-qkv.patch applied (git apply; the patch adds ff_phases.py --next):
# ff_phases.py --next, the kernel with then=q/k/v against its cuts (nothing after the norm, no
# wait, no rounding, no rows, no prefetch), beside the kernel without then and that kernel
# followed by the q/k/v launch.
# Carry [".devkit/wheels", ".devkit/setup.sh"] after `tree_slim.sh out`.
#   source .devkit/setup.sh && bash notes/device-jobs/s37_g.sh
: "${OUT:?set OUT to the output folder}"
export PYTHONUNBUFFERED=1
t0=$(date +%s)
(cd benchmarks && timeout 150 python3 ff_phases.py --next --rounds 2 > $OUT/ff_phases_next.txt 2>&1)
echo "ff_phases rc $? after $(( $(date +%s) - t0 )) s"; grep -v -i warn $OUT/ff_phases_next.txt
