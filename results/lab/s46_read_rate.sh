#!/usr/bin/env bash
# One direction (read only, write only) against the copy on this GPU, by the bytes kept in flight; --help says more.
set -u
case "${1:-}" in
-h | --help) cat <<'H'
usage: results/lab/s46_read_rate.sh [MB ...]        (GIT_REV=<commit>; sizes default 1024 67 34)

BatchNorm's --phases probes read or write one 16-byte vector a thread. On the H200 they run at 3.26 and 3.28 TB/s
against a copy of 4.47 (72-78% of it; the H100: 3.06 and 3.28 against 3.34), and BatchNorm training there stands at
90-99% of read-then-write where x fits L2. Is one direction capped there, or do the probes (and the kernels) keep too
few bytes in flight? results/lab/s46_read_rate.cu reads the same buffer with the probe's shape, with 2 and 4 loads a
thread in flight over a resident grid, and with bulk copies (cp.async.bulk into shared memory) of 32-192 KB in flight
an SM, read from shared memory or not; writes as the probe and grid-stride; the copy two ways. Sizes in MB of the
buffer read (1024: steady state; 67 and 34: x of fp32 and bf16 65536x256, L2 written over before each launch).
Prediction: if the bulk copies read at more than 1.1x the probe's rate, the single-direction cap is the probe's and
the kernels', not the GPU's, and a first pass fed by bulk copies is the next rung to try; if every variant stays
within 5% of the probe, one direction is what the GPU gives. ~1 minute. Writes $OUT/read_rate.txt and prints it.
H
exit 0 ;;
esac
for a in "$@"; do
    [[ "$a" =~ ^[0-9]+$ ]] || { echo "s46_read_rate: sizes are whole MB, not '$a' (see --help)" >&2; exit 2; }
done
. results/lab/lab.sh
lab_start s46_read_rate
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
"$NVCC" -O3 -std=c++17 -gencode arch=compute_90,code=sm_90 -o build/x/s46_read_rate results/lab/s46_read_rate.cu \
    > "$OUT/build.log" 2>&1 || { tail -n 20 "$OUT/build.log"; exit 1; }
el built
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1024 67 34)
timeout 180 build/x/s46_read_rate "${sizes[@]}" > "$OUT/read_rate.txt" 2>&1  # a wrong mbarrier wait would hang
rc=$?
el "ran: exit $rc"
cat "$OUT/read_rate.txt"
exit $rc
