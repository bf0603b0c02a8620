# The one-request figure of the README's row, twice (`vexel bench`, llama3-8b Q4_0, 256 tokens
# after 128), appended to $OUT/bench.txt: the first run writes the random model (4.5 GB) into
# VEXEL_CACHE, hence its longer limit. Called by s34_a.sh (main) and s34_c.sh (a branch), so
# that both read the same figure in one session.
: "${OUT:?set OUT to the output folder}"
B="bench --random llama3-8b --dtype q4_0 -n 1 --prompt-len 128 --output-len 256 --kv-cache-memory 16GiB"
for limit in 240 120; do
  timeout $limit python3 -m vexel_core.cli $B 2>&1 | grep -E "generated tok/s|ITL" | tee -a $OUT/bench.txt
done
