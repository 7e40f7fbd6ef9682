#!/usr/bin/env python3
"""PNG charts from a results folder (needs matplotlib: `make plots` runs this from the project's venv).

    scripts/plot.py results/<gpu> [--out DIR]      (default DIR: results/<gpu>/plots)

For each <op>.csv of the folder, and each dtype in it:
  <op>_sweep_<dtype>_<shape>.png  (a) GB/s against block size, one line per kernel, at the op's default shape
                                      (where the dtype's rows lack it, at their first shape)
  <op>_sol_vs_c_<dtype>.png       (b) %SOL against C: the best kernel of the op, cuDNN (kernel 0) and, where
                                      peers.csv holds them, torch and torch.compile; the copy is the 100% line
  <op>_ladder_<dtype>_<shape>.png (c) bars: each kernel's best GB/s at the default shape, with the gain of
                                      each step (kernels 1 and up) over the previous one that ran; cuDNN's bar
                                      (kernel 0) and the dispatcher's have no gain
The sweep draws a kernel that picks its own block size (cuDNN: block size 0) as a horizontal line at its best
GB/s. BatchNorm's %SOL chart is against the channel count C, one line per form ([N, C], NCHW, NHWC, training
and inference).
Titles name the GPU, dtype and shape.
"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import cli  # noqa: E402
import shapes as shapes_mod  # noqa: E402
from summary import best_points, is_rung, load, op_results, results_folder  # noqa: E402

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:  # main() says so after parsing the arguments, so that --help and their errors work without it
    plt = None


def save(fig, path):
    """Every chart ends the same way: tight layout, a 110-dpi PNG, the figure closed."""
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def c_of(op, shape):
    """(C, form) of a shape string for the %SOL-against-C chart, None for shapes it does not show. LayerNorm and
    RMSNorm: C of a plain rows x C shape (form None). BatchNorm: the channel count C of [N, C] and of the image
    shapes N x C x H x W, with the form ("[N, C]", "NCHW", "NHWC", and " inference" for the :inf points)."""
    base, _, tail = shape.partition(":")
    tags = tail.split(":") if tail else []
    try:
        dims = [int(p) for p in base.split("x")]
    except ValueError:
        return None
    if op != "batchnorm":
        return (dims[1], None) if len(dims) == 2 and not tags else None
    layout = [t for t in tags if t != "inf"]
    if len(dims) == 2 and not layout:
        form = "[N, C]"
    elif len(dims) == 4 and layout in (["nchw"], ["nhwc"]):
        form = layout[0].upper()
    else:
        return None
    return dims[1], form + (" inference" if "inf" in tags else "")


def kernel_colors(kernels):
    """A colour for each kernel number (1 and up: all different, up to 20); cuDNN (0) grey."""
    palette = plt.get_cmap("tab20").colors
    colors = {k: palette[i % len(palette)] for i, k in enumerate(sorted(k for k in kernels if k != 0))}
    colors[0] = "0.45"
    return colors


def plot_sweep(rows, op, dtype, shape, gpu, path):
    fig, ax = plt.subplots(figsize=(10, 5))
    by_kernel = {}
    for r in rows:
        if r["dtype"] == dtype and r["shape"] == shape and r["status"] == "OK":
            by_kernel.setdefault((int(r["kernel"]), r["kernel_name"]), []).append(
                (int(r["block_size"]), float(r["gbps"])))
    colors = kernel_colors({k for k, _ in by_kernel})
    for (k, name), pts in sorted(by_kernel.items()):
        pts.sort()
        swept = [p for p in pts if p[0] > 0]
        if swept:
            ax.plot([p[0] for p in swept], [p[1] for p in swept], marker="o", color=colors[k], label=f"{k} {name}")
        if len(swept) < len(pts):  # block size 0: the kernel (cuDNN) chose its own; no place on the block-size axis
            best = max(p[1] for p in pts if p[0] <= 0)
            ax.axhline(best, color=colors[k], linestyle="-.", linewidth=1.2,
                       label=f"{k} {name} (its own launch configuration)")
    sol = [float(r["sol_gbps"]) for r in rows if r["dtype"] == dtype and r["shape"] == shape and float(r["sol_gbps"]) > 0]
    if sol:
        ax.axhline(max(sol), color="black", linestyle="--", linewidth=1, label="device copy (SOL)")
    ax.set_xscale("log", base=2)
    ax.set_xticks([32, 64, 128, 256, 512, 1024])
    ax.set_xticklabels(["32", "64", "128", "256", "512", "1024"])
    ax.set_xlabel("block size (threads)")
    ax.set_ylabel("GB/s")
    ax.set_title(f"{op} {dtype} {shape}: GB/s by block size\n{gpu}")
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
    ax.grid(True, alpha=0.3)
    save(fig, path)


def plot_sol_vs_c(rows, peers, op, dtype, gpu, path):
    best = best_points(rows)
    series = {}
    latency = shapes_mod.off_standard_labels(op)  # few rows: microseconds, not %SOL vs C; tuning points

    def named(name, form):
        return f"{name}, {form}" if form else name

    for (d, shape, k), r in best.items():
        cf = c_of(op, shape)
        if d != dtype or not isinstance(r, dict) or cf is None or shape in latency:
            continue
        c, form = cf
        name = named("cuDNN (kernel 0)" if k == 0 else f"best kernel of {op}", form)
        cur = series.setdefault(name, {})
        if c not in cur or float(r["sol_pct"]) > cur[c][0]:
            cur[c] = (float(r["sol_pct"]), shape)
    for r in peers:
        cf = c_of(op, r["shape"])
        if r["op"] != op or r["dtype"] != dtype or r["status"] != "OK" or cf is None or r["shape"] in latency:
            continue
        c = cf[0]
        cur = series.setdefault(named(r["kernel"], cf[1]), {})
        if c not in cur or float(r["sol_pct"]) > cur[c][0]:
            cur[c] = (float(r["sol_pct"]), r["shape"])
    fig, ax = plt.subplots(figsize=(8, 5))
    for name, pts in sorted(series.items()):
        xs = sorted(pts)
        ax.plot(xs, [pts[x][0] for x in xs], marker="o", label=name)
    ax.axhline(100, color="black", linestyle="--", linewidth=1, label="device copy = 100%")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("C (channels)" if op == "batchnorm" else "C (normalized size)")
    ax.set_ylabel("% of speed of light")
    ax.set_ylim(0, 110)
    ax.set_title(f"{op} {dtype}: %SOL against C (standard shapes)\n{gpu}")
    ax.legend(fontsize=8)
    ax.grid(True, alpha=0.3)
    save(fig, path)


def plot_ladder(rows, op, dtype, shape, gpu, path):
    best = best_points(rows)
    names = {int(r["kernel"]): r["kernel_name"] for r in rows}
    labels, vals, gains = [], [], []
    prev = None  # the previous rung of the ladder (kernels 1 and up): cuDNN (0) and the dispatcher are no rungs
    for k in sorted(names):
        r = best.get((dtype, shape, k))
        if not isinstance(r, dict):
            continue
        g = float(r["gbps"])
        step = is_rung(k, names[k])
        labels.append(f"{k}\n{names[k]}")
        vals.append(g)
        gains.append(f"{g / prev:.2f}x" if prev and step else "")
        if step:
            prev = g
    fig, ax = plt.subplots(figsize=(max(6, 1.1 * len(vals) + 2), 5))
    bars = ax.bar(range(len(vals)), vals, color="tab:blue")
    for b, g, v in zip(bars, gains, vals):
        ax.annotate(f"{v:.0f}\n{g}", (b.get_x() + b.get_width() / 2, b.get_height()), ha="center", va="bottom",
                    fontsize=8)
    sol = [float(r["sol_gbps"]) for r in rows if r["dtype"] == dtype and r["shape"] == shape and float(r["sol_gbps"]) > 0]
    if sol:
        ax.axhline(max(sol), color="black", linestyle="--", linewidth=1, label="device copy (SOL)")
        ax.legend(fontsize=8, loc="upper left")
    ax.set_xticks(range(len(vals)))
    ax.set_xticklabels(labels, fontsize=7)
    ax.set_ylabel("GB/s (best block size)")
    ax.set_title(f"{op} {dtype} {shape}: the ladder, gain of each step\n{gpu}")
    ax.set_ylim(0, max(vals + sol + [1]) * 1.2)
    save(fig, path)


def main(argv):
    ap = cli.Parser("plot", __doc__)
    ap.add_argument("folder", type=results_folder, help="a results folder, results/<gpu>")
    ap.add_argument("--out", help="where the PNGs go (default: FOLDER/plots)")
    a = ap.parse_args(argv[1:])
    if plt is None:
        print("plot: matplotlib is not installed here (`make venv`, then .venv/bin/python scripts/plot.py)",
              file=sys.stderr)
        return 1
    out = a.out or os.path.join(a.folder, "plots")
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as e:
        ap.error(f"cannot make the folder {out}: {e.strerror}")
    peers_path = os.path.join(a.folder, "peers.csv")
    peers = load(peers_path, kernel_numbers=False) if os.path.exists(peers_path) else []
    written = []
    for op, rows in op_results(a.folder):
        gpu = rows[0]["gpu"]
        for dtype in sorted({r["dtype"] for r in rows}):
            # each dtype at its own rows' shape: the default point where that dtype has it (no empty chart)
            shape = shapes_mod.default_shape(op, [r for r in rows if r["dtype"] == dtype])
            p = os.path.join(out, f"{op}_sweep_{dtype}_{shape}.png")
            plot_sweep(rows, op, dtype, shape, gpu, p)
            written.append(p)
            p = os.path.join(out, f"{op}_sol_vs_c_{dtype}.png")
            plot_sol_vs_c(rows, peers, op, dtype, gpu, p)
            written.append(p)
            p = os.path.join(out, f"{op}_ladder_{dtype}_{shape}.png")
            plot_ladder(rows, op, dtype, shape, gpu, p)
            written.append(p)
    if not written:
        print(f"plot: no rows in any results CSV of {a.folder}: nothing to plot", file=sys.stderr)
        return 1
    for p in written:
        print(p)
    return 0


if __name__ == "__main__":
    cli.run(main)
