#!/usr/bin/env bash
# BatchNorm training against its two-phase bound, for issue 30's closing note; --help says what it does.
set -u
case "${1:-}" in
-h | --help) cat <<'H'
usage: results/lab/s37_bn_bound.sh        (GIT_REV=<commit>)

At the seven training points of the standard set, fp32 and bf16: the dispatcher (the last kernel of --list) with
--phases (its best block's time against the read-only and write-only probes, each over half the copy's bytes,
measured in the same process), then its one validated launch under ncu (caches flushed; the kernels it runs summed:
DRAM bytes read and written, L2 read sectors and their hits; where it runs one kernel, the stall reasons per issue).
Prints one table: time, % of the copy, % of read-then-write, DRAM read over x's bytes, the DRAM bytes re-read by
the second pass and that pass's L2 hit rate (its L2 reads are those beyond x's first reading), the top three stall
reasons. Logs under $OUT.
H
exit 0 ;;
"") ;;
*) echo "s37_bn_bound: no arguments (see --help)" >&2; exit 2 ;;
esac
. results/lab/lab.sh
lab_start s37_bn_bound
make -j16 batchnorm_forward GIT_REV="$REV" > "$OUT/build.log" 2>&1 || { tail -n 20 "$OUT/build.log"; exit 1; }
el built
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_read_lookup_hit.sum
for r in long_scoreboard barrier membar lg_throttle wait drain short_scoreboard; do
    M=$M,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio
done
K=$(./batchnorm_forward --list | tail -n 1 | awk '{print $1}')  # the dispatcher
PTS=("-N 65536 -C 256" "-N 16384 -C 1024" "-N 4096 -C 4096" "--layout nchw -N 32 -C 256 --height 56 --width 56"
     "--layout nchw -N 128 -C 64 --height 112 --width 112" "--layout nhwc -N 32 -C 256 --height 56 --width 56"
     "--layout nhwc -N 128 -C 64 --height 112 --width 112")
: > "$OUT/bound.txt"
for dt in fp32 bf16; do
    for pt in "${PTS[@]}"; do
        tag="$dt $pt"
        ./batchnorm_forward $K --phases --dtype $dt $pt > "$OUT/ph.txt" 2>&1
        cat "$OUT/ph.txt" >> "$OUT/phases.log"
        best=$(grep -m1 "^best:" "$OUT/ph.txt")
        ph=$(grep -m1 "^phases: best" "$OUT/ph.txt")
        rd=$(grep -m1 "^phases: read-only" "$OUT/ph.txt" | grep -oE "read-only [0-9.]+ us" | grep -oE "[0-9.]+")
        wr=$(grep -m1 "^phases: read-only" "$OUT/ph.txt" | grep -oE "write-only [0-9.]+ us" | grep -oE "[0-9.]+")
        bs=$(echo "$best" | grep -oE "block_size +[0-9]+" | grep -oE "[0-9]+$")
        path=$(grep -m1 -E "block_size +$bs (\(own\) )?\|" "$OUT/ph.txt" | grep -oE "path rung [0-9]+ [a-z0-9_]+")
        mb=$(grep -m1 "MB counted" "$OUT/ph.txt" | grep -oE "[0-9.]+ MB counted" | grep -oE "^[0-9.]+")
        "$NCU" --metrics "$M" -k regex:batchnorm_ --csv --print-units base ./batchnorm_forward $K --check --block-size "${bs:-512}" \
            --dtype $dt $pt > "$OUT/ncu.csv" 2>&1
        cat "$OUT/ncu.csv" >> "$OUT/ncu.log"
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$tag" "$path" "$bs" "$mb" "$rd" "$wr" "$best" "$ph" \
            "$(awk -F'","' '/"(gpu__time|dram__|lts__|smsp__)/ {v = $NF; gsub(/[",]/, "", v); s[$(NF-2)] += v}
                   /"gpu__time_duration.sum"/ {n++}
                   END {for (k in s) printf "%s=%.3f;", k, s[k]; printf "kernels=%d;", n}' "$OUT/ncu.csv")" >> "$OUT/bound.txt"
    done
    el "$dt done"
done
python3 - "$OUT/bound.txt" <<'PY'
import re, sys
print("| point | rung (block) | us | % of copy | read + write probes us | % of that bound | ncu us | DRAM read / x | "
      "2nd pass DRAM re-read MB | 2nd pass L2 hit | DRAM write / x | stalls per issue (top 3) |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
for line in open(sys.argv[1]):
    tag, path, bs, mb, rd, wr, best, ph, ncu = line.rstrip("\n").split("\t")
    sol = re.search(r"([0-9.]+)% SOL", best)
    pct = re.search(r"([0-9.]+)% of that bound", ph)
    m = {}
    for kv in ncu.split(";"):
        if "=" in kv:
            k, v = kv.split("=", 1)
            m[k.strip()] = v.strip().replace(",", "")
    def f(k):
        try:
            return float(m[k])
        except (KeyError, ValueError):
            return float("nan")
    x = float(mb) * 1e6 / 2 if mb else float("nan")  # counted bytes: x read once and y written once (+ small)
    rd_b, wr_b = f("dram__bytes_read.sum"), f("dram__bytes_write.sum")
    reads, hits = f("lts__t_sectors_op_read.sum") * 32, f("lts__t_sectors_op_read_lookup_hit.sum") * 32
    t = f("gpu__time_duration.sum")  # ns
    re_read = rd_b - x
    pass2 = reads - x  # L2 reads beyond x's first reading
    hit2 = 1 - re_read / pass2 if pass2 > 0 else float("nan")
    bound = float(rd) + float(wr) if rd and wr else float("nan")
    stalls = "-"
    if f("kernels") == 1:  # a ratio summed over several kernels means nothing
        top = sorted(((f(k), k.split("stalled_")[1].split("_per_issue")[0]) for k in m if "stalled_" in k), reverse=True)
        stalls = ", ".join(f"{n} {v:.2f}" for v, n in top[:3])
    tm = re.search(r"phases: best ([0-9.]+) us", ph)
    print(f"| {tag} | {path.replace('path rung ', '')} ({bs}) | {tm.group(1) if tm else '?'} | {sol.group(1) if sol else '?'}% | "
          f"{bound:.2f} | {pct.group(1) if pct else '?'}% | {t / 1e3:.2f} | {rd_b / x:.3f} | {re_read / 1e6:.1f} | "
          f"{100 * hit2:.1f}% | {wr_b / x:.3f} | {stalls} |")
PY
el done
