# Session 13, call D (~70 s on a fresh machine): call C found that rounding x in each CTA costs
# ~1 us (the fenced packed product 11.8 -> 12.8 us); does requesting each warp's second row
# into L2 during the rounding (PIPE 2) win it back? Carry [".devkit/wheels", ".devkit/setup.sh"].
#   source .devkit/setup.sh && bash notes/device-jobs/s13_d.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
V="+scales fence,+scales fence x:round,+scales fence x:round pf,+scales x:round pf"
V="$V,file +scales x:round pf"
sed -i 's/timeout 150 ncu/timeout 200 ncu/' notes/device-jobs/s12_e.sh
VARIANTS="$V" bash notes/device-jobs/s12_e.sh
