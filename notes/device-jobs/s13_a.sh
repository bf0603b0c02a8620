# Session 13, call A (~450 s): the Q4_0 probe's new variants with two controls (call 1 of this
# session ran all sixteen under a 150 s limit, which killed ncu before it wrote its CSV), then
# the fenced decode's A/B through the engine (its kernel half ran in call 1: fenced faster at
# all six launcher shapes). Carry [".devkit/wheels", ".devkit/setup.sh", "wt"] with wt/fd.
#   source .devkit/setup.sh && bash notes/device-jobs/s13_a.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p $OUT/probe $OUT/fence
V="loads,+scales,+dot fence,+scales fence,+scales fence x:smem,+scales fence x:regs"
V="$V,+scales pipe fence,file loads,file +scales,file +scales fence,file +scales fence x:smem"
V="$V,file +scales pipe fence"
sed -i 's/timeout 150 ncu/timeout 210 ncu/' notes/device-jobs/s12_e.sh
OUT=$OUT/probe VARIANTS="$V" bash notes/device-jobs/s12_e.sh
(cd $OUT/probe && tar -cJf ../probe.tar.xz . ) && rm -rf $OUT/probe
source notes/device-jobs/branch_tree.sh
tree fd
(cd /tmp/fd && OUT=$OUT/fence bash notes/device-jobs/fence_check.sh ab)
