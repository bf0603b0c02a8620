# Session 13, call C (~120 s on a fresh machine): the Q4_0 probe with x rounded by each CTA as
# a real kernel must (XSRC 4: cooperative rounding while each warp's first row's loads fly),
# packed and file layout, fenced or not, beside the call-A controls. Carry
# [".devkit/wheels", ".devkit/setup.sh"].
#   source .devkit/setup.sh && bash notes/device-jobs/s13_c.sh
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
V="loads,+scales,+scales fence,file +scales,+scales x:round,+scales fence x:round"
V="$V,file +scales x:round,file +scales fence x:round"
sed -i 's/timeout 150 ncu/timeout 300 ncu/' notes/device-jobs/s12_e.sh
VARIANTS="$V" bash notes/device-jobs/s12_e.sh
