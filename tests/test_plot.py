#!/usr/bin/env python3
"""CI test of scripts/plot.py: the three charts from fixture CSVs. Needs matplotlib (the Makefile's venv);
exits 77 (skipped, with a message) only where matplotlib is not installed and could not be."""
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
try:
    import matplotlib  # noqa: F401
except ImportError:
    venv = os.path.join(ROOT, ".venv", "bin", "python")
    if os.path.exists(venv) and os.path.realpath(sys.prefix) != os.path.realpath(os.path.join(ROOT, ".venv")):
        os.execv(venv, [venv] + sys.argv)
    print("SKIP: matplotlib is not installed and `make venv` could not install it (no PyPI?)")
    sys.exit(77)

sys.path.insert(0, os.path.join(ROOT, "tests"))
from fixture_csv import write_csv  # noqa: E402

with tempfile.TemporaryDirectory() as d:
    folder = os.path.join(d, "fixture-gpu")
    write_csv(os.path.join(folder, "layernorm.csv"), "Fixture GPU", "sm_90", [10, 40, 80, 95])
    # a second shape so that %SOL-against-C has two points, and a peers file with torch rows
    with open(os.path.join(folder, "layernorm.csv")) as f:
        lines = f.read().splitlines()
    extra = [l.replace("8192x768", "16384x4096") for l in lines[1:]]
    with open(os.path.join(folder, "layernorm.csv"), "a") as f:
        f.write("\n".join(extra) + "\n")
    with open(os.path.join(folder, "peers.csv"), "w") as f:
        f.write(lines[0] + "\n")
        f.write(lines[1].replace(",0,k0,", ",torch,layer_norm,", 1) + "\n")
    # bf16 rows at another shape only: its sweep and ladder at that shape, not an empty chart at the default one
    with open(os.path.join(folder, "layernorm.csv"), "a") as f:
        f.write("\n".join(l.replace(",fp32,", ",bf16,").replace("8192x768", "4096x4096") for l in lines[1:]) + "\n")
    out = os.path.join(d, "plots")
    r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "plot.py"), folder, "--out", out],
                       capture_output=True, text=True)
    want = ["layernorm_sweep_fp32_8192x768.png", "layernorm_sol_vs_c_fp32.png", "layernorm_ladder_fp32_8192x768.png",
            "layernorm_sweep_bf16_4096x4096.png", "layernorm_ladder_bf16_4096x4096.png"]
    ok = r.returncode == 0
    for w in want:
        p = os.path.join(out, w)
        good = os.path.exists(p) and os.path.getsize(p) > 5000 and open(p, "rb").read(8) == b"\x89PNG\r\n\x1a\n"
        print(f"{'ok  ' if good else 'FAIL'} {w}")
        ok &= good
    if not ok:
        print(r.stdout, r.stderr)
if not ok:
    sys.exit(1)

# The charts' content (item by item of the plots' review), drawn here in this process: save() keeps the figure.
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import plot  # noqa: E402
from fixture_csv import FIELDS  # noqa: E402

figures = []
plot.save = lambda fig, path: figures.append(fig)


def rows_of(spec):
    """Rows (dicts of strings) from (kernel, name, shape, block, gbps) tuples: OK, fp32, copy 3000 GB/s."""
    out = []
    for k, name, shape, bs, g in spec:
        r = {f: "" for f in FIELDS}
        r.update(op="layernorm", kernel=str(k), kernel_name=name, dtype="fp32", shape=shape, block_size=str(bs),
                 time_ms_median="0.02", gbps=str(g), sol_gbps="3000", sol_pct=str(g / 30), status="OK", gpu="G",
                 bytes="1000", clock="cupti")
        out.append(r)
    return out


checks = []
# (a) the sweep: cuDNN (block size 0) is drawn, as a line across, in its own colour; every kernel a colour of its own
spec = [(0, "cudnn", "8192x768", 0, 2500)] + [(k, f"k{k}", "8192x768", bs, 100 * k + bs / 100)
                                              for k in range(1, 14) for bs in (64, 256, 1024)]
figures.clear()
plot.plot_sweep(rows_of(spec), "layernorm", "fp32", "8192x768", "G", "unused.png")
ax = figures[-1].axes[0]
labels = [l.get_label() for l in ax.get_lines()]
cudnn = [l for l in ax.get_lines() if l.get_label().startswith("0 cudnn")]
# (before: one point at block size 0, which a log axis cannot show; now a line across the chart at its GB/s)
drawable = cudnn and len(cudnn[0].get_xdata()) == 2 and set(cudnn[0].get_ydata()) == {2500}
checks.append(("sweep: cuDNN (block size 0) is drawn where a log axis can show it, at its GB/s", bool(drawable),
               str(labels)))
colors = [str(l.get_color()) for l in ax.get_lines() if l.get_label()[0].isdigit()]
checks.append(("sweep: 14 kernels, 14 different colours (cuDNN's not the dispatcher's)",
               len(colors) == 14 and len(set(colors)) == 14, str(colors)))

# (b) BatchNorm's %SOL chart: x is the channel count, and the image shapes are on it
figures.clear()
bn = rows_of([(8, "k8", s, 256, 2000) for s in ("65536x256", "16384x1024", "32x256x56x56:nhwc",
                                                "32x256x56x56:nchw", "128x64x112x112:nhwc", "65536x256:inf")])
for r in bn:
    r["op"] = "batchnorm"
plot.plot_sol_vs_c(bn, [], "batchnorm", "fp32", "G", "unused.png")
ax = figures[-1].axes[0]
xs = sorted({x for l in ax.get_lines() for x in l.get_xdata() if l.get_label() != "device copy = 100%"})
names = [l.get_label() for l in ax.get_lines()]
checks.append(("batchnorm %SOL: the x axis is the channel count", "channel" in ax.get_xlabel(), ax.get_xlabel()))
checks.append(("batchnorm %SOL: image shapes (NCHW, NHWC) and inference points are drawn",
               xs == [64, 256, 1024] and any("NHWC" in n for n in names) and any("NCHW" in n for n in names)
               and any("inference" in n for n in names), f"{xs} {names}"))
figures.clear()
plot.plot_sol_vs_c(rows_of([(7, "k7", "8192x768", 256, 2000)]), [], "layernorm", "fp32", "G", "unused.png")
checks.append(("layernorm %SOL: the x axis is still the normalized size",
               "normalized" in figures[-1].axes[0].get_xlabel(), figures[-1].axes[0].get_xlabel()))

# (c) the ladder: gains from kernel 1 on, over the previous rung; cuDNN (0) none, and no rung for kernel 1
figures.clear()
plot.plot_ladder(rows_of([(0, "cudnn", "8192x768", 0, 2500), (1, "k1", "8192x768", 256, 25),
                          (2, "k2", "8192x768", 256, 50), (3, "dispatch", "8192x768", 256, 55)]),
                 "layernorm", "fp32", "8192x768", "G", "unused.png")
texts = [t.get_text() for t in figures[-1].axes[0].texts]
checks.append(("ladder: cuDNN, kernel 1 and the dispatcher show no gain, kernel 2 its gain over kernel 1",
               texts == ["2500\n", "25\n", "50\n2.00x", "55\n"], str(texts)))
bad = 0
for name, good, detail in checks:
    print(f"{'ok  ' if good else 'FAIL'} {name}" + ("" if good else f": {detail}"))
    bad += not good
sys.exit(1 if bad else 0)
