#!/usr/bin/env bash
# Runs every kernel of every built program at every standard shape (scripts/shapes.py) and dtype, with the
# block-size sweep, appending rows to results/<gpu-slug>/<op>.csv (DESIGN.md schema) and the full output to
# results/<gpu-slug>/<op>.log. One progress line per step on stderr.
#   scripts/run_all.sh [OP ...]            (default: every *_forward program that is built)
#   RESULTS=dir scripts/run_all.sh         write elsewhere
cd "$(dirname "$0")/.." || exit 2
ops=("$@")
[ ${#ops[@]} -eq 0 ] && ops=($(ls *_forward.cu | sed 's/_forward\.cu$//'))
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n1)
[ -n "$gpu" ] || { echo "run_all: no GPU (nvidia-smi found none)" >&2; exit 2; }
slug=$(echo "$gpu" | tr 'A-Z' 'a-z' | sed -E 's/^nvidia //; s/[^a-z0-9]+/-/g; s/^-|-$//g')
dir=${RESULTS:-results/$slug}
mkdir -p "$dir"
status=0
for op in "${ops[@]}"; do
    prog=./${op}_forward
    [ -x "$prog" ] || { echo "run_all: $prog not built (make)" >&2; status=2; continue; }
    csv=$dir/$op.csv
    log=$dir/$op.log
    rm -f "$csv" "$log"
    mapfile -t shapes < <(python3 scripts/shapes.py "$op")
    n=$(( ${#shapes[@]} * 2 )); i=0
    for dt in fp32 bf16; do
        for shape in "${shapes[@]}"; do
            set -- $shape
            i=$((i + 1))
            echo "[$i/$n] $op $dt ${1}x${2}" >&2
            $prog all --dtype "$dt" -N "$1" -C "$2" --csv "$csv" >> "$log" 2>&1
            rc=$?
            [ $rc -eq 0 ] || { echo "run_all: $op $dt ${1}x${2} exited $rc (see $log)" >&2; status=1; }
        done
    done
done
exit $status
