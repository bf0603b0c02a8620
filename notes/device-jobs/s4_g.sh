# Session 4, call G: one q4_0 request, the current tree and then call D's backends.py, same machine.
export VEXEL_CACHE=/tmp/vx
R="timeout 40 vexel bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256"
$R 2>&1 | grep -E "tok/s|ITL"
# .devkit/alt/backends.py: call D's vexel_core/attention/backends.py (git show c263f6f:...)
cp .devkit/alt/backends.py vexel_core/attention/backends.py
$R 2>&1 | grep -E "tok/s|ITL"
