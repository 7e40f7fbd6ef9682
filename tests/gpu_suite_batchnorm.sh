# BatchNorm's part of the GPU suite (sourced by tests/gpu_suite.sh, which defines check_all, sanitize, planted,
# pass, fail, $QUICK and $LOG). Odd shapes in the three layouts, training and inference; N*H*W = 1 included.
# C in {1, 3, 33, 1000} x N in {1, 2, 7, 1031} for [N, C] in every dtype; for images, H*W in {1, 49, 3136} over a
# spread of (N, C) (not the full product: the suite stays near a minute and a half on an H100). Kernel 0 (cuDNN)
# runs in every check_all; at the end, each of its candidates alone, the standard shapes and its N*H*W = 1 rule.
# Quick mode: [N, C] at three shapes a dtype, fewer images, every dispatcher path, one memcheck pass a layout.
BN=batchnorm_forward

# SUITE_STAGE=alone (gpu_suite.sh, after every part has ended): the checks that compare measured times with each
# other, with the GPU to themselves (the parts' processes would share it); the rest of this file runs in the parts.
if [ "${SUITE_STAGE:-}" = alone ]; then
# --phases: the read-only and write-only probes beside the copy, and a kernel against read then write. A probe that
# moves half the copy's bytes must take less time than the copy and more than a third of it (a read kernel whose
# loads were optimized away would take almost nothing). Their sum, read then write, may take more time than the copy
# or less (the H200's copy overlaps its reads and writes and runs at 1.4x their sum's rate; on an H100 the copy's
# rate was 0.95-1.05x the sum's): only the printed share is checked against the printed times.
out=$(./$BN 9 --phases -N 65536 -C 256 --block-size 256 --repeats 20 2>&1); rc=$?
{ log_head "$BN 9 --phases -N 65536 -C 256 (exit $rc)"; echo "$out"; } >> "$LOG"
if [ $rc -eq 0 ] && python3 - "$out" <<'PY'; then
import re, sys
out = sys.argv[1]
copy_gbps, copy_mb = map(float, re.search(r"^speed of light: device copy ([0-9.]+) GB/s \(measured now, ([0-9.]+) MB",
                                          out, re.M).groups())
m = re.search(r"^phases: read-only ([0-9.]+) us .*write-only ([0-9.]+) us .*"
              r"read then write ([0-9.]+) us, ([0-9.]+)% of the copy's rate", out, re.M)
rd, wr, both, pct = map(float, m.groups())
copy_us = copy_mb / copy_gbps * 1e3  # MB / (GB/s) = ms; in us
assert copy_us / 3 < rd < copy_us and copy_us / 3 < wr < copy_us, (rd, wr, copy_us)
assert abs(both - (rd + wr)) < 0.02 and abs(pct - 100 * copy_us / both) < 0.5, (both, rd, wr, pct, copy_us)
b = re.search(r"^phases: best ([0-9.]+) us against read then write ([0-9.]+) us .*: ([0-9.]+)% of that bound", out, re.M)
assert b and abs(float(b.group(2)) - both) < 0.02 and 0 < float(b.group(3)) < 130, b and b.groups()
PY
    pass "$BN 9 --phases: read-only and write-only probes between a third of the copy's time and all of it, the kernel against their sum"
else
    fail "$BN 9 --phases (exit $rc): $(echo "$out" | grep -E '^phases|error' | head -n 3 | tr '\n' ' ')"
fi
return 0
fi

# [N, C]
if [ "$QUICK" = 1 ]; then
    for dt in fp32 fp16 bf16; do
        for shape in "-N 7 -C 1000" "-N 1 -C 33" "-N 1031 -C 3"; do check_all $BN --dtype $dt $shape; done
    done
else
    for c in 1 3 33 1000; do
        for n in 1 2 7 1031; do check_all $BN --dtype fp32 -N $n -C $c; done
    done
    for dt in fp16 bf16; do
        for c in 1 3 33 1000; do
            for n in 1 2 7 1031; do check_all $BN --dtype $dt -N $n -C $c; done
        done
    done
fi
# block sizes that are not powers of two (3, 13 and 5 warps: uneven trees over the row groups), other momentum/eps
check_all $BN --block-size 96 -N 1031 -C 33
check_all $BN --block-size 416 --dtype bf16 --layout nhwc -N 7 -C 1000 --height 7 --width 7
check_all $BN --block-size 160 --dtype fp16 --layout nchw -N 7 -C 33 --height 7 --width 7
check_all $BN --momentum 0.3 --eps 1e-3 --dtype fp32 -N 7 -C 1000

# images: -N, -C, --height, --width (M = N*H*W elements a channel)
IMG_FP32=("-N 1 -C 33 --height 1 --width 1"      # M = 1
          "-N 2 -C 3 --height 7 --width 7"        # H*W = 49 (odd: scalar packs)
          "-N 7 -C 1000 --height 1 --width 1"     # H*W = 1
          "-N 1 -C 1 --height 56 --width 56"      # H*W = 3136, one channel
          "-N 7 -C 33 --height 7 --width 7"
          "-N 2 -C 1000 --height 7 --width 7"
          "-N 1031 -C 3 --height 1 --width 1"
          "-N 2 -C 33 --height 56 --width 56")
IMG_16=("-N 1 -C 3 --height 1 --width 1"
        "-N 7 -C 1000 --height 7 --width 7"
        "-N 2 -C 33 --height 56 --width 56"
        "-N 1031 -C 1 --height 7 --width 7")
[ "$QUICK" = 1 ] && { IMG_FP32=("${IMG_16[@]}"); IMG_16=("-N 1 -C 3 --height 1 --width 1" "-N 2 -C 33 --height 56 --width 56"); }
for layout in nchw nhwc; do
    for shape in "${IMG_FP32[@]}"; do check_all $BN --layout $layout --dtype fp32 $shape; done
    for dt in fp16 bf16; do
        for shape in "${IMG_16[@]}"; do check_all $BN --layout $layout --dtype $dt $shape; done
    done
done

# inference (kernel 12 and the dispatcher, which runs it; 1-11 and 13 say skipped)
INF=("-N 1 -C 33" "-N 1031 -C 1000")
[ "$QUICK" = 1 ] && INF=("-N 7 -C 33")
for dt in fp32 fp16 bf16; do
    for shape in "${INF[@]}"; do
        check_all $BN --inference --dtype $dt $shape
        check_all $BN --inference --dtype $dt --layout nchw $shape --height 7 --width 7
        check_all $BN --inference --dtype $dt --layout nhwc $shape --height 7 --width 7
    done
done

# compute-sanitizer on every kernel, small shapes.
# Quick mode: one memcheck pass of our kernels (not cuDNN's), at [N, C] (kernels 1-5, 7, 9-11, 13 and 14; N*H*W >= 16
# for kernel 3), NCHW (kernels 6 and 8 and the dispatcher's NCHW path) and inference at odd shapes in NHWC and NCHW
# (kernels 12 and 14)
if [ "$QUICK" = 1 ]; then
    sanitize memcheck $BN --dtype fp32 -N 17 -C 1000
    sanitize memcheck $BN --dtype fp16 --layout nchw -N 3 -C 5 --height 7 --width 8
    sanitize memcheck $BN --dtype bf16 --inference --layout nhwc -N 3 -C 40 --height 7 --width 5
    sanitize memcheck $BN --dtype fp16 --inference --layout nchw -N 3 -C 5 --height 7 --width 9
else
    for tool in memcheck racecheck synccheck initcheck; do
        for shape in "--dtype fp32 -N 7 -C 1000" "--dtype bf16 --layout nhwc -N 2 -C 64 --height 7 --width 7" \
                     "--dtype fp16 --layout nchw -N 3 -C 5 --height 7 --width 8" "--dtype bf16 --inference -N 5 -C 33" \
                     "--dtype fp32 -N 33 -C 64 --block-size 96" \
                     "--dtype fp16 --inference --layout nchw -N 3 -C 5 --height 7 --width 9"; do
            sanitize $tool $BN $shape
        done
    done
fi

# planted bugs live in kernel 5 (split_rows); small N*H*W so that the factor M/(M-1) shows
planted $BN 5 -N 7 -C 33
planted $BN 5 --dtype bf16 --layout nhwc -N 2 -C 1000 --height 2 --width 1

# kernels 10, 11 and 13 where a block keeps only the front of its slice (the small shapes above keep all of it):
# validated on every element, the path's numbers say so (kept < rows each), and under racecheck and memcheck once
keep_part() {  # keep_part K ARGS...: `K --check ARGS` is OK and keeps fewer rows than a block's slice
    local k=$1 out rc rows kept
    shift
    out=$(./$BN $k --check "$@" 2>&1); rc=$?
    { log_head "$BN $k --check $* (exit $rc)"; echo "$out"; } >> "$LOG"
    rows=$(echo "$out" | grep -m1 -oE "[0-9]+ rows each" | grep -oE "^[0-9]+")
    kept=$(echo "$out" | grep -m1 -oE "[0-9]+ kept on chip" | grep -oE "^[0-9]+")
    if [ $rc -eq 0 ] && ! echo "$out" | grep -q FAIL && echo "$out" | grep -q "OK | path" && [ -n "$rows" ] &&
        [ -n "$kept" ] && [ "$kept" -gt 0 ] && [ "$kept" -lt "$rows" ]; then
        pass "$BN $k $*: OK, $kept of $rows rows a block kept"
    else fail "$BN $k $* (exit $rc, kept '${kept:-}' of '${rows:-}'): $(echo "$out" | grep -E 'path|FAIL|skipped' | head -n 2 | tr '\n' ' ')"; fi
}
for k in 10 11 13; do
    big=512
    [ $k = 13 ] && big=256  # its launch bounds
    keep_part $k --dtype fp32 -N 300007 -C 33 --block-size $big
    keep_part $k --dtype bf16 -N 7001 -C 2056 --block-size 256
    [ "$QUICK" != 1 ] && keep_part $k --dtype fp16 --layout nhwc -N 61 -C 40 --height 97 --width 101 --block-size $big
    for tool in memcheck racecheck; do
        [ "$QUICK" = 1 ] && [ $tool = racecheck ] && continue
        sanitize_kernel $tool $BN $k --dtype bf16 -N 7001 -C 2056 --block-size 256
    done
done
# 11's coalesced adds (13's too) where a block has more sums than threads (96 threads, 512 sums: each thread loops)
# and fewer (416 or 256 threads, 256 sums), a last column of blocks with fewer channels (C = 1000, 2052), and
# --input-mean 1000; 13 in every dtype at its 8 loads a thread, with a tail group of rows (N*H*W not a multiple)
[ "$QUICK" != 1 ] && for args in "11 --dtype fp16 -N 5003 -C 1000 --block-size 96" "11 --dtype fp32 -N 9001 -C 2052 --block-size 416" \
                                "11 --dtype bf16 --input-mean 1000 -N 65536 -C 256" "13 --dtype fp16 -N 5003 -C 1000 --block-size 96" \
                                "13 --dtype fp32 -N 9001 -C 2052 --block-size 256" "13 --dtype bf16 --input-mean 1000 -N 65536 -C 256" \
                                "13 --dtype fp32 --layout nhwc -N 31 -C 256 --height 55 --width 57" \
                                "13 --dtype fp16 --layout nhwc -N 31 -C 256 --height 55 --width 57 --input-mean 1000"; do
    out=$(./$BN $args --check 2>&1); rc=$?
    { log_head "$BN $args --check (exit $rc)"; echo "$out"; } >> "$LOG"
    if [ $rc -eq 0 ] && ! echo "$out" | grep -q FAIL && echo "$out" | grep -q "OK | path"; then pass "$BN $args: OK"
    else fail "$BN $args (exit $rc): $(echo "$out" | grep -E 'path|FAIL|skipped' | head -n 2 | tr '\n' ' ')"; fi
done
# 13 above its launch bounds (256 threads): skipped with the reason, never a CUDA error
for bsz in 320 512; do
    out=$(./$BN 13 --check --block-size $bsz --dtype bf16 -N 1031 -C 1000 2>&1); rc=$?
    { log_head "$BN 13 --check --block-size $bsz (exit $rc)"; echo "$out"; } >> "$LOG"
    if [ $rc -eq 0 ] && echo "$out" | grep -q "skipped: .*256"; then pass "$BN 13 --block-size $bsz: skipped with its launch bounds"
    else fail "$BN 13 --block-size $bsz (exit $rc): $(echo "$out" | tail -n 2 | tr '\n' ' ')"; fi
done

# every rung at a forced block size above some of their launch bounds (12 and 13: 256, 7, 8 and 9-11: 512) and one
# below: `skipped: <reason>` or OK for every point, never a CUDA error (12 at 512 used to exit 3, "invalid argument")
for bsz in 64 512 1024; do
    check_all $BN --block-size $bsz --dtype bf16 --inference --layout nhwc -N 3 -C 40 --height 7 --width 5
    check_all $BN --block-size $bsz --dtype fp16 --inference --layout nchw -N 3 -C 5 --height 7 --width 9
done
check_all $BN --block-size 1024 --dtype bf16 -N 7 -C 1000
check_all $BN --block-size 1024 --dtype fp32 --layout nchw -N 2 -C 33 --height 56 --width 56
for args in "--dtype bf16 --inference --layout nhwc -N 3 -C 40 --height 7 --width 5" \
            "--dtype fp16 --inference --layout nchw -N 3 -C 40 --height 7 --width 5"; do
    for bsz in 512 1024; do
        out=$(./$BN 14 --check --block-size $bsz $args 2>&1); rc=$?
        { log_head "$BN 14 --check --block-size $bsz $args (exit $rc)"; echo "$out"; } >> "$LOG"
        if [ $rc -eq 0 ] && echo "$out" | grep -q "skipped: .*256"; then pass "$BN 14 --block-size $bsz $args: skipped with 12's reason"
        else fail "$BN 14 --block-size $bsz $args (exit $rc): $(echo "$out" | tail -n 2 | tr '\n' ' ')"; fi
    done
done

# the dispatcher's paths (each validated on every element): a point well inside each regime of its rule that a
# problem reaches first (k_regimes in batchnorm_forward.cu; tests/test_suite_paths.py reads these lines against it).
# Before sm_90 rung 8 (clusters) refuses and NCHW training runs the catch-all 6. (check_all above runs 9-11 and 13
# before 14 in one process, and at its 16-bit [N, C] and NHWC shapes of more than 1.4 rows an SM the dispatcher runs
# 13 there: a launch of 13 that does not set back to zero the sums it reads fails in check_all.)
expect_path batchnorm_forward 14 "rung 4 2d_block_column" "rung 4 2d_block_column" --dtype bf16 -N 64 -C 1024
expect_path batchnorm_forward 14 "rung 4 2d_block_column" "rung 4 2d_block_column" --dtype fp32 -N 64 -C 65536 --block-size 64
expect_path batchnorm_forward 14 "rung 9 l2_one_sync" "rung 9 l2_one_sync" --dtype bf16
expect_path batchnorm_forward 14 "rung 13 l2_loads_in_flight" "rung 13 l2_loads_in_flight" --dtype fp16 -N 7001 -C 2056
expect_path batchnorm_forward 14 "rung 13 l2_loads_in_flight" "rung 13 l2_loads_in_flight" --layout nchw -N 2048 -C 64
expect_path batchnorm_forward 14 "rung 9 l2_one_sync" "rung 9 l2_one_sync" --layout nhwc --dtype fp32 -N 256 -C 40 --height 56 --width 56
# NCHW below 362 planes an SM: rung 8 (rung 6 before sm_90); more planes: 6 where a plane is < 90.5 packs, else 8
expect_path batchnorm_forward 14 "rung 8 nchw_cluster_l2" "rung 6 nchw_split_planes" --dtype bf16 -N 512 -C 16 --layout nchw --height 28 --width 28
expect_path batchnorm_forward 14 "rung 12 infer_elementwise" "rung 12 infer_elementwise" --inference --dtype bf16 -N 7 -C 40
expect_path batchnorm_forward 14 "rung 12 infer_elementwise" "rung 12 infer_elementwise" --inference --dtype fp32 -N 1031 -C 1000
expect_path batchnorm_forward 14 "rung 8 nchw_cluster_l2" "rung 6 nchw_split_planes" --layout nchw -N 8 -C 64 --height 56 --width 56
expect_path batchnorm_forward 14 "rung 6 nchw_split_planes" "rung 6 nchw_split_planes" --layout nchw --dtype bf16 -N 4096 -C 64 --height 7 --width 7
expect_path batchnorm_forward 14 "rung 8 nchw_cluster_l2" "rung 6 nchw_split_planes" --layout nchw --dtype fp32 -N 32 -C 512 --height 14 --width 14
expect_path batchnorm_forward 14 "rung 8 nchw_cluster_l2" "rung 6 nchw_split_planes" --layout nchw --dtype fp32 -N 256 -C 2048 --height 7 --width 7
# channels contiguous: rows of < 16 packs at 2-2896 rows an SM, and of 16-1024 packs at 2-362 (13); of 16-1024
# packs at 362-2896 rows an SM, < 1024 packs at 2896-8192 and >= 1024 packs below 8192 (9); beyond 8192 rows an SM
# (5); NCHW planes of >= 90.5 packs beyond 362 planes an SM (8)
expect_path batchnorm_forward 14 "rung 13 l2_loads_in_flight" "rung 13 l2_loads_in_flight" --layout nhwc --dtype fp32 -N 16 -C 8 --height 7 --width 7
expect_path batchnorm_forward 14 "rung 9 l2_one_sync" "rung 9 l2_one_sync" --layout nhwc --dtype fp32 -N 256 -C 8 --height 56 --width 56
expect_path batchnorm_forward 14 "rung 9 l2_one_sync" "rung 9 l2_one_sync" --layout nhwc --dtype fp32 -N 16 -C 4096 --height 7 --width 7
expect_path batchnorm_forward 14 "rung 9 l2_one_sync" "rung 9 l2_one_sync" --dtype fp32 -N 16384 -C 4096
expect_path batchnorm_forward 14 "rung 9 l2_one_sync" "rung 9 l2_one_sync" --layout nhwc --dtype fp32 -N 256 -C 128 --height 28 --width 28
expect_path batchnorm_forward 14 "rung 8 nchw_cluster_l2" "rung 6 nchw_split_planes" --layout nchw --dtype fp32 -N 256 -C 512 --height 7 --width 7
expect_path batchnorm_forward 14 "rung 12 infer_elementwise" "rung 12 infer_elementwise" --inference --layout nchw --dtype bf16 -N 32 -C 256 --height 7 --width 7
# the rule's other rows (each row a problem reaches first has a check; tests/test_suite_paths.py)
expect_path batchnorm_forward 14 "rung 5 split_rows" "rung 5 split_rows" --dtype fp32 -N 2000000 -C 8
# --block-size plan: the rung the dispatcher picks, alone at the dispatcher's block ([N, C], NHWC, NCHW)
expect_at_plan batchnorm_forward 14 --dtype bf16 -N 64 -C 1024
expect_at_plan batchnorm_forward 14 --layout nhwc --dtype fp32 -N 256 -C 128 --height 28 --width 28
expect_at_plan batchnorm_forward 14 --layout nchw --dtype fp32 -N 256 -C 512 --height 7 --width 7

# precision: the one-pass variance of kernel 3 fails when |mean| >> std; the Welford kernels do not (1, 2 and 4,
# whose threads merge long chains, thanks to their shift by the channel's first value)
out=$(./$BN 3 --check --input-mean 1000 -N 16384 -C 64 2>&1); rc=$?
{ log_head "$BN 3 --input-mean 1000 (exit $rc)"; echo "$out"; } >> "$LOG"
if [ $rc -eq 1 ] && echo "$out" | grep -q FAIL; then pass "$BN 3 at --input-mean 1000 is reported FAIL"; else fail "$BN 3 at --input-mean 1000 not reported (exit $rc)"; fi
for k in 1 2 4 5 7 9 10 11 13 14; do
    out=$(./$BN $k --check --input-mean 1000 -N 16384 -C 64 2>&1); rc=$?
    echo "$out" >> "$LOG"
    if [ $rc -eq 0 ]; then pass "$BN $k at --input-mean 1000 passes"; else fail "$BN $k at --input-mean 1000 (exit $rc)"; fi
done
for k in 6 8 14; do
    out=$(./$BN $k --check --input-mean 1000 --layout nchw -N 16 -C 8 --height 16 --width 16 2>&1); rc=$?
    echo "$out" >> "$LOG"
    if [ $rc -eq 0 ]; then pass "$BN $k (NCHW) at --input-mean 1000 passes"; else fail "$BN $k (NCHW) at --input-mean 1000 (exit $rc)"; fi
done

# timing mode: the CSV carries the image shape string
tmp=build/suite_bn_timing
rm -f $tmp.csv
out=$(./$BN 14 --layout nhwc -N 8 -C 64 --height 14 --width 14 --repeats 5 --csv $tmp.csv 2>&1); rc=$?
echo "$out" >> "$LOG"
if [ $rc -eq 0 ] && grep -q "^batchnorm,14,dispatch,fp32,8x64x14x14:nhwc,.*,OK," $tmp.csv; then pass "$BN timing mode: CSV row with shape 8x64x14x14:nhwc"
else fail "$BN timing mode CSV (exit $rc): $(tail -n 1 $tmp.csv 2>/dev/null)"; fi

# kernel 0 (cuDNN), where the build has it. check_all above validates it at every shape (or shows why it skipped);
# here: each of its candidates validated on its own (NORM_CUDNN_BN picks them by their words), the standard
# shapes run (not skipped), and the N*H*W = 1 rule: skipped with its reason, and with the rule lifted
# (NORM_CUDNN_BN_M1=run) cuDNN's running_var is NaN, the one output wrong, as the rule's comment claims.
if ./$BN 0 --check -N 7 -C 33 2>&1 | grep -q "skipped: built without cuDNN"; then
    echo "batchnorm kernel 0: built without cuDNN, its checks are not run" | tee -a "$LOG"
else
    cudnn_one() {  # cudnn_one WORDS ARGS...: the candidate NORM_CUDNN_BN=WORDS alone, `0 --check ARGS`: OK or skipped
        local words="$1" out rc
        shift
        out=$(NORM_CUDNN_BN="$words" ./$BN 0 --check "$@" 2>&1); rc=$?
        { log_head "NORM_CUDNN_BN='$words' $BN 0 --check $* (exit $rc)"; echo "$out"; } >> "$LOG"
        if [ $rc -eq 0 ] && ! echo "$out" | grep -q FAIL && echo "$out" | grep -q "OK | path cuDNN .*$words"; then
            pass "$BN 0 [$words] $*: OK"
        elif [ $rc -eq 0 ] && ! echo "$out" | grep -q FAIL && echo "$out" | grep -q "^skipped: "; then
            pass "$BN 0 [$words] $*: $(echo "$out" | grep -m1 '^skipped: ' | cut -c1-150)"
        else
            fail "$BN 0 [$words] $* (exit $rc): $(echo "$out" | grep -E 'FAIL|wrong|error|did not run' | head -n 3 | tr '\n' ' ')"
        fi
    }
    cudnn_each() {  # cudnn_each ARGS...: every candidate of ARGS' layout and mode, each with `0 --check ARGS`
        local args="$*" calls modes formats fmt
        case "$args" in *--inference*) calls="ForwardInference" ;; *) calls="ForwardTraining ForwardTrainingEx" ;; esac
        case "$args" in *"--layout nchw"*) formats="NCHW" ;; *"--layout nhwc"*) formats="NHWC" ;; *) formats="NCHW NHWC" ;; esac
        for call in $calls; do
            modes="SPATIAL SPATIAL_PERSISTENT"
            # PER_ACTIVATION: H*W = 1 ([N, C] here), plain calls, NCHW descriptors
            [ "$formats" = "NCHW NHWC" ] && [ "$call" != ForwardTrainingEx ] && modes="$modes PER_ACTIVATION"
            for mode in $modes; do
                for fmt in $formats; do
                    [ "$mode" = PER_ACTIVATION ] && [ "$fmt" = NHWC ] && continue
                    cudnn_one "$call $mode $fmt" "$@"
                done
            done
        done
        # the graph API's candidate: the problem's own format ([N, C] is given as NHWC)
        case "$args" in *"--layout nchw"*) fmt=NCHW ;; *) fmt=NHWC ;; esac
        cudnn_one "Graph $fmt" "$@"
    }
    cudnn_each --dtype fp32 -N 1031 -C 33
    cudnn_each --dtype fp16 --layout nhwc -N 7 -C 64 --height 7 --width 7
    cudnn_each --dtype fp32 --layout nchw -N 2 -C 3 --height 56 --width 56
    cudnn_each --inference --dtype bf16 --layout nhwc -N 7 -C 33 --height 7 --width 7
    if [ "$QUICK" != 1 ]; then
        cudnn_each --dtype bf16 -N 2 -C 1000
        cudnn_each --dtype bf16 --layout nhwc -N 2 -C 33 --height 56 --width 56
        cudnn_each --dtype fp16 --layout nchw -N 7 -C 33 --height 7 --width 7
        cudnn_each --inference --dtype fp32 -N 1031 -C 33
        cudnn_each --inference --dtype fp16 --layout nchw -N 2 -C 33 --height 7 --width 7
    fi

    cudnn_runs() {  # cudnn_runs ARGS...: `0 --check ARGS` runs cuDNN (not skipped) and passes
        local out rc
        out=$(./$BN 0 --check "$@" 2>&1); rc=$?
        { log_head "$BN 0 --check $* (exit $rc)"; echo "$out"; } >> "$LOG"
        if [ $rc -eq 0 ] && echo "$out" | grep -q "OK | path cuDNN"; then pass "$BN 0 $*: $(echo "$out" | grep -o 'path cuDNN.*')"
        else fail "$BN 0 $* (exit $rc): $(echo "$out" | grep -E 'skipped|FAIL|wrong|error' | head -n 2 | tr '\n' ' ')"; fi
    }
    cudnn_runs --dtype fp32
    cudnn_runs --dtype bf16 --inference
    if [ "$QUICK" != 1 ]; then
        cudnn_runs --dtype bf16 --layout nhwc -N 32 -C 256 --height 56 --width 56
        cudnn_runs --dtype fp32 --layout nchw -N 32 -C 256 --height 56 --width 56
        cudnn_runs --dtype fp16 --layout nhwc -N 32 -C 256 --height 56 --width 56 --inference
    fi

    out=$(./$BN 0 --check -N 1 -C 33 2>&1); rc=$?
    { log_head "$BN 0 --check -N 1 -C 33 (exit $rc)"; echo "$out"; } >> "$LOG"
    if [ $rc -eq 0 ] && echo "$out" | grep -q "skipped: N\*H\*W = 1: cuDNN's running_var"; then pass "$BN 0 skips N*H*W = 1 in training, saying why"
    else fail "$BN 0 at N*H*W = 1 (exit $rc): $(echo "$out" | tail -n 2 | tr '\n' ' ')"; fi
    for shape in "-N 1 -C 33" "--layout nhwc -N 1 -C 64 --height 1 --width 1"; do
        out=$(NORM_CUDNN_BN_M1=run ./$BN 0 --check $shape 2>&1); rc=$?
        { log_head "NORM_CUDNN_BN_M1=run $BN 0 --check $shape (exit $rc)"; echo "$out"; } >> "$LOG"
        if [ $rc -eq 1 ] && [ "$(echo "$out" | grep -c 'elements wrong')" -eq 1 ] &&
           echo "$out" | grep "running_var: .* elements wrong" | grep -Eq "gpu -?nan"; then
            pass "$BN 0 $shape with the N*H*W = 1 rule lifted: cuDNN's running_var is NaN, the rest matches (the rule holds)"
        elif [ $rc -eq 0 ] && echo "$out" | grep -q "skipped: cuDNN"; then
            pass "$BN 0 $shape with the N*H*W = 1 rule lifted: cuDNN refuses it ($(echo "$out" | grep -m1 '^skipped' | cut -c1-120))"
        elif [ $rc -eq 0 ]; then
            fail "$BN 0 $shape: cuDNN matches this program at N*H*W = 1: drop the rule in cudnn_bn_precheck (harness/cudnn.h)"
        else
            fail "$BN 0 $shape with the N*H*W = 1 rule lifted (exit $rc): $(echo "$out" | grep -E 'wrong|error' | head -n 3 | tr '\n' ' ')"
        fi
    done
fi
