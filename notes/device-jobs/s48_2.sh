# Session 48, call 2: call 1's tests ran out of time at 73% (no failure among them: its -k took
# ~1,500 tests). Here only the products whose default routing INT8_ROWS by weight size moves:
# gguf_matmul at 1-65 rows of packed Q4_0 and of the file's blocks, the feed-forward choices,
# and a loaded weight through the selected path.
#   source .devkit/setup.sh && bash notes/device-jobs/s48_2.sh
: "${OUT:?set OUT to the output folder}"
t0=$(date +%s)
timeout 160 python3 -m pytest -v -p no:cacheprovider -rfE -n 8 -o faulthandler_timeout=100 \
  tests/test_gemm_packed.py tests/test_gemm_blocks.py tests/test_feed_forward.py \
  tests/test_quant_kernels.py -k "gguf_matmul or selected_path or packed_weight or feed_forward" \
  > $OUT/tests.txt 2>&1
echo "== tests rc $? after $(( $(date +%s) - t0 )) s"; grep -E "FAILED|ERROR|passed|failed" $OUT/tests.txt | tail -6 | cut -c1-200
