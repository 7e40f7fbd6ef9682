#!/usr/bin/env python3
"""The peers: PyTorch eager and torch.compile on the programs' standard points, in the programs' CSV schema.

    scripts/peers.py [--quick] [--peer torch|torch.compile|all] [--out DIR] [--device I] [OP ...]

For every op (layernorm, rmsnorm, batchnorm by default), dtype and standard point of scripts/shapes.py:
- builds the same problem in PyTorch (torch.randn inputs, seeded; the same layout, strides and options as the
  program's arguments: the QK-norm view of q inside a packed qkv buffer, the fused residual add, NCHW/NHWC);
- counts the bytes exactly as the program does (bytes_for below), so GB/s compares time for the same work;
- times with the programs' cold-L2 method: before every timed call, write 2 x L2 and then read another
  3 x L2 (clean lines), CUDA events around the call, median of 10..200 repeats (about 100 ms of work);
- measures the copy of the same byte count in the same process (cudaMemcpyAsync through Tensor.copy_,
  timed the same way; once per byte count, shared by torch and torch.compile) for %SOL;
- validates the peer's outputs against a float64 reference on a sample of rows, with the programs'
  per-dtype tolerances (|err| <= atol + rtol |ref|), statistics included where the peer returns them;
- torch.compile: compiled once per point outside the timing (fullgraph=True, dynamic=False, dynamo reset
  before each point so no recompile limit is reached), checked to have produced exactly one graph, and
  timed with error_on_recompile so a silent fall-back to eager cannot happen.
Rows go to DIR/<gpu-slug>/peers.csv, rewritten after every point (rows for the same op and peer are replaced,
others kept), with
`kernel` = torch or torch.compile and `kernel_name` = the torch function. Without PyTorch (or without a
CUDA device for it) it says so and exits 0 with no rows. A progress line per point on stderr.
"""
import argparse
import csv
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import shapes as shapes_mod  # noqa: E402

CSV_FIELDS = ["op", "kernel", "kernel_name", "dtype", "shape", "block_size", "time_ms_median", "time_ms_min",
              "bytes", "gbps", "sol_gbps", "sol_pct", "max_abs_err", "max_rel_err", "status", "gpu", "sm", "cuda",
              "git_rev"]
PEERS = ["torch", "torch.compile"]
OPS = ["layernorm", "rmsnorm", "batchnorm"]
DTYPE_SIZE = {"fp32": 4, "fp16": 2, "bf16": 2}
# The programs' tolerances (common.h tolerance_for): atol = rtol
TOLERANCE = {"fp32": 1e-4, "fp16": 2e-3, "bf16": 1e-2}
EPS = {"layernorm": 1e-5, "rmsnorm": 1e-6, "batchnorm": 1e-5}
SAMPLE_ROWS = 64


# ---------------------------------------------------------------------------------------------------------
# Pure Python: the problem a program's arguments describe, and its byte count (tested in CI).

# program argument -> (key of the problem dict, conversion of its value; None: a flag without a value)
PROGRAM_ARGS = {"-N": ("N", int), "--rows": ("N", int), "-C": ("C", int), "--cols": ("C", int),
                "--heads": ("heads", int), "--head-dim": ("head_dim", int), "--row-stride": ("row_stride", int),
                "--fused-add": ("fused", None), "--weight-offset": ("offset", float), "--layout": ("layout", str),
                "--height": ("H", int), "--width": ("W", int), "--inference": ("inference", None),
                "--momentum": ("momentum", float), "--eps": ("eps", float)}


def parse_point(op, args):
    """The program's arguments (scripts/shapes.py) -> a dict describing the problem."""
    p = {"op": op, "N": None, "C": None, "heads": None, "head_dim": None, "row_stride": None, "fused": False,
         "offset": 0.0, "layout": "nc", "H": 1, "W": 1, "inference": False, "momentum": 0.1, "eps": EPS[op]}
    it = iter(args)
    for a in it:
        if a not in PROGRAM_ARGS:
            raise ValueError(f"peers.py does not know the program argument '{a}'")
        key, conv = PROGRAM_ARGS[a]
        p[key] = True if conv is None else conv(next(it))
    if p["heads"] is not None:  # QK-norm: N = tokens, rows of the norm = tokens * heads
        p["tokens"] = p["N"]
        p["S"] = p["row_stride"] or 3 * p["heads"] * p["head_dim"]
    return p


def bytes_for(p, dtype):
    """Bytes the program counts for this problem (keep in step with each program's setup())."""
    es = DTYPE_SIZE[dtype]
    op = p["op"]
    if op == "layernorm":  # x, y; weight, bias; mean and rstd (fp32)
        n, c = p["N"], p["C"]
        return 2 * n * c * es + 2 * c * es + 2 * n * 4
    if op == "rmsnorm":  # x, y; weight; rstd (fp32); fused add: residual read and written
        if p["heads"] is not None:
            n, c = p["tokens"] * p["heads"], p["head_dim"]
        else:
            n, c = p["N"], p["C"]
        return 2 * n * c * es + c * es + n * 4 + (2 * n * c * es if p["fused"] else 0)
    if op == "batchnorm":  # x, y; per channel: training 8 fp32 (gamma, beta, save_mean, save_invstd,
        # running mean and var read and written), inference 4 (gamma, beta, running mean and var)
        numel = p["N"] * p["C"] * p["H"] * p["W"]
        return 2 * numel * es + (8 if not p["inference"] else 4) * 4 * p["C"]
    raise KeyError(op)


def torch_function(op, p):
    """The kernel_name of a peer row: the torch function the point calls."""
    if op == "layernorm":
        return "torch.native_layer_norm"
    if op == "rmsnorm":
        return "add_+F.rms_norm" if p["fused"] else "F.rms_norm"
    return "F.batch_norm"


def slugify(name):
    import run_all  # the same slug as the programs' results folder
    return run_all.slugify(name)


def merge_rows(old_rows, new_rows):
    """Keep old rows except those of an (op, kernel) pair the new rows cover; new rows appended."""
    covered = {(r["op"], r["kernel"]) for r in new_rows}
    return [r for r in old_rows if (r["op"], r["kernel"]) not in covered] + list(new_rows)


def write_csv(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=CSV_FIELDS)
        w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k, "") for k in CSV_FIELDS})


def read_csv(path):
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def git_rev():
    if os.environ.get("GIT_REV"):
        return os.environ["GIT_REV"]
    try:
        r = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                           timeout=10)
        return r.stdout.strip() or "unknown"
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"


# ---------------------------------------------------------------------------------------------------------
# On the GPU (imports torch lazily).

class Bench:
    """Cold-L2 timing as in common.h: flush (write 2 x L2, read 3 x L2), events around each call."""

    def __init__(self, torch, device):
        self.torch = torch
        self.device = device
        props = torch.cuda.get_device_properties(device)
        l2 = getattr(props, "L2_cache_size", 0) or (64 << 20)
        self.flush_w = torch.empty(2 * l2 // 4, dtype=torch.int32, device=device)
        self.flush_r = torch.zeros(3 * l2 // 4, dtype=torch.int32, device=device)
        self.counter = 0
        self.copies = {}  # byte count -> copy GB/s: measured once per process, shared by the peers of a point

    def flush(self):
        self.counter += 1
        self.flush_w.fill_(self.counter)
        self.flush_r.max()  # reads every line; the result is discarded

    def time(self, fn, repeats=0):
        torch = self.torch
        fn()
        fn()
        torch.cuda.synchronize()
        if repeats <= 0:
            est = 1e30
            for _ in range(3):
                self.flush()
                e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                e0.record()
                fn()
                e1.record()
                e1.synchronize()
                est = min(est, e0.elapsed_time(e1))
            repeats = min(200, max(10, int(100.0 / max(est, 1e-4))))
        ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(repeats)]
        for e0, e1 in ev:
            self.flush()
            e0.record()
            fn()
            e1.record()
        torch.cuda.synchronize()
        t = sorted(e0.elapsed_time(e1) for e0, e1 in ev)
        return statistics.median(t), t[0]

    def copy_gbps(self, nbytes):
        if nbytes not in self.copies:
            self.copies[nbytes] = self._measure_copy(nbytes)
        return self.copies[nbytes]

    def _measure_copy(self, nbytes):
        torch = self.torch
        half = (int(nbytes // 2) + 15) // 16 * 16
        src = torch.full((half,), 0x3C, dtype=torch.uint8, device=self.device)
        dst = torch.empty_like(src)
        ms, _ = self.time(lambda: dst.copy_(src))
        del src, dst
        return 2.0 * half / (ms * 1e-3) / 1e9


def torch_dtype(torch, dtype):
    return {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[dtype]


def build_case(torch, F, p, dtype, device, seed=1234):
    """(inputs, fn(inputs) -> outputs dict, reset(inputs), check(inputs, outputs) -> (max_abs, max_rel, n_bad))."""
    g = torch.Generator(device=device)
    g.manual_seed(seed)
    dt = torch_dtype(torch, dtype)
    tol = TOLERANCE[dtype]
    op, eps = p["op"], p["eps"]

    def randn(*shape, dtype=dt):
        return torch.randn(*shape, generator=g, device=device, dtype=torch.float32).to(dtype)

    def compare(got, ref):
        got = got.double()
        err = (got - ref).abs()
        bad = int((~(err <= tol + tol * ref.abs())).sum())  # NaN counts as bad
        rel = (err / ref.abs().clamp_min(1e-30))
        return float(err.max()), float(rel.max()), bad

    def merge(*checks):
        return (max(c[0] for c in checks), max(c[1] for c in checks), sum(c[2] for c in checks))

    if op == "layernorm":
        n, c = p["N"], p["C"]
        t = {"x": randn(n, c), "w": randn(c), "b": randn(c)}

        def fn(t):
            y, mean, rstd = torch.native_layer_norm(t["x"], [c], t["w"], t["b"], eps)
            return {"y": y, "mean": mean, "rstd": rstd}

        def check(t, o):
            idx = torch.randperm(n, generator=g, device=device)[:SAMPLE_ROWS]
            x = t["x"][idx].double()
            m = x.mean(-1, keepdim=True)
            rs = 1.0 / torch.sqrt(((x - m) ** 2).mean(-1, keepdim=True) + eps)
            y = (x - m) * rs * t["w"].double() + t["b"].double()
            return merge(compare(o["y"][idx], y), compare(o["mean"].reshape(n, -1)[idx], m),
                         compare(o["rstd"].reshape(n, -1)[idx], rs))

        return t, fn, None, check

    if op == "rmsnorm":
        off = p["offset"]
        if p["heads"] is not None:
            T, H, D, S = p["tokens"], p["heads"], p["head_dim"], p["S"]
            qkv = randn(T, S)
            t = {"qkv": qkv, "w": randn(D)}

            def fn(t):
                q = t["qkv"][:, : H * D].unflatten(-1, (H, D))  # the strided view, as the program reads it
                w = t["w"] + off if off else t["w"]
                return {"y": F.rms_norm(q, (D,), w, eps)}

            def check(t, o):
                idx = torch.randperm(T, generator=g, device=device)[:SAMPLE_ROWS]
                x = t["qkv"][idx, : H * D].double().unflatten(-1, (H, D))
                rs = 1.0 / torch.sqrt((x * x).mean(-1, keepdim=True) + eps)
                return compare(o["y"][idx], x * rs * (t["w"].double() + off))

            return t, fn, None, check
        n, c = p["N"], p["C"]
        t = {"x": randn(n, c), "w": randn(c)}
        if p["fused"]:
            t["res0"] = randn(n, c)
            t["res"] = t["res0"].clone()

        def fn(t):
            w = t["w"] + off if off else t["w"]
            if p["fused"]:
                t["res"].add_(t["x"])  # the pre-norm step: residual += x in the dtype, then normalize it
                return {"y": F.rms_norm(t["res"], (c,), w, eps)}
            return {"y": F.rms_norm(t["x"], (c,), w, eps)}

        def reset(t):
            if p["fused"]:
                t["res"].copy_(t["res0"])

        def check(t, o):
            idx = torch.randperm(n, generator=g, device=device)[:SAMPLE_ROWS]
            x = t["x"][idx].double()
            checks = []
            if p["fused"]:
                r = (t["res0"][idx].float() + t["x"][idx].float()).to(dt)  # the rounded sum, as stored
                checks.append(compare(t["res"][idx], r.double()))
                x = r.double()
            rs = 1.0 / torch.sqrt((x * x).mean(-1, keepdim=True) + eps)
            checks.append(compare(o["y"][idx], x * rs * (t["w"].double() + off)))
            return merge(*checks)

        return t, fn, reset, check

    # batchnorm
    n, c, h, w_ = p["N"], p["C"], p["H"], p["W"]
    mom, train = p["momentum"], not p["inference"]
    if p["layout"] == "nc":
        x = randn(n, c)
    else:
        x = randn(n, c, h, w_)
        if p["layout"] == "nhwc":
            x = x.contiguous(memory_format=torch.channels_last)
    t = {"x": x, "gamma": randn(c, dtype=torch.float32), "beta": randn(c, dtype=torch.float32),
         "rm0": randn(c, dtype=torch.float32) * 0.1, "rv0": 1.0 + randn(c, dtype=torch.float32).abs()}
    t["rm"], t["rv"] = t["rm0"].clone(), t["rv0"].clone()

    def fn(t):
        return {"y": F.batch_norm(t["x"], t["rm"], t["rv"], t["gamma"], t["beta"], train, mom, eps)}

    def reset(t):
        t["rm"].copy_(t["rm0"])
        t["rv"].copy_(t["rv0"])

    def check(t, o):
        xd = t["x"].double()
        dims = [0] if xd.dim() == 2 else [0, 2, 3]
        shape = [1, c] + [1] * (xd.dim() - 2)
        cnt = xd.numel() // c
        if train:
            mean = xd.mean(dims)
            var = ((xd - mean.view(shape)) ** 2).mean(dims)
        else:
            mean, var = t["rm0"].double(), t["rv0"].double()
        idx = torch.randperm(n, generator=g, device=device)[:SAMPLE_ROWS]
        ref = (xd[idx] - mean.view(shape)) / torch.sqrt(var.view(shape) + eps) * t["gamma"].double().view(shape) \
            + t["beta"].double().view(shape)
        checks = [compare(o["y"][idx], ref)]
        if train:
            unbiased = var * cnt / (cnt - 1) if cnt > 1 else var
            checks.append(compare(t["rm"], (1 - mom) * t["rm0"].double() + mom * mean))
            checks.append(compare(t["rv"], (1 - mom) * t["rv0"].double() + mom * unbiased))
        return merge(*checks)

    return t, fn, reset, check


def run_point(torch, bench, peer, op, dtype, args, label, device, log):
    import torch.nn.functional as F
    p = parse_point(op, args)
    nbytes = bytes_for(p, dtype)
    row = {"op": op, "kernel": peer, "kernel_name": torch_function(op, p), "dtype": dtype, "shape": label,
           "block_size": 0, "time_ms_median": 0, "time_ms_min": 0, "bytes": int(nbytes), "gbps": 0, "sol_gbps": 0,
           "sol_pct": 0, "max_abs_err": 0, "max_rel_err": 0, "status": "SKIP"}
    try:
        t, fn, reset, check = build_case(torch, F, p, dtype, device)
        call = fn
        if peer == "torch.compile":
            import torch._dynamo
            from torch._dynamo.utils import counters
            torch._dynamo.reset()
            counters.clear()
            compiled = torch.compile(fn, fullgraph=True, dynamic=False)
            t0 = time.time()
            compiled(t)  # compiles here, outside the timing
            torch.cuda.synchronize()
            graphs = counters["stats"]["unique_graphs"]
            log.write(f"  compiled in {time.time() - t0:.1f} s, {graphs} graph(s)\n")
            if graphs != 1:
                raise RuntimeError(f"torch.compile produced {graphs} graphs (expected 1)")
            call = compiled
        if reset:
            reset(t)
        with _no_recompile(torch, peer):
            out = call(t)
            torch.cuda.synchronize()
            max_abs, max_rel, bad = check(t, out)
            row.update(max_abs_err=f"{max_abs:.3e}", max_rel_err=f"{max_rel:.3e}")
            if bad:
                row["status"] = "FAIL"
                log.write(f"  FAIL: {bad} sampled elements outside the tolerance (max abs {max_abs:.3e})\n")
                return row
            del out
            ms, ms_min = bench.time(lambda: call(t))
        sol = bench.copy_gbps(nbytes)
        gbps = nbytes / (ms * 1e-3) / 1e9
        row.update(time_ms_median=f"{ms:.6f}", time_ms_min=f"{ms_min:.6f}", gbps=f"{gbps:.2f}",
                   sol_gbps=f"{sol:.2f}", sol_pct=f"{100 * gbps / sol:.2f}", status="OK")
        log.write(f"  {ms:.4f} ms (min {ms_min:.4f}) | {gbps:.1f} GB/s | {100 * gbps / sol:.1f}% of copy {sol:.1f} | "
                  f"max err abs {max_abs:.1e} | OK\n")
    except Exception as e:  # a peer that cannot run this point is a skip with the reason in the log
        log.write(f"  skipped: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}\n")
        print(f"peers: {peer} {op} {dtype} {label}: {type(e).__name__}: {e}"[:400], file=sys.stderr)
    finally:
        torch.cuda.empty_cache()
    return row


class _no_recompile:
    """torch.compile timing: a recompile raises instead of silently running something else."""

    def __init__(self, torch, peer):
        self.patch = None
        if peer == "torch.compile":
            import torch._dynamo
            self.patch = torch._dynamo.config.patch(error_on_recompile=True)

    def __enter__(self):
        if self.patch:
            self.patch.__enter__()

    def __exit__(self, *exc):
        if self.patch:
            self.patch.__exit__(*exc)
        return False


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("ops", nargs="*", help=f"ops (default: {' '.join(OPS)})")
    ap.add_argument("--quick", action="store_true", help="each op's default point only")
    ap.add_argument("--peer", default="all", choices=PEERS + ["all"])
    ap.add_argument("--device", type=int, default=0)
    ap.add_argument("--out", default=os.path.join(ROOT, "results"), help="results folder (default results/)")
    a = ap.parse_args(argv[1:])
    ops = a.ops or OPS
    for op in ops:
        if op not in OPS:
            print(f"peers: unknown op '{op}' (one of {', '.join(OPS)})", file=sys.stderr)
            return 2
    try:
        import torch
    except ImportError:
        print("peers: PyTorch is not installed here: no peer rows written", file=sys.stderr)
        return 0
    if not torch.cuda.is_available():
        print("peers: PyTorch sees no CUDA device: no peer rows written", file=sys.stderr)
        return 0
    device = torch.device("cuda", a.device)
    torch.cuda.set_device(device)
    peers = PEERS if a.peer == "all" else [a.peer]
    name = torch.cuda.get_device_name(device).replace(",", " ")
    cap = torch.cuda.get_device_capability(device)
    out_dir = os.path.join(a.out, slugify(name))
    os.makedirs(out_dir, exist_ok=True)
    common = {"gpu": name, "sm": f"sm_{cap[0]}{cap[1]}", "cuda": torch.version.cuda or "?", "git_rev": git_rev()}
    bench = Bench(torch, device)
    rows = []
    path = os.path.join(out_dir, "peers.csv")
    stored = read_csv(path)
    log_path = os.path.join(out_dir, "peers.log")
    with open(log_path, "a") as log:
        log.write(f"# peers.py {' '.join(argv[1:])}: {name} | torch {torch.__version__} | CUDA {common['cuda']} | "
                  f"cuDNN {torch.backends.cudnn.version()}\n")
        pts = [(op, d, args, label) for op in ops for d, args, label in shapes_mod.points(op, a.quick)]
        for peer in peers:
            for i, (op, dtype, args, label) in enumerate(pts, 1):
                print(f"[{peer} {i}/{len(pts)}] {op} {dtype} {label}", file=sys.stderr, flush=True)
                log.write(f"{peer} | {op} | {dtype} | {label}\n")
                r = run_point(torch, bench, peer, op, dtype, args, label, device, log)
                r.update(common)
                rows.append(r)
                log.flush()
                write_csv(path, merge_rows(stored, rows))  # after every point: a run cut short keeps its rows
    fails = [r for r in rows if r["status"] == "FAIL"]
    print(f"peers: {len(rows)} rows ({sum(r['status'] == 'OK' for r in rows)} OK, {len(fails)} FAIL) -> {path}",
          file=sys.stderr)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
