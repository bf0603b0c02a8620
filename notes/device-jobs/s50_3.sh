# Session 50, call 3: three engines on today's main, one Q4_0 request at [k]: llama.cpp built
# (s35_d.sh), then s31_c.sh on the same machine. Carry [".devkit/wheels", ".devkit/setup.sh",
# ".devkit/peers"] after `tree_slim.sh out --model`.
: "${OUT:?set OUT to the output folder}"
bash notes/device-jobs/s35_d.sh && bash notes/device-jobs/s31_c.sh
