# Session 52, call E: the three engines on main, one Q4_0 request (as s50_3.sh: llama.cpp built
# by s35_d.sh, then s31_c.sh, on one machine). Carry [".devkit/wheels", ".devkit/setup.sh",
# ".devkit/peers"] after `tree_slim.sh out --model`.
: "${OUT:?set OUT to the output folder}"
bash notes/device-jobs/s35_d.sh && bash notes/device-jobs/s31_c.sh
