#!/usr/bin/env python3
"""scripts/peers.py's PyTorch side on small problems: every op and variant, eager and torch.compile (and
Liger-Kernel and QuACK where they import, on CUDA, at the variants they have), passes its float64 check; a
corrupted output fails it; torch.compile makes one graph and does not recompile on the next call. The backward ops
too (the ATen op, the fp32 formula eager and compiled, Liger's and QuACK's backward functions; a function this
version lacks is a skip, saying so; --accumulate adds into its buffer: a second call without the reset fails). On CUDA also
the clock: the kernel window is > 0 and within the CUDA events around the call, a profile without GPU activity
falls back to the events, and the command line's --no-write --point (one JSON row per peer, clock cupti; QuACK
cold and hot, and its skip row on the QK-norm view) and --ncu-range. Runs on the GPU where
PyTorch sees one, else on the CPU (the CUDA cases skipped, saying so); without PyTorch it is skipped (exit 77),
as in CI. Under make test (TEST_MODE=quick) torch.compile compiles each case in one of the two dtypes. (The GPU machines have PyTorch: the GPU suite runs it there.)"""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, os.path.join(ROOT, "tests"))
try:
    import torch
    import torch.nn.functional as F
except ImportError:
    print("PyTorch is not installed here")
    sys.exit(77)
import peers  # noqa: E402
from fixture_csv import expect, status  # noqa: E402
from torch._dynamo.utils import counters  # noqa: E402

device = "cuda" if torch.cuda.is_available() else "cpu"
libs = {}  # the optional peers that import here: peer -> its entry points
if device != "cuda":
    print("skip: Liger-Kernel, QuACK and the clock need CUDA")
else:
    for peer, (package, load) in peers.OPTIONAL_PEERS.items():
        try:
            libs[peer] = load()
        except Exception as e:  # noqa: BLE001
            print(f"skip: the {package} cases: it does not import here: {peers.one_line(e)}")
liger, quack = libs.get("liger"), libs.get("quack")

CASES = [("layernorm", ["-N", "64", "-C", "768"]),
         ("rmsnorm", ["-N", "64", "-C", "512"]),
         ("rmsnorm", ["-N", "16", "--heads", "4", "--head-dim", "64"]),
         ("rmsnorm", ["-N", "64", "-C", "256", "--fused-add"]),
         ("rmsnorm", ["-N", "64", "-C", "256", "--weight-offset", "1"]),
         ("batchnorm", ["-N", "256", "-C", "32"]),
         ("batchnorm", ["--layout", "nchw", "-N", "4", "-C", "8", "--height", "7", "--width", "7"]),
         ("batchnorm", ["--layout", "nhwc", "-N", "4", "-C", "8", "--height", "7", "--width", "7"]),
         ("batchnorm", ["-N", "256", "-C", "32", "--inference"])]


def check_corruption(name, t, fn, reset, check, keys=("y", "res", "rstd")):
    """A 5% error in each output the check reads (y, the residual sum where there is one, rstd where the peer
    returns it; the backward's dx, dweight, dbias) fails it. (Not the mean: near 0, 5% of it is inside the
    tolerance.)"""
    for key in keys:
        if reset:
            reset(t)
        out = fn(t)
        if key in out:
            out[key] = out[key] * 1.05  # outside every dtype's tolerance
            expect(f"a corrupted {key} fails: {name}", check(t, out)[2] > 0)


def compile_check(name, t, fn, reset, check):
    """torch.compile of a case: one graph, its output passes, no recompile on the next call."""
    torch._dynamo.reset()
    counters.clear()
    compiled = torch.compile(fn, fullgraph=True, dynamic=False)
    if reset:
        reset(t)
    out = compiled(t)
    expect(f"torch.compile: one graph: {name}", counters["stats"]["unique_graphs"] == 1,
           str(counters["stats"]["unique_graphs"]))
    expect(f"torch.compile passes: {name}", check(t, out)[2] == 0)
    try:
        with peers._no_recompile(torch, "torch.compile"):
            compiled(t)
        expect(f"torch.compile: no recompile on the next call: {name}", True)
    except Exception as e:  # noqa: BLE001
        expect(f"torch.compile: no recompile on the next call: {name}", False, str(e)[:200])


# torch.compile's compile is most of this test's time: make test (TEST_MODE quick) compiles each case in one
# dtype, the two dtypes in turn over the cases; make test-full compiles both.
QUICK = os.environ.get("TEST_MODE", "full") == "quick"
for i, (op, args) in enumerate(CASES):
    p = peers.parse_point(op, args)
    for dtype in ["fp32", "bf16"]:
        name = f"{op} {' '.join(args)} {dtype} on {device}"
        t, fn, reset, check = peers.build_case(torch, F, p, dtype, device)
        out = fn(t)
        expect(f"eager passes: {name}", check(t, out)[2] == 0)
        check_corruption(name, t, fn, reset, check)
        if not QUICK or dtype == ["fp32", "bf16"][i % 2]:
            compile_check(name, t, fn, reset, check)
        if liger and peers.peer_function("liger", op, p):
            t, fn, reset, check = peers.build_case(torch, F, p, dtype, device, liger=liger)
            result = check(t, fn(t))
            expect(f"liger passes: {name}", result[2] == 0, str(result))
            check_corruption(f"liger {name}", t, fn, reset, check)
        if quack and peers.peer_function("quack", op, p):
            t, fn, reset, check = peers.build_case(torch, F, p, dtype, device, quack=quack)
            result = check(t, fn(t))
            expect(f"quack passes: {name}", result[2] == 0, str(result))
            check_corruption(f"quack {name}", t, fn, reset, check)

# The backward ops: the ATen op (torch), the fp32 formula (eager, and what torch.compile compiles), Liger's and
# QuACK's backward functions; a version without the function (peers.PeerCannot) is a skip, saying so.
BACKWARD_CASES = [("layernorm_backward", ["-N", "64", "-C", "768"]),
                  ("layernorm_backward", ["-N", "64", "-C", "256", "--accumulate"]),
                  ("layernorm_backward", ["-N", "3", "-C", "4097"]),
                  ("rmsnorm_backward", ["-N", "64", "-C", "512"]),
                  ("rmsnorm_backward", ["-N", "64", "-C", "256", "--weight-offset", "1"]),
                  ("rmsnorm_backward", ["-N", "64", "-C", "256", "--accumulate", "--weight-offset", "1"]),
                  ("rmsnorm_backward", ["-N", "3", "-C", "4097", "--accumulate"])]
BACKWARD_KEYS = ("dx", "dw", "db")


def backward_peer(what, name, p, dtype, **lib):
    """One backward peer at a case: passes, a corrupted output fails, and with --accumulate a second call without
    the reset (twice the gradient added) fails; (t, fn, reset, check), or None where it is a skip."""
    try:
        t, fn, reset, check = peers.build_case(torch, F, p, dtype, device, **lib)
        if reset:
            reset(t)
        result = check(t, fn(t))
    except peers.PeerCannot as e:
        print(f"skip: {what} {name}: {e}")
        return None
    except (NotImplementedError, RuntimeError) as e:  # the ATen RMSNorm backward has no CPU kernel
        if device == "cpu" and not lib and p["op"] == "rmsnorm_backward":
            print(f"skip: {what} {name} on the CPU: {peers.one_line(e)}")
            return None
        raise
    expect(f"{what} passes: {name}", result[2] == 0, str(result))
    check_corruption(f"{what} {name}", t, fn, reset, check, BACKWARD_KEYS)
    if reset:
        reset(t)
        fn(t)
        out = fn(t)
        if out["dx"] is t["dx"]:  # added into the buffer (QuACK's RMSNorm writes the sum to a new dx)
            expect(f"{what}: --accumulate adds into dx: a second call without the reset fails: {name}",
                   check(t, out)[2] > 0)
    return t, fn, reset, check


for i, (op, args) in enumerate(BACKWARD_CASES):
    p = peers.parse_point(op, args)
    for dtype in ["fp32", "bf16"]:
        name = f"{op} {' '.join(args)} {dtype} on {device}"
        backward_peer("eager", name, p, dtype)
        case = backward_peer("the fp32 formula", name, p, dtype, formula=True)
        if case and (not QUICK or dtype == ["fp32", "bf16"][i % 2]):
            compile_check(name, *case)
        if liger:
            backward_peer("liger", name, p, dtype, liger=liger)
        if quack:
            backward_peer("quack", name, p, dtype, quack=quack)

if device == "cuda":
    # The clock on a small point: the kernel window lies inside the events around the call (2 us for the two
    # clocks' resolution), and a profile without GPU activity makes the events the clock from then on.
    bench = peers.Bench(torch, torch.device("cuda"))
    p = peers.parse_point("layernorm", ["-N", "256", "-C", "768"])
    t, fn, _reset, _check = peers.build_case(torch, F, p, "fp32", "cuda")
    tm = bench.time(lambda: fn(t))
    expect("kernel window: clock cupti, the call's kernels named", tm.clock == "cupti" and len(tm.activities) >= 1,
           str(tm))
    expect("kernel window: > 0 and within the events around the call",
           0 < tm.ms_min <= tm.ms <= tm.launch_ms + 0.002 and tm.ms_min <= tm.launch_min + 0.002, str(tm))
    gbps, clock = bench.copy_gbps(64 << 20)
    expect("copy: the memcpy on the cupti clock", clock == "cupti" and gbps > 100, f"{gbps} {clock}")
    bench._profiled = lambda loop: (loop(), {"traceEvents": []})[1]
    tm = bench.time(lambda: fn(t), repeats=10)
    expect("no GPU activity in the profile: the events time it, from then on", tm.clock == "events"
           and bench.clock == "events" and tm.ms == tm.launch_ms and bench.copy_gbps(64 << 20)[1] == "events", str(tm))

    # The command line: every peer at one point, as JSON rows; a profiler range for ncu
    script = os.path.join(ROOT, "scripts", "peers.py")
    r = subprocess.run([sys.executable, script, "--no-write", "--point", "bf16 -N 256 -C 768", "layernorm"],
                       capture_output=True, text=True)
    rows = {row["kernel"]: row for row in map(json.loads, r.stdout.splitlines())}
    expect("--no-write --point: a JSON row per peer", r.returncode == 0 and sorted(rows) == sorted(peers.PEERS),
           r.stdout + r.stderr[-2000:])
    for peer, row in rows.items():
        want = "SKIP" if peer in peers.OPTIONAL_PEERS and peer not in libs else "OK"
        expect(f"--no-write --point: {peer}: {want}" + (", clock cupti, 256x768" if want == "OK" else ""),
               row["status"] == want and (want != "OK" or (row["clock"] == "cupti" and row["shape"] == "256x768"
                                                          and 0 < row["time_ms_median"] <= row["time_ms_launch_median"]
                                                          + 0.002)), str(row))
    if liger:
        r = subprocess.run([sys.executable, script, "--no-write", "--peer", "liger", "--point",
                            "bf16 -N 64 --heads 4 --head-dim 64", "rmsnorm"], capture_output=True, text=True)
        row = json.loads(r.stdout.splitlines()[0]) if r.stdout else {}
        expect("--no-write --point: liger on the QK-norm view: OK, its contiguous copy named and logged",
               row.get("status") == "OK" and "contiguous" in row.get("kernel_name", "")
               and "ensure_contiguous" in r.stderr, r.stdout + r.stderr[-2000:])
    if quack:
        for point, what in [("bf16 -N 64 -C 256 --fused-add", "the fused add, cold"),
                            ("fp32 -N 4 -C 4096 --weight-offset 1 --hot", "a hot point (its calls in a CUDA graph)")]:
            r = subprocess.run([sys.executable, script, "--no-write", "--peer", "quack", "--point", point, "rmsnorm"],
                               capture_output=True, text=True)
            row = json.loads(r.stdout.splitlines()[0]) if r.stdout else {}
            expect(f"--no-write --point: quack, {what}: OK, clock cupti", r.returncode == 0
                   and row.get("status") == "OK" and row.get("clock") == "cupti", r.stdout + r.stderr[-2000:])
        r = subprocess.run([sys.executable, script, "--no-write", "--peer", "quack", "--point",
                            "bf16 -N 64 --heads 4 --head-dim 64", "rmsnorm"], capture_output=True, text=True)
        row = json.loads(r.stdout.splitlines()[0]) if r.stdout else {}
        expect("--no-write --point: quack on the QK-norm view: a skip row, the reason logged",
               r.returncode == 0 and row.get("status") == "SKIP" and "skipped: QuACK's rmsnorm_fwd takes 2-D rows"
               in r.stderr, r.stdout + r.stderr[-2000:])
    # The backward ops on the command line: a row per peer, the programs' bytes; torch.compile and LayerNorm's ATen op
    # OK, RMSNorm's where this torch has it; Liger and QuACK OK where they import, or a skip saying why
    for point, op in [("bf16 -N 256 -C 768 --accumulate", "layernorm_backward"),
                      ("fp32 -N 4 -C 4096 --weight-offset 1 --hot", "rmsnorm_backward"),
                      ("bf16 -N 256 -C 1024 --accumulate", "rmsnorm_backward")]:
        r = subprocess.run([sys.executable, script, "--no-write", "--point", point, op], capture_output=True, text=True)
        rows = {row["kernel"]: row for row in map(json.loads, r.stdout.splitlines())}
        expect(f"--no-write --point {point} {op}: a JSON row per peer", r.returncode == 0
               and sorted(rows) == sorted(peers.PEERS), r.stdout + r.stderr[-2000:])
        _dtype, args, label = peers.parse_point_option(op, point)
        nbytes = peers.bytes_for(peers.parse_point(op, args), point.split()[0])
        has_rms = hasattr(torch.ops.aten, "_fused_rms_norm_backward")
        for peer, row in rows.items():
            must = peer == "torch.compile" or (peer == "torch" and (op == "layernorm_backward" or has_rms))
            ok = row["status"] == "OK" and row["clock"] == "cupti" and row["shape"] == label
            skip = row["status"] == "SKIP" and (peer in peers.OPTIONAL_PEERS and peer not in libs
                                                or f"peers: {peer} {op} {row['dtype']} {label}: " in r.stderr)
            expect(f"--no-write --point {point} {op}: {peer}: " + ("OK" if must else "OK, or a skip saying why")
                   + f", {nbytes} bytes", row["bytes"] == nbytes and (ok if must else ok or skip), str(row))
    r = subprocess.run([sys.executable, script, "--peer", "torch.compile", "--point", "fp32 -N 256 -C 768",
                        "--ncu-range", "3", "layernorm"], capture_output=True, text=True)
    expect("--ncu-range (no ncu attached): the calls run, one line on stdout", r.returncode == 0
           and r.stdout.strip() == "ncu-range: 3 calls of torch.compile layernorm fp32 256x768",
           r.stdout + r.stderr[-2000:])

sys.exit(status())
