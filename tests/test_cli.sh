#!/usr/bin/env bash
# Command-line tests that need no GPU: --help, --list, argument errors (exit 2, one line naming the
# argument), the no-device path, and the header comment of each program against its registry.
# Run from the repository root after `make`. Sourced by run_tests.sh (shares its counters) or run alone.
cd "$(dirname "$0")/.." || exit 2
. tests/lib.sh
NODEV="timeout 20 env CUDA_VISIBLE_DEVICES="   # hides any GPU: the no-device path on every machine (a hang: exit 124)
# no CUDA driver at all (this machine has no libcuda): the no-device line says so
NO_DRIVER=0
python3 -c "import ctypes; ctypes.CDLL('libcuda.so.1')" 2>/dev/null || NO_DRIVER=1
mkdir -p build

for prog in $(ls *_forward.cu *_backward.cu | sed 's/\.cu$//'); do
    [ -x "./$prog" ] || { fail "$prog: not built"; continue; }
    expect "$prog --help exits 0" 0 $NODEV ./$prog --help && contains "$prog --help shows usage" "^usage: ./$prog \[KERNEL\|K1,K2,...\|all\]" && contains "$prog --help lists the options" "--block-size N"
    expect "$prog -h exits 0" 0 $NODEV ./$prog -h
    expect "$prog --list exits 0 without a GPU" 0 $NODEV ./$prog --list
    contains "$prog --list starts each line with a kernel number" "^ ?0  "
    if [ "$(echo "$OUTPUT" | grep -Evc '^ ?[0-9]+  ')" -eq 0 ]; then pass "$prog --list: every line starts with its number"; else fail "$prog --list: a line without a number"; fi
    python3 tests/check_header.py "$prog.cu" "$OUTPUT" && pass "$prog: header comment agrees with the registry" \
        || fail "$prog: header comment and registry disagree"

    expect "$prog 5 without a GPU exits 2" 2 $NODEV ./$prog 5
    contains "$prog 5 without a GPU says 'no CUDA device'" "^$prog: no CUDA device"
    if [ "$(echo "$OUTPUT" | wc -l)" -eq 1 ]; then pass "$prog: the no-device message is one line"; else fail "$prog: no-device message has $(echo "$OUTPUT" | wc -l) lines"; fi
    expect "$prog (default kernel) without a GPU exits 2" 2 $NODEV ./$prog

    # bad arguments: exit 2 before any GPU is looked for, one line naming the argument, then a usage hint
    bad() {  # bad NAME PATTERN ARGS...
        local name=$1 pat=$2
        shift 2
        expect "$prog rejects $name with exit 2" 2 $NODEV ./$prog "$@" || return
        contains "$prog names the bad argument in '$name'" "$pat"
        if echo "$OUTPUT" | grep -q "no CUDA device"; then fail "$prog: '$name' looked for a GPU first"; fi
        if [ "$(echo "$OUTPUT" | wc -l)" -eq 2 ] && echo "$OUTPUT" | tail -n1 | grep -q -- "--help"; then
            pass "$prog: '$name' gives one line and a usage hint"
        else fail "$prog: '$name' output is not one line + hint: $(echo "$OUTPUT" | tr '\n' '|')"; fi
    }
    bad "block size 48" "block size '48'" --block-size 48
    bad "block size 2048" "block size '2048'" --block-size 2048
    bad "block size 0" "block size '0'" --block-size 0
    bad "block size plans" "block size 'plans'" --block-size plans
    bad "dtype fp64" "dtype 'fp64'" --dtype fp64
    bad "rows 0" "rows '0'" -N 0
    bad "cols abc" "cols 'abc'" -C abc
    bad "negative cols" "cols '-4'" --cols -4
    bad "unknown option" "unknown option '--bogus'" --bogus
    bad "unknown short option" "unknown option '-z'" -z
    bad "missing argument" "option '--dtype' needs an argument" --dtype
    bad "an argument to a flag" "option '--check=1' takes no argument" --check=1
    bad "unknown kernel 99" "unknown kernel '99'" 99
    bad "kernel 'fast'" "unknown kernel 'fast'" fast
    bad "a kernel list with an unknown kernel" "unknown kernel '99' in '1,99'" 1,99
    bad "a kernel named twice in a list" "kernel 1 named twice" 1,1
    bad "extra positional" "unexpected argument 'x'" 3 x
    printf 'op,kernel,gbps\n' > build/cli_old_schema.csv
    bad "a --csv file of another schema" "not this program's CSV schema" --csv build/cli_old_schema.csv
    bad "repeats 0" "repeats '0'" --repeats 0
    bad "input std -1" "input std '-1'" --input-std -1
    bad "input mean nan" "input mean 'nan'" --input-mean nan
    bad "seed -1" "seed '-1'" --seed -1
    bad "device -1" "device '-1'" --device -1
    bad "-N with -B" "either as -N or as -B/-T" -N 4 -B 2
    bad "a huge shape" "too large" -N 100000 -C 100000
    bad "--pdl without --hot" "--pdl needs --hot" --pdl
    bad "an argument to --hot" "option '--hot=1' takes no argument" --hot=1
    expect "$prog: --hot --pdl passes parsing (no GPU: exit 2 at the device)" 2 $NODEV ./$prog --hot --pdl
    contains "$prog: --hot --pdl gets as far as the device" "no CUDA device"
    bad "--phases with --check" "--phases compares times and --check does not time" --phases --check
    bad "--validate-first with --check" "--validate-first validates one block size and times the others" --validate-first --check
    expect "$prog: --validate-first passes parsing (no GPU: exit 2 at the device)" 2 $NODEV ./$prog --validate-first
    contains "$prog: --validate-first gets as far as the device" "no CUDA device"
    expect "$prog: --phases passes parsing (no GPU: exit 2 at the device)" 2 $NODEV ./$prog --phases --hot
    contains "$prog: --phases gets as far as the device" "no CUDA device"
    if ./$prog --help 2>&1 | grep -q -- "--phases .*read-only and a write-only kernel"; then pass "$prog: --help explains --phases"
    else fail "$prog: --help explains --phases"; fi
    bad "an argument after --list" "unexpected argument '99' \(--list takes no other argument\)" --list 99
    bad "an argument after --help" "unexpected argument '3' \(--help takes no other argument\)" --help 3
    bad "--csv in a missing folder" "--csv /nonexistent-dir/x.csv: cannot write it" --csv /nonexistent-dir/x.csv
    bad "--json in a missing folder" "--json /nonexistent-dir/x.jsonl: cannot write it" --json /nonexistent-dir/x.jsonl
    rm -f build/cli_new.csv
    expect "$prog: a new --csv file passes the check (no GPU: exit 2 at the device)" 2 $NODEV ./$prog --csv build/cli_new.csv
    contains "$prog: a new --csv file gets as far as the device" "no CUDA device"
    if [ -e build/cli_new.csv ]; then fail "$prog: the --csv check left a file behind"; else pass "$prog: the --csv check leaves no file behind"; fi

    # --csv/--json to a stream: never read, never waited on (a pipe as stdout, >(cat), a FIFO), - is stdout
    nodev() {  # nodev NAME ARGS...: passes every check, ends at the no-device line
        local name=$1
        shift
        expect "$prog: $name passes the checks (no GPU: exit 2 at the device)" 2 $NODEV ./$prog "$@" &&
            contains "$prog: $name gets as far as the device" "^$prog: no CUDA device"
    }
    nodev "--json /dev/stdout (a pipe: never read)" --json /dev/stdout
    nodev "--csv /dev/stdout" --csv /dev/stdout
    nodev "--json >(cat)" --json >(cat >/dev/null)
    nodev "--csv - (stdout)" --csv -
    nodev "--csv - --json FILE" --csv - --json build/cli_new.jsonl
    rm -f build/cli_fifo && mkfifo build/cli_fifo
    bad "--csv a FIFO no process reads" "--csv build/cli_fifo: a FIFO that no process reads" --csv build/cli_fifo
    (timeout 20 cat build/cli_fifo >/dev/null &)
    sleep 0.2
    nodev "--csv a FIFO with a reader" --csv build/cli_fifo
    rm -f build/cli_fifo
    expect "$prog --help says where the rows go for -" 0 $NODEV ./$prog --help
    contains "$prog --help: - is stdout, the human-readable output then on stderr" "or - for stdout: then the human-readable output goes to"
    # refused: a file name that is an option, one file for two formats, a file of the other kind
    bad "--csv --check (an option as the file name)" "--csv needs a file name, not the option '--check'" --csv --check
    bad "--json -N 5" "--json needs a file name, not the option '-N'" --json -N 5
    bad "--csv '' (an empty name)" "--csv needs a file name" --csv ""
    bad "--csv X --json X" "one file cannot take both formats" --csv build/cli_both --json build/cli_both
    bad "--csv - --json -" "one file cannot take both formats" --csv - --json -
    bad "--csv - --json /dev/stdout" "one file cannot take both formats" --csv - --json /dev/stdout
    bad "--json into an existing CSV" "not JSON Lines" --json build/cli_old_schema.csv
    printf '{"op":"layernorm"}\n' > build/cli_rows.jsonl
    bad "--csv into an existing JSON Lines file" "holds JSON Lines, not CSV" --csv build/cli_rows.jsonl
    nodev "--json into an existing JSON Lines file" --json build/cli_rows.jsonl
    bad "--csv a folder" "--csv build: is a folder" --csv build
    # refused: timing mode with validation only, empty list items, spaces in numbers, values the dtype cannot hold
    bad "--hot --check" "--hot is a timing mode and --check does not time" --hot --check
    bad "an empty item in a kernel list (1,,2)" "empty item in the kernel list '1,,2'" 1,,2
    bad "a kernel list ending in a comma" "empty item in the kernel list" 1,
    bad "seed ' -1' (a leading space)" "invalid seed ' -1'" --seed " -1"
    bad "seed '5 ' (a trailing space)" "invalid seed '5 '" --seed "5 "
    bad "rows ' 5' (a leading space)" "invalid rows ' 5'" -N " 5"
    bad "input mean 1e39 (beyond fp32)" "invalid input mean '1e39'" --input-mean 1e39
    bad "input std 1e39 (beyond fp32)" "invalid input std '1e39'" --input-std 1e39
    bad "fp16 inputs of mean 100000" "do not fit fp16" --dtype fp16 --input-mean 100000
    bad "fp16 inputs of std 20000" "do not fit fp16" --dtype fp16 --input-std 20000
    bad "eps 1e39 (beyond fp32)" "invalid eps '1e39'" --eps 1e39
    # one limit for rows in the three programs: 2^31 - 1
    bad "-N 2147483648 -C 1" "invalid rows '2147483648'" -N 2147483648 -C 1
    bad "-C 2147483648 -N 1" "invalid cols '2147483648'" -C 2147483648 -N 1
    nodev "-N 2147483647 -C 1" -N 2147483647 -C 1
    # no silent truncation: a 300-character kernel list is read whole (it was cut at 255 and ran kernel 0)
    long_list="7,$(printf '0%.0s' $(seq 300))99"
    bad "a 300-character kernel list" "unknown kernel '0+99' in '7,0+99'" "$long_list"
    bad "a 5000-character argument" "argument 2 is 5000 characters long \(at most 4096\)" --csv "$(printf 'a%.0s' $(seq 5000))"
    bad "a newline in a refused argument (still one line)" "invalid dtype 'fp.x0a32'" --dtype "$(printf 'fp\n32')"
    if [ "$NO_DRIVER" = 1 ]; then
        expect "$prog without a CUDA driver exits 2" 2 $NODEV ./$prog
        contains "$prog without a CUDA driver says so" "^$prog: no CUDA device \(no CUDA driver found\)$"
    fi
done

# LayerNorm's own options and dtype limits
expect "layernorm: kernel 1 refuses bf16 with exit 2" 2 $NODEV ./layernorm_forward 1 --dtype bf16
contains "layernorm: says kernel 1 has no bf16" "kernel 1 does not support --dtype bf16"
expect "layernorm: --eps -1 exits 2" 2 $NODEV ./layernorm_forward --eps -1
contains "layernorm: names the bad eps" "eps '-1'"
expect "layernorm: --cluster 16 passes parsing" 2 $NODEV ./layernorm_forward 12 --cluster 16
contains "layernorm: --cluster 16 gets as far as the device" "no CUDA device"
# --cluster K: a program, the kernels that take it (in words), one of them, the uses it refuses, and the ones it
# passes to the device (the bad sizes 0, 3, 32 and x refused on the way)
cluster_option() {
    local op=$1 range=$2 one=$3 bad=$4 good=$5 k args
    for k in 0 3 32 x; do
        expect "$op: --cluster $k exits 2" 2 $NODEV ./${op}_forward $one --cluster $k
        contains "$op: names the bad cluster size $k" "cluster size '$k'"
    done
    while read -r args; do
        expect "$op: '$args' exits 2 (--cluster with a kernel that does not take it)" 2 $NODEV ./${op}_forward $args
        contains "$op: '$args' says the option is kernels $range's" "applies to kernels $range alone"
    done <<< "$bad"
    while read -r args; do
        expect "$op: '$args' passes parsing (kernels $range, the default, or a list of them)" 2 $NODEV ./${op}_forward $args
        contains "$op: '$args' gets as far as the device" "no CUDA device"
    done <<< "$good"
}
cluster_option layernorm "11-13 and 14" 14 $'7 --cluster 2\n10 --cluster 2\nall --cluster 2\n0,14 --cluster 1\n9 --cluster 8\n11,9 --cluster 4' \
    $'11 --cluster 2\n12 --cluster 8\n13 --cluster 1\n14 --cluster 1\n11,12,13,14 --cluster 4\n--cluster 2'
# --packs P: a program, the kernels that take it (in words), one of them, its bad values and the words that name
# the good ones, the uses it refuses, and the ones it passes to the device
packs_option() {
    local op=$1 range=$2 one=$3 badv=$4 values=$5 bad=$6 good=$7 k args
    for k in $badv; do
        expect "$op: --packs $k exits 2" 2 $NODEV ./${op}_forward $one --packs $k
        contains "$op: names the bad packs a thread $k" "invalid packs a thread '$k' \\(--packs: $values\\)"
    done
    while read -r args; do
        expect "$op: '$args' exits 2 (--packs with a kernel that does not take it)" 2 $NODEV ./${op}_forward $args
        contains "$op: '$args' says the option is kernels $range's" "--packs applies to kernels $range alone"
    done <<< "$bad"
    while read -r args; do
        expect "$op: '$args' passes parsing" 2 $NODEV ./${op}_forward $args
        contains "$op: '$args' gets as far as the device" "no CUDA device"
    done <<< "$good"
}
packs_option layernorm "12 and 14" 12 "3 8 x -1" "0, 1, 2 or 4" $'7 --packs 2\n13 --packs 1\nall --packs 4\n12,13 --packs 2' \
    $'12 --packs 1\n14 --packs 4\n12,14 --packs 2\n--packs 0'
expect "layernorm: --prefetch is not an option" 2 $NODEV ./layernorm_forward 14 --prefetch 1
contains "layernorm: --prefetch is unknown" "unknown option '--prefetch'"
expect "layernorm: --list shows kernels 0-14" 0 $NODEV ./layernorm_forward --list
if [ "$(echo "$OUTPUT" | awk '{print $1}' | tr '\n' ' ')" = "0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 " ]; then pass "layernorm: --list numbers are 0..14"; else fail "layernorm: --list numbers: $(echo "$OUTPUT" | awk '{print $1}' | tr '\n' ' ')"; fi
contains "layernorm: --list names kernel 12 latency_split" "^12  latency_split"
contains "layernorm: --list names kernel 13 odd_rows" "^13  odd_rows"
contains "layernorm: --list names the dispatcher, kernel 14" "^14  dispatch"
contains "layernorm: --list names kernel 0 as the cuDNN slot" "^ 0  cudnn"

# RMSNorm's own options
if [ -x ./rmsnorm_forward ]; then
    for args in "--heads 4" "--head-dim 64" "--row-stride 100" "--heads 4 --head-dim 64 --row-stride 255" \
                "--heads 4 --head-dim 64 --fused-add" "--heads 4 --head-dim 64 -C 64" "--heads 0 --head-dim 64" \
                "--heads 4 --head-dim x" "--weight-offset abc" "--weight-offset inf" "--eps -1" "1 --dtype fp16"; do
        expect "rmsnorm rejects '$args' with exit 2" 2 $NODEV ./rmsnorm_forward $args
        if [ "$(echo "$OUTPUT" | wc -l)" -eq 2 ]; then pass "rmsnorm: '$args' gives one line and a hint"; else fail "rmsnorm: '$args': $(echo "$OUTPUT" | tr '\n' '|')"; fi
    done
    # the size check reads the QK view (tokens x stride), not -C's default
    expect "rmsnorm: a QK view of 10^6 tokens x 1 head x 64 passes parsing" 2 $NODEV ./rmsnorm_forward --heads 1 --head-dim 64 -N 1000000
    contains "rmsnorm: a QK view of 10^6 tokens gets as far as the device" "no CUDA device"
    expect "rmsnorm: --list shows kernels 0-12" 0 $NODEV ./rmsnorm_forward --list
    if [ "$(echo "$OUTPUT" | awk '{print $1}' | tr '\n' ' ')" = "0 1 2 3 4 5 6 7 8 9 10 11 12 " ]; then pass "rmsnorm: --list numbers are 0..12"; else fail "rmsnorm: --list numbers"; fi
    contains "rmsnorm: --list names kernel 8 latency_split" "^ 8  latency_split"
    contains "rmsnorm: --list names kernel 9 odd_rows" "^ 9  odd_rows"
    contains "rmsnorm: --list names kernel 10 cluster_cp_async" "^10  cluster_cp_async"
    contains "rmsnorm: --list names kernel 11 subwarp_persistent" "^11  subwarp_persistent"
    contains "rmsnorm: --list names the dispatcher, kernel 12" "^12  dispatch"
    cluster_option rmsnorm "8-10 and 12" 10 $'7 --cluster 2\n11 --cluster 2\nall --cluster 2\n0,12 --cluster 1\n5 --cluster 8\n10,11 --cluster 4' \
        $'8 --cluster 2\n9 --cluster 16\n10 --cluster 1\n12 --cluster 4\n8,9,10,12 --cluster 8\n--cluster 2'
    packs_option rmsnorm "8 and 12" 8 "1 3 8 x" "2 or 4; 0 = the plan's" $'7 --packs 2\nall --packs 4\n8,9 --packs 2' \
        $'8 --packs 2\n12 --packs 4\n8,12 --packs 2\n--packs 0'
fi
# BatchNorm's own options
if [ -x ./batchnorm_forward ]; then
    bn_bad() { expect "batchnorm rejects '$1' with exit 2" 2 $NODEV ./batchnorm_forward $1 && contains "batchnorm names the problem in '$1'" "$2"; }
    bn_bad "--layout chw" "layout 'chw'"
    bn_bad "--height 0" "height '0'"
    bn_bad "--width x" "width 'x'"
    bn_bad "--height 56" "need an image layout"
    bn_bad "--momentum 1.5" "momentum '1.5'"
    bn_bad "--eps -1" "eps '-1'"
    bn_bad "-B 8" "-B/-T do not apply"
    bn_bad "--layout nchw -N 128 -C 256 --height 3136 --width 3136" "too large"
    bn_bad "1 --dtype bf16" "kernel 1 does not support --dtype bf16"
    bn_bad "--inference=1" "option '--inference=1' takes no argument"
    expect "batchnorm: --help exits 0" 0 $NODEV ./batchnorm_forward --help
    contains "batchnorm: --help says -N is the batch" "-N, --rows N +the batch N"
    if echo "$OUTPUT" | grep -q -- "-B N -T N"; then fail "batchnorm: --help offers -B/-T"; else pass "batchnorm: --help does not offer -B/-T"; fi
    expect "batchnorm: --list shows kernels 0-14" 0 $NODEV ./batchnorm_forward --list
    if [ "$(echo "$OUTPUT" | awk '{print $1}' | tr '\n' ' ')" = "0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 " ]; then pass "batchnorm: --list numbers are 0..14"; else fail "batchnorm: --list numbers"; fi
    if [ "$(echo "$OUTPUT" | awk '$1 == 13 {print $2}')" = "l2_loads_in_flight" ]; then pass "batchnorm: --list names kernel 13 l2_loads_in_flight"; else fail "batchnorm: kernel 13 is not l2_loads_in_flight"; fi
    if [ "$(echo "$OUTPUT" | awk '$1 == 14 {print $2}')" = "dispatch" ]; then pass "batchnorm: the dispatcher is the last kernel, 14"; else fail "batchnorm: kernel 14 is not the dispatcher"; fi
fi

# the planted-bug builds exist for every program (their verdicts are checked on a GPU): the ones make built
# ($SUITE_BUGS: make test builds two a program, make test-full all four), else all four
for prog in $(ls *_forward.cu *_backward.cu | sed 's/\.cu$//'); do
    for k in ${SUITE_BUGS:-1 2 3 4}; do
        if [ -x build/${prog}_bug$k ]; then pass "$prog: planted bug $k builds"; else fail "$prog: planted bug $k did not build"; fi
    done
done

[ "${SOURCED_BY_RUNNER:-0}" = 1 ] || { summary; [ "$FAILED" -eq 0 ]; }
