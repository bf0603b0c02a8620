# Planned for session 34 (written in session 33), main, a cold machine: carry
# [".devkit/wheels", ".devkit/setup.sh", ".devkit/extra/pytest_xdist-3.8.0-py3-none-any.whl",
# ".devkit/extra/execnet-2.1.2-py3-none-any.whl"] (the two wheels step 3 installs; the whole
# of .devkit/extra would pass the 64 MiB limit) with notes/bench moved out of the tree. Call
# s34_b.sh at once after it (the warm machine keeps /tmp/vexel-site, so that call carries
# .devkit/extra without the 37 MB of wheels).
#   source .devkit/setup.sh && bash notes/device-jobs/s34_a.sh
# 1. benchmarks/down_layout.py: the feed-forward kernel's down-phase loads alone, on the
#    engine's layout and regrouped by CTA (the lever for the down phase's 2.2 TB/s, if any).
# 2. main's one-request figure twice (`vexel bench`), beside which s34_c.sh's branch is read.
# 3. tests/test_quant_kernels.py, which s33_b/s33_b2 never finished (one worker a module: 550
#    of its 1,043 cases left after 560 s); --dist load spreads its cases over eight workers.
: "${OUT:?set OUT to the output folder}"
export VEXEL_CACHE=/tmp/vx
mkdir -p /tmp/vx
t0=$(date +%s)
(cd benchmarks && timeout 120 python3 down_layout.py --rounds 3 2>&1) | grep -v -i warn \
  | tee $OUT/down_layout.txt
echo "== down_layout rc ${PIPESTATUS[0]} after $(( $(date +%s) - t0 )) s"
bash notes/device-jobs/one_request.sh
echo "== bench after $(( $(date +%s) - t0 )) s"
python3 -c "import xdist" 2>/dev/null || python3 -m pip install -q --no-index --no-deps \
  --no-compile --target /tmp/vexel-site .devkit/extra/pytest_xdist-*.whl .devkit/extra/execnet-*.whl \
  2>/dev/null || echo "(no xdist: one process)"
N8=$(python3 -c "import xdist" 2>/dev/null && echo "-n 8 --dist load")
timeout 270 python3 -m pytest -q $N8 -p no:cacheprovider --tb=short -rfE --durations=8 \
  tests/test_quant_kernels.py > $OUT/quant_kernels.txt 2>&1
echo "== test_quant_kernels rc $? after $(( $(date +%s) - t0 )) s: $(tail -1 $OUT/quant_kernels.txt)"
grep -E "^(FAILED|ERROR) " $OUT/quant_kernels.txt | cut -c1-200 | head -20
