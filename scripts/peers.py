#!/usr/bin/env python3
"""The peers: PyTorch eager, torch.compile, Liger-Kernel and QuACK on the programs' benchmark points, in their CSV
schema.

    scripts/peers.py [--quick | --set standard|latency|odd] [--peer torch|torch.compile|liger|quack|all] [--out DIR]
                     [--device I] [OP ...]
    scripts/peers.py --point "DTYPE ARGS..." [--peer P] [--no-write] OP
    scripts/peers.py --points FILE [--peer P] [--no-write] OP
    scripts/peers.py --ncu-range N --point "DTYPE ARGS..." --peer P OP

For every op (by default layernorm, rmsnorm, batchnorm and the backward programs' layernorm_backward,
rmsnorm_backward), dtype and point of scripts/shapes.py (every set of points an op has: the standard set, and for
LayerNorm and RMSNorm, forward and backward, the latency set, whose points come cold and hot, and the odd set;
--set takes one set):
- builds the same problem in PyTorch (torch.randn inputs, seeded; the same layout, strides and options as the
  program's arguments: the QK-norm view of q inside a packed qkv buffer, the fused residual add, NCHW/NHWC);
- counts the bytes exactly as the program does (bytes_for below), so GB/s compares time for the same work;
- times on the GPU's own clock, as the programs do: a call's time is from its first kernel's start to its last
  kernel's end, read from the CUPTI activity records that torch.profiler keeps, so no CPU time (dispatch,
  torch.compile guards) is in it. Cold L2 as in the programs: before every call a flush writes 2 x L2 and then
  reads another 3 x L2, on a side stream ordered with the call's stream by stream waits, so that each call's
  GPU activity is what its stream ran between two flushes; before each flush the side stream sleeps three
  times the call's CPU time, so the CPU is ahead when the call's kernels run and no CPU gap between them
  enters the window (the programs get the same from the flush alone); warm-up first, median of 10..200 calls
  (about 100 ms of work). CUDA events around each call give the second figure, "with launch" (time_ms_launch_*).
  Where the profiler records no GPU activity (CUPTI held by another profiler), the events alone time the
  rows, their clock column says "events", and one line on stderr says so;
- hot points (the program argument --hot; label suffix :hot, after any other, e.g. 4x4096:hot) time the
  inputs resident in L2, as after the kernel that produced them, as the programs' --hot does: after the
  validation below (one eager call, as for a cold point), 3 calls on a side stream (capture needs its
  warm-up there), then K = 32 calls captured in one CUDA graph (torch.cuda.CUDAGraph; torch.compile's
  compiled function as it is), the graph replayed back to back with no flush in between: 3 warm-up replays,
  then 10..200 timed ones (about 100 ms of work). A call's time = one replay's GPU window (its first
  activity's start to its last activity's end: kernels, memcpys, memsets, CUPTI) / K, median and min over the
  replays; the replays are told apart by count (every replay runs the same activities, in start order, on
  one stream; a trace that does not split so is an error). CUDA events around each replay / K give "with
  launch". A peer whose call cannot be captured (an exception during capture) gets a skip row, the reason in
  one line in the log and on stderr;
- measures the copy of the same byte count in the same process (the faster of Tensor.copy_, a device-to-device
  memcpy, and an elementwise kernel moving the same bytes; timed the same way, cold or hot: in hot mode each
  candidate is captured K times in a graph and timed per launch; once per byte count and mode, shared by the
  peers) for %SOL;
- validates the peer's outputs against a float64 reference on a sample of rows, with the programs'
  per-dtype tolerances (|err| <= atol + rtol |ref|), statistics included where the peer returns them;
- torch.compile: compiled once per point outside the timing (fullgraph=True, dynamic=False, dynamo reset
  before each point so no recompile limit is reached), checked to have produced exactly one graph, and
  timed with error_on_recompile so a silent fall-back to eager cannot happen;
- liger (where `import liger_kernel` works, else skip rows): layer_norm_forward (the body of
  LigerLayerNormFunction, which also returns mean and rstd), LigerRMSNormFunction (weight offset inside the
  kernel; on the QK-norm view Liger itself copies q to contiguous memory first, and that copy is timed with
  it), LigerFusedAddRMSNormFunction; Liger has no BatchNorm (skip rows);
- quack (where `import quack.rmsnorm` works, else skip rows; TVM_FFI_DISABLE_TORCH_C_DLPACK=1 is set before the
  import unless set already): QuACK's CuTe-DSL kernels, launched on the current stream. rmsnorm_fwd, rstd stored,
  the weight offset inside the kernel; with --fused-add the residual given: the sum goes to a new tensor (the
  residual input stays as it is) and y normalizes the fp32 sum before its rounding to the dtype (half an ulp off
  the stored sum, inside the tolerance). layernorm_fwd, mean and rstd returned; it takes fp32 weight and bias
  only, so x's dtype's weight and bias are converted once when the point is built (the same values; in 16-bit
  dtypes it reads 4 bytes a column more than the programs count). The first call of each kernel (dtype, C,
  variant) JIT-compiles it, or loads it from QuACK's cache: that is the validation's call, before any timing.
  QuACK has no BatchNorm, and rmsnorm_fwd takes 2-D rows of unit stride, which the strided QK-norm view of q
  inside qkv is not without a copy (skip rows, the reason in the log);
- the backward ops (the programs' inputs: x, dy, the weight, LayerNorm's bias, which the ATen op takes, and the
  forward's saved statistics, fp32 [rows], from a float64 pass over x when the point is built; outputs dx, and
  dweight (LayerNorm: and dbias) in the weight's dtype; --accumulate: dx added into a buffer, reset before the
  validation): torch: aten.native_layer_norm_backward, aten._fused_rms_norm_backward (PyTorch >= 2.8, else skip
  rows; the weight offset added to the weight once when the point is built), called directly, not through
  autograd; torch.compile: the formula in fp32 (x̂, g = dy (w + offset), dx, the column sums), --accumulate's add
  fused into it; liger: layer_norm_backward, rms_norm_backward (casting mode gemma, fp32 math as the programs';
  in_place=False, so dy stays, its zeros_like dx timed with it; the offset inside the kernel), given the
  programs' fp32 statistics; quack: layernorm_bwd, rmsnorm_bwd (the offset inside the kernel; --accumulate fused:
  the buffer goes in as dresidual_out, the sum to a new dx). Where no add is fused, --accumulate is a dx.add_
  after the call (named in kernel_name). A function this version of a package lacks, or whose arguments
  (inspect.signature) peers.py cannot match, is a skip row with the reason. The check: dx on a sample of rows,
  dweight and dbias on every column, with the programs' allowance for a sum over the rows on top
  (harness/base.h sum_atol: (4 + 2 sqrt(rows)) 2^-24 sum |term|), and where --accumulate rounds the peer's dx
  before the add, that rounding (the dtype's unit roundoff x |dx|).
Rows go to DIR/<gpu-slug>/peers.csv, rewritten after every point (rows for the same op, peer and set of
points are replaced, others kept; a shape outside scripts/shapes.py's latency points counts as standard), with
`kernel` = the peer, `kernel_name` = the function it calls, and three columns after the programs' schema:
time_ms_launch_median, time_ms_launch_min, clock (cupti or events). A log goes to DIR/<gpu-slug>/peers.log, a
progress line per point to stderr. Without PyTorch (or without a CUDA device for it) it says so and exits 0
with no rows.

--set standard|latency|odd: only that set's points (an error where no op given has it: BatchNorm has no latency or
  odd set).
--points FILE: the points of FILE, one "DTYPE ARGS..." a line, of the one OP given (scripts/dispatch_sweep.py's
  random draws). --point "DTYPE ARGS...": only this point of the one OP given (the program's arguments, --hot included; the
  label is the program's shape string). --no-write: each row as one JSON object per line on stdout (the CSV's
  columns, numbers as numbers; then `launches`, [blocks, threads a block] of each kernel of a call as the timing's
  trace saw them, where it did), nothing written; the log goes to stderr.
--ncu-range N: no timing. Builds, compiles or warms up and validates the --point for one --peer, then runs N
  calls, each after a flush and alone between cudaProfilerStart and cudaProfilerStop (so
  `ncu --profile-from-start off` sees the peer's kernels only), prints `ncu-range: N calls of PEER OP DTYPE
  LABEL` and exits 0 (1 when the peer fails validation or cannot run the point). Cold points only: a --hot
  point is an error (exit 2).
"""
import collections
import contextlib
import csv
import json
import math
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import cli  # noqa: E402
import csvfile  # noqa: E402
import shapes as shapes_mod  # noqa: E402
from summary import CSV_FIELDS  # noqa: E402  (the programs' schema, its newer columns last: csvfile.NEWER)

# How write_csv prints the float columns (the JSON rows keep the numbers as they are)
CSV_FORMAT = {"time_ms_median": ".6f", "time_ms_min": ".6f", "time_ms_launch_median": ".6f",
              "time_ms_launch_min": ".6f", "gbps": ".2f", "sol_gbps": ".2f", "sol_pct": ".2f", "max_abs_err": ".3e",
              "max_rel_err": ".3e"}
PEERS = ["torch", "torch.compile", "liger", "quack"]
OPS = shapes_mod.FORWARD_OPS + shapes_mod.BACKWARD_OPS
DTYPE_SIZE = {"fp32": 4, "fp16": 2, "bf16": 2}
# The programs' tolerances (harness/base.h tolerance_for): atol = rtol
TOLERANCE = {"fp32": 1e-4, "fp16": 2e-3, "bf16": 1e-2}
# Unit roundoff of each dtype: the error of one rounding to it, relative (a peer that rounds dx before adding it)
UNIT_ROUNDOFF = {"fp32": 2.0 ** -24, "fp16": 2.0 ** -11, "bf16": 2.0 ** -8}
EPS = {"layernorm": 1e-5, "rmsnorm": 1e-6, "batchnorm": 1e-5, "layernorm_backward": 1e-5, "rmsnorm_backward": 1e-6}
SAMPLE_ROWS = 64


# ---------------------------------------------------------------------------------------------------------
# Pure Python: the problem a program's arguments describe, its byte count and label, the CSV, and the
# grouping of a profile's GPU activity into calls (tested in CI).

def positive_int(s):
    v = int(s)
    if v < 1:
        raise ValueError(s)
    return v


def layout(s):
    if s not in ("nc", "nchw", "nhwc"):
        raise ValueError(s)
    return s


# program argument -> (key of the problem dict, conversion of its value; None: a flag without a value)
PROGRAM_ARGS = {"-N": ("N", positive_int), "--rows": ("N", positive_int), "-C": ("C", positive_int),
                "--cols": ("C", positive_int), "--heads": ("heads", positive_int),
                "--head-dim": ("head_dim", positive_int), "--row-stride": ("row_stride", positive_int),
                "--fused-add": ("fused", None), "--weight-offset": ("offset", float), "--layout": ("layout", layout),
                "--height": ("H", positive_int), "--width": ("W", positive_int), "--inference": ("inference", None),
                "--momentum": ("momentum", float), "--eps": ("eps", float), "--hot": ("hot", None),
                "--accumulate": ("accumulate", None)}
COMMON_ARGS = {"-N", "--rows", "-C", "--cols", "--hot"}  # every program takes these
# the arguments each program takes besides COMMON_ARGS
OP_ARGS = {"layernorm": {"--eps"},
           "rmsnorm": {"--eps", "--fused-add", "--weight-offset", "--heads", "--head-dim", "--row-stride"},
           "batchnorm": {"--eps", "--layout", "--height", "--width", "--inference", "--momentum"},
           "layernorm_backward": {"--eps", "--accumulate"},
           "rmsnorm_backward": {"--eps", "--accumulate", "--weight-offset"}}


def parse_point(op, args):
    """The program's arguments (scripts/shapes.py) -> a dict describing the problem; ValueError (one line)
    for an argument the program would refuse or peers.py does not model."""
    p = {"op": op, "N": None, "C": None, "heads": None, "head_dim": None, "row_stride": None, "fused": False,
         "offset": 0.0, "layout": "nc", "H": None, "W": None, "inference": False, "momentum": 0.1, "eps": EPS[op],
         "hot": False, "accumulate": False}
    it = iter(args)
    for a in it:
        if a not in PROGRAM_ARGS or a not in OP_ARGS[op] | COMMON_ARGS:
            raise ValueError(f"peers.py does not know the {op} program argument '{a}'")
        key, conv = PROGRAM_ARGS[a]
        if conv is None:
            p[key] = True
            continue
        v = next(it, None)
        if v is None:
            raise ValueError(f"{a} needs a value")
        try:
            p[key] = conv(v)
        except ValueError:
            raise ValueError(f"invalid value '{v}' for {a}") from None
    if p["N"] is None:
        raise ValueError("the point needs -N")
    qk = p["heads"] is not None or p["head_dim"] is not None
    if qk:  # QK-norm: N = tokens, rows of the norm = tokens * heads
        if p["heads"] is None or p["head_dim"] is None:
            raise ValueError("QK-norm takes both --heads and --head-dim")
        if p["C"] is not None or p["fused"]:
            raise ValueError("-C and --fused-add do not apply in QK-norm mode")
        p["tokens"] = p["N"]
        p["S"] = p["row_stride"] or 3 * p["heads"] * p["head_dim"]
        if p["S"] < p["heads"] * p["head_dim"]:
            raise ValueError(f"--row-stride {p['S']} is smaller than heads x head-dim")
    else:
        if p["C"] is None:
            raise ValueError("the point needs -C")
        if p["row_stride"] is not None:
            raise ValueError("--row-stride needs --heads and --head-dim")
    if p["layout"] == "nc" and (p["H"] or p["W"]):
        raise ValueError("--height/--width need an image layout (--layout nchw or nhwc)")
    p["H"], p["W"] = p["H"] or 1, p["W"] or 1
    return p


def point_label(p):
    """The program's CSV shape string for a problem (keep in step with each program's shape strings): the shape,
    its options, and the timing mode's suffix (:hot) last."""
    return shape_string(p) + (":hot" if p["hot"] else "")


def shape_string(p):
    """The shape and options part of a point's label."""
    if p["op"] == "batchnorm":
        mode = ":inf" if p["inference"] else ""
        if p["layout"] == "nc":
            return f"{p['N']}x{p['C']}{mode}"
        return f"{p['N']}x{p['C']}x{p['H']}x{p['W']}:{p['layout']}{mode}"
    if p["op"] in shapes_mod.BACKWARD_OPS:  # the backward programs print ":off" (any offset), then ":acc"
        return f"{p['N']}x{p['C']}{':off' if p['offset'] else ''}{':acc' if p['accumulate'] else ''}"
    off = f":off{p['offset']:g}" if p["offset"] else ""  # the programs print it with %g
    if p["heads"] is not None:
        return f"{p['tokens']}x{p['heads']}x{p['head_dim']}:s{p['S']}{off}"
    return f"{p['N']}x{p['C']}{':add' if p['fused'] else ''}{off}"


def sweep(ops, quick=False, sets=None):
    """[(op, dtype, program arguments, label)] of the ops' points (scripts/shapes.py): each op's default point
    (quick), or the points of the named sets of shapes.SETS (None: every set an op has); not the programs'
    --pdl points (a launch the peers do not have), nor the programs' own sets (shapes.PROGRAMS_ONLY)."""
    sets = [s for s in (sets or shapes_mod.SETS) if s not in shapes_mod.PROGRAMS_ONLY]
    return [(op, d, args, label) for op in ops for d, args, label in (shapes_mod.points(op, quick, sets) if sets else [])
            if "--pdl" not in args]


def parse_point_option(op, text):
    """--point "DTYPE ARGS..." -> (dtype, program arguments, label); ValueError (one line) when malformed."""
    words = shlex.split(text)
    if not words or words[0] not in DTYPE_SIZE:
        raise ValueError(f"the dtype ({', '.join(DTYPE_SIZE)}) comes first, got '{text}'")
    return words[0], words[1:], point_label(parse_point(op, words[1:]))


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
    if op in shapes_mod.BACKWARD_OPS:  # x, dy read, dx written (and read: --accumulate); weight read, dweight
        # (LayerNorm: and dbias) written; the saved statistics read (fp32: LayerNorm mean and rstd, RMSNorm rstd)
        n, c, tensors = p["N"], p["C"], 3 + (1 if p["accumulate"] else 0)
        if op == "layernorm_backward":
            return tensors * n * c * es + 3 * c * es + 2 * n * 4
        return tensors * n * c * es + 2 * c * es + n * 4
    raise KeyError(op)


def sum_atol(n, abs_sum):
    """The programs' allowance for a sum over n rows accumulated in fp32 (harness/base.h sum_atol), on top of the
    dtype's tolerance: (4 + 2 sqrt(n)) 2^-24 abs_sum, abs_sum = the reference's sum of |term| (a number or a
    tensor of them, one a column)."""
    return (4.0 + 2.0 * math.sqrt(n)) * 2.0 ** -24 * abs_sum


def row_chunks(n, c, elements=1 << 25):
    """Slices of rows [0, n) of about `elements` elements each (at least one row): a float64 pass over all the rows
    of a large point one chunk at a time, so that its temporaries stay a few hundred MB."""
    step = max(1, elements // max(1, c))
    return [slice(i, min(n, i + step)) for i in range(0, n, step)]


def peer_function(peer, op, p):
    """The kernel_name of a peer row (the function the point calls), or None where the peer cannot run the point
    (skip_reason says why)."""
    if op in shapes_mod.BACKWARD_OPS:
        return backward_function(peer, op, p)
    if peer == "quack":
        if op == "layernorm":
            return "quack.layernorm_fwd (fp32 weight and bias)"
        if op == "rmsnorm" and p["heads"] is None:
            return "quack.rmsnorm_fwd" + (" (residual)" if p["fused"] else "")
        return None
    if peer == "liger":
        if op == "layernorm":
            return "layer_norm_forward"
        if op == "rmsnorm":
            if p["fused"]:
                return "LigerFusedAddRMSNormFunction"
            return "LigerRMSNormFunction" + (" (its q.contiguous() copy included)" if p["heads"] is not None else "")
        return None
    if op == "layernorm":
        return "torch.native_layer_norm"
    if op == "rmsnorm":
        return "add_+F.rms_norm" if p["fused"] else "F.rms_norm"
    return "F.batch_norm"


def backward_function(peer, op, p):
    """peer_function of the backward ops: every peer has a function for every point (one this version of its
    package lacks, or whose signature peers.py cannot match, is found out at run time: PeerCannot, the reason in
    the skip row's log); the name says where the weight offset and --accumulate's add go."""
    ln = op == "layernorm_backward"
    acc = " + dx.add_ (accumulate)" if p["accumulate"] else ""  # the peer's dx added into the buffer after it
    if peer == "torch":
        if ln:
            return "aten.native_layer_norm_backward" + acc
        return "aten._fused_rms_norm_backward" + (" (weight + offset precomputed)" if p["offset"] else "") + acc
    if peer == "torch.compile":
        return ("fp32 formula" + (" (weight + offset)" if p["offset"] else "")
                + (" + dx accumulate fused" if p["accumulate"] else ""))
    if peer == "liger":
        if ln:
            return "layer_norm_backward" + acc
        return "rms_norm_backward (casting gemma: fp32 math; in_place=False)" + acc
    if ln:
        return "quack.layernorm_bwd" + acc
    return "quack.rmsnorm_bwd" + (" (accumulate fused: dresidual_out)" if p["accumulate"] else "")


class PeerCannot(RuntimeError):
    """A peer that cannot run a point, found out when the point is built: its package's version lacks the function,
    or takes other arguments (the message: the reason, one line; the point is a skip row)."""


def call_args(fn, name, known, need=None):
    """(positional, keyword) arguments of fn from its signature (inspect.signature, for a function whose arguments
    differ between versions of its package): each parameter it has whose name is in `known` gets that value,
    one it has that `known` lacks must have a default; a name of `known` it has not is left out, unless `need`
    (name -> the reason, one line) names it. PeerCannot (the reason) otherwise."""
    import inspect
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError) as e:
        raise PeerCannot(f"{name} has no signature to read ({one_line(e)})") from None
    for key, why in (need or {}).items():
        if key not in params:
            raise PeerCannot(why)
    args, kwargs = [], {}
    for key, prm in params.items():
        if prm.kind in (prm.VAR_POSITIONAL, prm.VAR_KEYWORD):
            continue
        if key not in known:
            if prm.default is prm.empty:
                raise PeerCannot(f"{name} takes an argument peers.py does not know: {key}")
            continue
        if prm.kind == prm.POSITIONAL_ONLY:
            if len(args) != list(params).index(key):  # a positional-only one after one left to its default
                raise PeerCannot(f"{name}: its positional-only argument {key} follows one peers.py leaves out")
            args.append(known[key])
        else:
            kwargs[key] = known[key]
    return args, kwargs


def skip_reason(peer, op, p):
    """Why peer_function has no function for the point (one line)."""
    if peer == "quack" and op == "rmsnorm" and p["heads"] is not None:
        return ("QuACK's rmsnorm_fwd takes 2-D rows of unit stride: the strided QK-norm view of q inside qkv is not "
                "one without a copy")
    return f"{peer} has no {op}"


def slugify(name):
    import run_all  # the same slug as the programs' results folder
    return run_all.slugify(name)


def point_set(op, label):
    """The set of scripts/shapes.py (shapes.SETS) a row's shape belongs to: "latency", "tune" or "odd" for the op's
    latency, tuning or odd points, "standard" for every other shape."""
    if label in shapes_mod.latency_labels(op):
        return "latency"
    if label in shapes_mod.tune_labels(op):
        return "tune"
    return "odd" if label in shapes_mod.odd_labels(op) else "standard"


def merge_rows(old_rows, new_rows):
    """Keep old rows except those of an (op, kernel, set of points) the new rows cover; new rows appended."""
    def key(r):
        return r["op"], r["kernel"], point_set(r["op"], r["shape"])
    covered = {key(r) for r in new_rows}
    return [r for r in old_rows if key(r) not in covered] + list(new_rows)


def write_csv(path, rows):
    """Rows as measured (numbers) or as read back (strings; older files lack the last columns: empty)."""
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=CSV_FIELDS)
        w.writeheader()
        for r in rows:
            w.writerow({k: format(r[k], CSV_FORMAT[k]) if isinstance(r.get(k), float) and k in CSV_FORMAT
                        else r.get(k, "") for k in CSV_FIELDS})


def read_csv(path):
    if not os.path.exists(path):
        return []
    return csvfile.read(path, kernel_numbers=False)


def json_row(r):
    """A row as one JSON line (--no-write): the CSV's columns in its order, null where a value is missing; then,
    where the timing saw them, "launches": [blocks, threads a block] of each kernel of a call, in order (what
    scripts/ncu_check.py compares with the kernels Nsight Compute profiles)."""
    out = {k: r.get(k) for k in CSV_FIELDS}
    if r.get("launches"):
        out["launches"] = r["launches"]
    return json.dumps(out)


GPU_ACTIVITY = ("kernel", "gpu_memcpy", "gpu_memset")


class NoGpuActivity(RuntimeError):
    """The profile holds no GPU activity: CUPTI is unavailable or held by another profiler."""


class TraceError(ValueError):
    """The profile's GPU activity does not split into the timed loop's calls (or graph replays)."""


def gpu_activities(trace):
    """[(start_us, end_us, stream, name, launch)] of a Kineto chrome trace's GPU work (kernels, copies, memsets), by
    start; launch = (blocks, threads a block) where the event's args give its grid and block (kernels), else None.
    Everything else is left out: CPU ops, runtime calls, flow arrows, and the GPU-side images of annotations
    ("gpu_user_annotation"), which lie on a stream's row but span its kernels instead of being work."""
    events = trace.get("traceEvents", []) if isinstance(trace, dict) else trace
    acts = []
    for e in events:
        if e.get("ph") != "X" or str(e.get("cat", "")).lower() not in GPU_ACTIVITY:
            continue
        start, args = float(e["ts"]), e.get("args") or {}
        launch = None
        if isinstance(args.get("grid"), list) and isinstance(args.get("block"), list):
            launch = (math.prod(args["grid"]), math.prod(args["block"]))
        acts.append((start, start + float(e.get("dur", 0)), args.get("stream", e.get("tid")), e.get("name", "?"),
                     launch))
    return sorted(acts, key=lambda a: (a[0], a[1]))


def kernel_windows(trace, repeats):
    """(ms per call, (name, launch) of the first call's GPU activities) from the trace of Bench's timed loop: `repeats`
    times a flush on a side stream, then the call on its own stream, one after the other on the GPU.
    The grouping needs no kernel names:
    - the side stream is the stream of the first GPU activity (the loop starts with a flush on an idle GPU);
    - its activities split, in order, into `repeats` flushes of equally many activities;
    - call i = the activities of the only other stream that start between the end of flush i and the start of
      flush i + 1 (the last call: after the last flush);
    - a call's time = its last activity's end - its first activity's start (gaps between its kernels count).
    NoGpuActivity when the trace has no GPU activity; TraceError when it does not split that way (each call
    must have at least one activity, and all the same number)."""
    acts = gpu_activities(trace)
    if not acts:
        raise NoGpuActivity("the profiler recorded no GPU activity (CUPTI unavailable or held by another profiler)")
    side = acts[0][2]
    others = {a[2] for a in acts} - {side}
    if len(others) != 1:
        raise TraceError(f"GPU activity on {len(others)} streams besides the flush's: expected the call's one")
    flush = [a for a in acts if a[2] == side]
    if len(flush) % repeats:
        raise TraceError(f"{len(flush)} flush activities do not split into {repeats} flushes")
    k = len(flush) // repeats
    bounds = [(flush[i * k][0], max(a[1] for a in flush[i * k:(i + 1) * k])) for i in range(repeats)]
    call = [a for a in acts if a[2] != side]
    calls = []
    for i in range(repeats):
        after = bounds[i][1]
        before = bounds[i + 1][0] if i + 1 < repeats else float("inf")
        calls.append([a for a in call if after <= a[0] < before])
    counts = sorted(len(c) for c in calls)
    if sum(counts) != len(call):
        raise TraceError(f"{len(call) - sum(counts)} of the call's GPU activities overlap a flush "
                         "(the two streams were not serialized)")
    if counts[0] == 0 or counts[0] != counts[-1]:
        raise TraceError(f"the calls hold {counts[0]} to {counts[-1]} GPU activities (expected the same number, "
                         "at least one)")
    return [(max(a[1] for a in c) - c[0][0]) / 1e3 for c in calls], [(a[3], a[4]) for a in calls[0]]


def replay_windows(trace, replays, launches):
    """(ms per launch, (name, launch) of one launch's GPU activities) from the trace of Bench's hot loop: `replays`
    replays, back to back and with no other GPU work, of a CUDA graph of `launches` captured calls. The grouping:
    - all GPU activity is on one stream (the one the graph is replayed on);
    - in start order it splits into `replays` runs of equally many activities, each the same sequence of names
      (a graph runs the same work every replay), a multiple of `launches` (one launch's activities, K times);
    - a replay's time = its last activity's end - its first activity's start; per launch: that / `launches`.
    NoGpuActivity when the trace has no GPU activity; TraceError when it does not split that way."""
    acts = gpu_activities(trace)
    if not acts:
        raise NoGpuActivity("the profiler recorded no GPU activity (CUPTI unavailable or held by another profiler)")
    streams = {a[2] for a in acts}
    if len(streams) != 1:
        raise TraceError(f"GPU activity on {len(streams)} streams: expected the graph's replays on one")
    if len(acts) % replays:
        raise TraceError(f"{len(acts)} GPU activities do not split into {replays} replays of equally many")
    n = len(acts) // replays
    if n % launches:
        raise TraceError(f"a replay holds {n} GPU activities, not a multiple of its {launches} launches")
    runs = [acts[i * n:(i + 1) * n] for i in range(replays)]
    names = [a[3] for a in runs[0]]
    for i, run in enumerate(runs[1:], 2):
        if [a[3] for a in run] != names:
            raise TraceError(f"replay {i} runs other GPU activities than replay 1 (the trace does not split into "
                             "the replays)")
    return [(max(a[1] for a in r) - r[0][0]) / 1e3 / launches for r in runs], [(a[3], a[4]) for a in runs[0][:n // launches]]


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

# activities: (name, launch) of a call's GPU work, launch = (blocks, threads a block) of a kernel, else None
Timing = collections.namedtuple("Timing", "ms ms_min launch_ms launch_min clock activities")
# torch.cuda._sleep counts GPU cycles: at 2 GHz (about an H100's or H200's boost clock) a hold of t seconds is at
# least t on a GPU of that clock or slower, which is all it needs to be
HOLD_CLOCK_HZ = 2.0e9
HOT_LAUNCHES = 32  # K: the calls a hot point's CUDA graph holds (the programs' --hot)


class CaptureError(RuntimeError):
    """A peer's call cannot be captured in a CUDA graph (hot points)."""


class Bench:
    """Timing as in common.h. Cold L2: flush (write 2 x L2, read 3 x L2) before each call; hot L2 (--hot): K calls
    captured in one CUDA graph, replayed back to back. The time from the GPU activity's CUPTI timestamps
    (torch.profiler), CUDA events for the "with launch" figure."""

    def __init__(self, torch, device):
        self.torch = torch
        self.device = device
        props = torch.cuda.get_device_properties(device)
        l2 = getattr(props, "L2_cache_size", 0) or (64 << 20)
        self.flush_w = torch.empty(2 * l2 // 4, dtype=torch.int32, device=device)
        self.flush_r = torch.zeros(3 * l2 // 4, dtype=torch.int32, device=device)
        self.side = torch.cuda.Stream(device)  # the flushes' stream: its activity marks the calls in the trace
        self.hold_cycles = 0  # GPU cycles the side stream sleeps before each flush (time)
        self.counter = 0
        self.clock = "cupti"  # "events" once the profiler has recorded no GPU activity
        self.profiler_ran = False  # whether torch.profiler has run in this process (CUPTI attached)
        self.copies = {}  # (byte count, mode, clock) -> copy GB/s: measured once per process, shared by the peers

    def flush(self):
        self.counter += 1
        self.flush_w.fill_(self.counter)
        self.flush_r.max()  # reads every line; the result is discarded

    def _events(self):
        return self.torch.cuda.Event(enable_timing=True), self.torch.cuda.Event(enable_timing=True)

    def _flushed_call(self, fn, e0, e1):
        """The flush on the side stream, then the call on the current one, kept in that order on the GPU by
        stream waits (and the next flush after the call); events around the call on its stream. Before the
        flush the side stream sleeps for hold_cycles, so that the CPU is ahead of the GPU when the call runs:
        a call of several kernels whose Python side takes longer than the flush would otherwise leave the GPU
        waiting between its kernels, and the window would time the CPU."""
        torch = self.torch
        peer = torch.cuda.current_stream()
        self.side.wait_stream(peer)
        with torch.cuda.stream(self.side):
            if self.hold_cycles:
                torch.cuda._sleep(self.hold_cycles)
            self.flush()
        peer.wait_stream(self.side)
        e0.record(peer)
        fn()
        e1.record(peer)

    def time(self, fn, repeats=0):
        """Cold L2: each call after a flush (_flushed_call), timed by kernel_windows."""
        torch = self.torch
        fn()  # warm-up: first-call work (JIT compilation, allocations, library plans) stays out of the timing
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()  # the second warm-up gives the call's CPU time: hold the GPU back three times that, plus 50 us
        host_s = time.perf_counter() - t0
        torch.cuda.synchronize()
        self.hold_cycles = int(min(3 * host_s + 50e-6, 5e-3) * HOLD_CLOCK_HZ)
        return self._timed(lambda e0, e1: self._flushed_call(fn, e0, e1), repeats, kernel_windows)

    def time_hot(self, fn, repeats=0):
        """Hot L2 (the programs' --hot): fn() captured HOT_LAUNCHES times in one CUDA graph (_graph), the graph
        replayed back to back with no flush, 3 warm-up replays first; a call's time = a replay's GPU window /
        HOT_LAUNCHES (replay_windows), "with launch" = the events around a replay / HOT_LAUNCHES."""
        torch = self.torch
        graph = self._graph(fn)
        stream = torch.cuda.current_stream()  # where replay() launches the graph

        def replay(e0, e1):
            e0.record(stream)
            graph.replay()
            e1.record(stream)

        for _ in range(3):  # warm-up: the graph's upload and first replays stay out of the timing
            graph.replay()
        torch.cuda.synchronize()
        return self._timed(replay, repeats, lambda trace, n: replay_windows(trace, n, HOT_LAUNCHES), HOT_LAUNCHES)

    def _graph(self, fn):
        """A CUDA graph of HOT_LAUNCHES calls of fn, captured after 3 calls on the side stream (capture needs its
        warm-up off the capturing stream: lazy initialization cannot be captured). CaptureError, one line, when
        the calls cannot be captured."""
        torch = self.torch
        if not self.profiler_ran and self.clock == "cupti":
            self._profiled(lambda: None)  # CUPTI attached before the first graph exists (pytorch/pytorch#75504)
        self.side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.side):
            for _ in range(3):
                fn()
        torch.cuda.current_stream().wait_stream(self.side)
        torch.cuda.synchronize()
        graph, failure = torch.cuda.CUDAGraph(), None
        try:
            with torch.cuda.graph(graph):
                try:
                    for _ in range(HOT_LAUNCHES):
                        fn()
                except Exception as e:  # an operation that capture forbids (a sync, a host read ...): the cause,
                    failure = e  # kept: ending the invalidated capture raises an error of its own after it
        except Exception as e:
            failure = failure or e
        if failure is not None:
            raise CaptureError(f"cannot be captured in a CUDA graph: {one_line(failure)}") from failure
        return graph

    def _timed(self, step, repeats, windows, per=1):
        """Timing of step(e0, e1) (a call or a replay, between events): `repeats` of them, 0 for about 100 ms of
        work (10..200, from the fastest of 3 timed alone with the events), run back to back under the profiler;
        windows(trace, repeats) -> (ms each, (name, launch) of a call's activities); the events' times divided by
        per."""
        torch = self.torch
        if repeats <= 0:
            est = 1e30
            for _ in range(3):
                e0, e1 = self._events()
                step(e0, e1)
                e1.synchronize()
                est = min(est, e0.elapsed_time(e1))
            repeats = min(200, max(10, int(100.0 / max(est, 1e-4))))
        ev = [self._events() for _ in range(repeats)]

        def loop():
            for e0, e1 in ev:
                step(e0, e1)
            torch.cuda.synchronize()  # inside the profile: every activity has ended before it stops

        win, acts = None, []
        if self.clock == "cupti":
            trace = self._profiled(loop)
            try:
                win, acts = windows(trace, repeats)
            except NoGpuActivity as e:
                self.clock = "events"
                print(f"peers: {e}: timing with CUDA events from here on (clock 'events')", file=sys.stderr)
        else:
            loop()
        launch = sorted(e0.elapsed_time(e1) / per for e0, e1 in ev)
        kernel = sorted(win) if win is not None else launch
        return Timing(statistics.median(kernel), kernel[0], statistics.median(launch), launch[0], self.clock, acts)

    def _profiled(self, loop):
        """Runs loop() under torch.profiler (its CUDA activity is CUPTI's) and returns the chrome trace."""
        from torch.profiler import ProfilerActivity, profile
        self.profiler_ran = True
        with warnings.catch_warnings():
            # torch 2.11 warns that events are cleared "at the end of each cycle" also without cycles (fixed later)
            warnings.filterwarnings("ignore", message=".*Profiler clears events at the end of each cycle")
            with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
                loop()
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "trace.json")
            prof.export_chrome_trace(path)
            with open(path) as f:
                return json.load(f)

    def copy_gbps(self, nbytes, hot=False):
        """(GB/s, clock) of the device-to-device copy of nbytes (half read, half written): the faster of
        cudaMemcpyAsync (Tensor.copy_) and an elementwise kernel that moves the same bytes (int32 x + 0), as
        the programs take the fastest of cudaMemcpyAsync and their copy kernels (on the kernel clock the memcpy
        carries a fixed ~2 us that a 25 MB copy feels); cold, or hot (each captured HOT_LAUNCHES times in a
        graph and timed per launch, as time_hot times the peers). Once per byte count, mode and clock."""
        mode = "hot" if hot else "cold"
        if (nbytes, mode, self.clock) not in self.copies:
            torch = self.torch
            timed = self.time_hot if hot else self.time
            half = (int(nbytes // 2) + 15) // 16 * 16
            src = torch.full((half // 4,), 0x3C3C3C3C, dtype=torch.int32, device=self.device)
            dst = torch.empty_like(src)
            ms = min(timed(lambda: dst.copy_(src)).ms, timed(lambda: torch.add(src, 0, out=dst)).ms)
            self.copies[(nbytes, mode, self.clock)] = 2.0 * half / (ms * 1e-3) / 1e9
            del src, dst
        return self.copies[(nbytes, mode, self.clock)], self.clock


def torch_dtype(torch, dtype):
    return {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[dtype]


def load_liger():
    """Liger-Kernel's forward entry points, from their own modules: those always hold the Triton kernels, while
    the liger_kernel.ops namespace may swap in another backend's. An import failure propagates (the caller
    makes every liger point a skip)."""
    import importlib.metadata
    import types
    import liger_kernel.ops.layer_norm as liger_layer_norm
    import liger_kernel.ops.rms_norm as liger_rms_norm
    from liger_kernel.ops.fused_add_rms_norm import LigerFusedAddRMSNormFunction
    from liger_kernel.ops.layer_norm import layer_norm_forward
    from liger_kernel.ops.rms_norm import LigerRMSNormFunction
    try:
        from liger_kernel.ops.utils import calculate_settings  # the backward's BLOCK_SIZE and num_warps
    except ImportError:
        calculate_settings = None
    try:
        version = importlib.metadata.version("liger_kernel")
    except importlib.metadata.PackageNotFoundError:  # imported from a source tree
        version = "unknown"
    # The backward ops' entry points, None where this version has none (the point is then a skip, the reason said)
    return types.SimpleNamespace(version=version,
                                 layer_norm_forward=layer_norm_forward, LigerRMSNormFunction=LigerRMSNormFunction,
                                 LigerFusedAddRMSNormFunction=LigerFusedAddRMSNormFunction,
                                 layer_norm_backward=getattr(liger_layer_norm, "layer_norm_backward", None),
                                 rms_norm_backward=getattr(liger_rms_norm, "rms_norm_backward", None),
                                 casting_modes=getattr(liger_rms_norm, "_str_to_casting_mode", None),
                                 calculate_settings=calculate_settings)


def load_quack():
    """QuACK's entry points (quack.rmsnorm: rmsnorm_fwd, layernorm_fwd; the backward's rmsnorm_bwd and layernorm_bwd,
    None where this version has none). An import failure propagates (the caller makes every quack point a skip)."""
    import importlib.metadata
    import types
    # Before tvm_ffi is imported (QuACK's kernels launch through it): the torch-c-dlpack extension it would load
    # or JIT-build at import is not built for this torch. Without it tvm_ffi converts tensors through torch's own
    # DLPack and takes the stream from torch's current one, so the launches still go where the caller's go.
    os.environ.setdefault("TVM_FFI_DISABLE_TORCH_C_DLPACK", "1")
    import quack.rmsnorm as quack_rmsnorm
    from quack.rmsnorm import layernorm_fwd, rmsnorm_fwd
    try:
        version = importlib.metadata.version("quack-kernels")
    except importlib.metadata.PackageNotFoundError:  # imported from a source tree
        version = "unknown"
    return types.SimpleNamespace(version=version, rmsnorm_fwd=rmsnorm_fwd, layernorm_fwd=layernorm_fwd,
                                 rmsnorm_bwd=getattr(quack_rmsnorm, "rmsnorm_bwd", None),
                                 layernorm_bwd=getattr(quack_rmsnorm, "layernorm_bwd", None))


# The peers from packages of their own: the package's name and its loader. Where one does not import, every point
# of that peer is a skip row.
OPTIONAL_PEERS = {"liger": ("Liger-Kernel", load_liger), "quack": ("QuACK", load_quack)}


def build_case(torch, F, p, dtype, device, seed=1234, liger=None, quack=None, formula=False):
    """(inputs, fn(inputs) -> outputs dict, reset(inputs), check(inputs, outputs) -> (max_abs, max_rel, n_bad)).
    fn calls PyTorch, or Liger-Kernel where `liger` (load_liger()) is given: forward only, under no_grad;
    its launches go to the current stream, and its first call compiles its Triton kernel (no autotuning).
    Or QuACK where `quack` (load_quack()) is given: its launches go to the current stream too, and its first
    call compiles its CuTe-DSL kernel (or loads it from QuACK's cache). The backward ops: backward_case (formula:
    fn is the formula in fp32, what torch.compile compiles, instead of the ATen op)."""
    g = torch.Generator(device=device)
    g.manual_seed(seed)
    dt = torch_dtype(torch, dtype)
    tol = TOLERANCE[dtype]
    op, eps = p["op"], p["eps"]

    def randn(*shape, dtype=dt):
        return torch.randn(*shape, generator=g, device=device, dtype=torch.float32).to(dtype)

    def compare(got, ref, extra=0.0):  # extra: an allowance on top (a number, or one an element)
        got = got.double()
        err = (got - ref).abs()
        bad = int((~(err <= tol + tol * ref.abs() + extra)).sum())  # NaN counts as bad
        rel = (err / ref.abs().clamp_min(1e-30))
        return float(err.max()), float(rel.max()), bad

    def merge(*checks):
        return (max(c[0] for c in checks), max(c[1] for c in checks), sum(c[2] for c in checks))

    if op in shapes_mod.BACKWARD_OPS:
        return backward_case(torch, p, dtype, device, g, randn, compare, merge, liger, quack, formula)
    if op == "layernorm":
        n, c = p["N"], p["C"]
        t = {"x": randn(n, c), "w": randn(c), "b": randn(c)}
        if quack:  # it takes fp32 weight and bias only (it asserts): the same values, converted here, not in the call
            t["w"], t["b"] = t["w"].float(), t["b"].float()

        if liger:
            @torch.no_grad()
            def fn(t):  # what LigerLayerNormFunction.forward runs; it also returns mean and rstd (fp32)
                y, _x, mean, rstd, _block, _warps = liger.layer_norm_forward(t["x"], t["w"], t["b"], eps)
                return {"y": y, "mean": mean, "rstd": rstd}
        elif quack:
            def fn(t):
                y, rstd, mean = quack.layernorm_fwd(t["x"], t["w"], t["b"], eps=eps, return_rstd=True,
                                                    return_mean=True)
                return {"y": y, "mean": mean, "rstd": rstd}
        else:
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

            def q_view(t):  # the strided view, as the program reads it
                return t["qkv"][:, : H * D].unflatten(-1, (H, D))

            if liger:  # (no QuACK here: peer_function has none for the strided view)
                @torch.no_grad()
                def fn(t):  # its forward is wrapped in ensure_contiguous: q is copied first
                    return {"y": liger.LigerRMSNormFunction.apply(q_view(t), t["w"], eps, off)}
            else:
                def fn(t):
                    w = t["w"] + off if off else t["w"]
                    return {"y": F.rms_norm(q_view(t), (D,), w, eps)}

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

        if liger and p["fused"]:
            @torch.no_grad()
            def fn(t):  # the sum goes to a new tensor (the residual input stays as it is); in_place is backward's
                y, s = liger.LigerFusedAddRMSNormFunction.apply(t["x"], t["res"], t["w"], eps, off)
                return {"y": y, "res": s}
        elif liger:
            @torch.no_grad()
            def fn(t):  # in_place (default True) only lets backward overwrite dY: nothing in the forward
                return {"y": liger.LigerRMSNormFunction.apply(t["x"], t["w"], eps, off)}
        elif quack and p["fused"]:
            def fn(t):  # the sum goes to a new tensor (the residual input stays as it is)
                y, s, rstd = quack.rmsnorm_fwd(t["x"], t["w"], residual=t["res"], eps=eps, store_rstd=True,
                                               weight_offset=off)
                return {"y": y, "res": s, "rstd": rstd}
        elif quack:
            def fn(t):
                y, _x, rstd = quack.rmsnorm_fwd(t["x"], t["w"], eps=eps, store_rstd=True, weight_offset=off)
                return {"y": y, "rstd": rstd}
        else:
            def fn(t):
                w = t["w"] + off if off else t["w"]
                if p["fused"]:
                    t["res"].add_(t["x"])  # the pre-norm step: residual += x in the dtype, then normalize it
                    return {"y": F.rms_norm(t["res"], (c,), w, eps), "res": t["res"]}
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
                checks.append(compare(o["res"][idx], r.double()))
                # y: the norm of the rounded sum. QuACK normalizes the fp32 sum, up to half an ulp of the dtype
                # away (bf16: 0.4%, with y's own rounding 0.8%, inside the 1% tolerance; fp32: the same sum)
                x = r.double()
            rs = 1.0 / torch.sqrt((x * x).mean(-1, keepdim=True) + eps)
            checks.append(compare(o["y"][idx], x * rs * (t["w"].double() + off)))
            if "rstd" in o:  # where the peer returns it (QuACK)
                checks.append(compare(o["rstd"].reshape(n, -1)[idx], rs))
            return merge(*checks)

        return t, fn, reset, check

    # batchnorm (PyTorch only: peer_function has no Liger or QuACK BatchNorm)
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


def backward_case(torch, p, dtype, device, g, randn, compare, merge, liger=None, quack=None, formula=False):
    """build_case of the backward ops (layernorm_backward, rmsnorm_backward): the programs' inputs x, dy, the weight
    (LayerNorm: and the bias the ATen op takes) in the dtype and the forward's saved statistics of x (rstd, LayerNorm
    also mean: fp32 [rows], from a float64 pass over x, as the programs make them), built here outside any timing;
    --accumulate: the buffer dx starts as dx0 (reset copies it back). fn -> {"dx", "dw"(, "db")}: PyTorch's ATen op,
    the formula in fp32 (formula: what torch.compile compiles), Liger-Kernel's or QuACK's backward function (their
    arguments from the function's signature: PeerCannot, the reason, where this version's cannot be matched). check:
    dx on a sample of rows, dw and db on every column, each against float64 with the dtype's tolerance, and for the
    column sums the programs' allowance for a sum over the rows (sum_atol) on top; with --accumulate, a peer that
    rounds its dx to the dtype before the add (every one but torch.compile and QuACK's RMSNorm, which fuse it) is
    allowed that rounding too (UNIT_ROUNDOFF |dx|)."""
    n, c, eps, off, acc = p["N"], p["C"], p["eps"], p["offset"], p["accumulate"]
    ln = p["op"] == "layernorm_backward"
    dt = torch_dtype(torch, dtype)
    t = {"x": randn(n, c), "w": randn(c), "dy": randn(n, c)}
    if ln:
        t["b"] = randn(c)  # the ATen op takes it; dbias does not read it
    # the forward's saved statistics: in float64 from the dtype's x, rounded to fp32 (mean: LayerNorm's)
    t["rstd"] = torch.empty(n, dtype=torch.float32, device=device)
    if ln:
        t["mean"] = torch.empty(n, dtype=torch.float32, device=device)
    for rows in row_chunks(n, c):
        xd = t["x"][rows].double()
        if ln:
            m = xd.mean(-1, keepdim=True)
            t["mean"][rows] = m[:, 0].float()
            var = ((xd - m) ** 2).mean(-1)
        else:
            var = (xd * xd).mean(-1)
        t["rstd"][rows] = (1.0 / torch.sqrt(var + eps)).float()
    t["rstd2"] = t["rstd"].view(n, 1)  # as the ATen ops take them: [rows, 1], the forward's shape
    if ln:
        t["mean2"] = t["mean"].view(n, 1)
    if acc:
        t["dx0"] = randn(n, c)
        t["dx"] = t["dx0"].clone()
    w_ref = t["w"].double() + off  # the weight the reference applies (torch's eager RMSNorm: its w + offset)
    rounds = acc  # whether the peer's dx is rounded to the dtype before the add into the buffer

    def finish(t, dx, out):  # --accumulate: the peer's dx added into the buffer (a second rounding)
        if acc:
            t["dx"].add_(dx)
            dx = t["dx"]
        out["dx"] = dx
        return out

    if formula:
        rounds = False

        def fn(t):  # fp32 math, the outputs rounded once to the dtype; --accumulate: the add fused
            x, dy, rs = t["x"].float(), t["dy"].float(), t["rstd"].view(n, 1)
            if ln:
                xh = (x - t["mean"].view(n, 1)) * rs
                gw = dy * t["w"].float()
                dx = rs * (gw - gw.mean(-1, keepdim=True) - xh * (gw * xh).mean(-1, keepdim=True))
            else:
                xh = x * rs
                gw = dy * (t["w"].float() + off if off else t["w"].float())
                dx = rs * (gw - xh * (gw * xh).mean(-1, keepdim=True))
            out = {"dw": (dy * xh).sum(0).to(dt)}
            if ln:
                out["db"] = dy.sum(0).to(dt)
            if acc:
                t["dx"].copy_(t["dx"].float() + dx)
                out["dx"] = t["dx"]
            else:
                out["dx"] = dx.to(dt)
            return out
    elif liger and ln:
        bwd = liger.layer_norm_backward
        if bwd is None:
            raise PeerCannot("this Liger-Kernel has no layer_norm_backward (liger_kernel.ops.layer_norm)")
        # the programs' fp32 statistics, [rows] (its kernel loads them in their own dtype; its forward's are x's)
        args, kw = call_args(bwd, "Liger's layer_norm_backward", {"dY": t["dy"], "X": t["x"], "W": t["w"],
                                                                  "B": t["b"], "Mean": t["mean"], "RSTD": t["rstd"]})

        def fn(t):
            r = bwd(*args, **kw)
            return finish(t, r[0], {"dw": r[1], "db": r[2]})
    elif liger:
        bwd, modes, settings = liger.rms_norm_backward, liger.casting_modes, liger.calculate_settings
        if bwd is None:
            raise PeerCannot("this Liger-Kernel has no rms_norm_backward (liger_kernel.ops.rms_norm)")
        if not isinstance(modes, dict) or "gemma" not in modes or settings is None:
            raise PeerCannot("this Liger-Kernel has no casting mode 'gemma' (_str_to_casting_mode) or no "
                             "calculate_settings: rms_norm_backward's arguments cannot be made")
        block, warps = settings(c)
        need = {"in_place": "this Liger-Kernel's rms_norm_backward has no in_place argument: it writes dx into dy",
                "casting_mode": "this Liger-Kernel's rms_norm_backward has no casting_mode: no fp32 math"}
        if off:
            need["offset"] = "this Liger-Kernel's rms_norm_backward has no weight offset"
        args, kw = call_args(bwd, "Liger's rms_norm_backward",
                             {"dY": t["dy"], "X": t["x"], "W": t["w"], "RSTD": t["rstd"], "offset": float(off),
                              "casting_mode": modes["gemma"], "BLOCK_SIZE": block, "num_warps": warps,
                              "in_place": False, "row_mode": None}, need)

        def fn(t):  # casting mode gemma: fp32 math (its default, llama, rounds x̂ to the dtype for dweight)
            r = bwd(*args, **kw)
            return finish(t, r[0], {"dw": r[1]})
    elif quack and ln:
        bwd = quack.layernorm_bwd
        if bwd is None:
            raise PeerCannot("QuACK has no LayerNorm backward (this quack.rmsnorm has no layernorm_bwd)")
        args, kw = call_args(bwd, "QuACK's layernorm_bwd", {"x": t["x"], "weight": t["w"], "dout": t["dy"],
                                                            "rstd": t["rstd"], "mean": t["mean"], "has_bias": True},
                             {"mean": "this QuACK's layernorm_bwd takes no mean"})

        def fn(t):
            r = bwd(*args, **kw)
            return finish(t, r[0], {"dw": r[1], "db": r[2]})
    elif quack:
        bwd = quack.rmsnorm_bwd
        if bwd is None:
            raise PeerCannot("this QuACK has no rmsnorm_bwd")
        known, need = {"x": t["x"], "weight": t["w"], "dout": t["dy"], "rstd": t["rstd"]}, {}
        if off:  # inside the kernel, in fp32
            known["weight_offset"] = float(off)
            need["weight_offset"] = "this QuACK's rmsnorm_bwd has no weight_offset"
        if acc:  # fused: the kernel adds the buffer (the residual stream's gradient) and writes the sum to a new dx
            known["dresidual_out"] = t["dx"]
            need["dresidual_out"] = "this QuACK's rmsnorm_bwd has no dresidual_out (the add into dx)"
            rounds = False
        args, kw = call_args(bwd, "QuACK's rmsnorm_bwd", known, need)

        def fn(t):
            r = bwd(*args, **kw)
            return {"dx": r[0], "dw": r[1]}
    elif ln:
        def fn(t):
            dx, dw, db = torch.ops.aten.native_layer_norm_backward(t["dy"], t["x"], [c], t["mean2"], t["rstd2"],
                                                                   t["w"], t["b"], [True, True, True])
            return finish(t, dx, {"dw": dw, "db": db})
    else:
        bwd = getattr(torch.ops.aten, "_fused_rms_norm_backward", None)
        if bwd is None:
            raise PeerCannot("this torch has no aten._fused_rms_norm_backward")
        t["w_eff"] = t["w"] + off if off else t["w"]  # the offset added once, here, in the dtype
        w_ref = t["w_eff"].double()

        def fn(t):  # dweight does not depend on the weight: the offset leaves it as it is
            r = bwd(t["dy"], t["x"], [c], t["rstd2"], t["w_eff"], [True, True])
            return finish(t, r[0], {"dw": r[1]})

    def reset(t):
        t["dx"].copy_(t["dx0"])

    def check(t, o):
        idx = torch.randperm(n, generator=g, device=device)[:SAMPLE_ROWS]
        x, dy, rs = t["x"][idx].double(), t["dy"][idx].double(), t["rstd"][idx].double()[:, None]
        xh = (x - t["mean"][idx].double()[:, None]) * rs if ln else x * rs
        gw = dy * w_ref
        dx = rs * (gw - (gw.mean(-1, keepdim=True) if ln else 0.0) - xh * (gw * xh).mean(-1, keepdim=True))
        extra = UNIT_ROUNDOFF[dtype] * dx.abs() if rounds else 0.0
        if acc:
            dx = dx + t["dx0"][idx].double()
        checks = [compare(o["dx"][idx], dx, extra)]
        # the column sums over every row, in float64 a chunk of rows at a time, with the sums of |term|
        sums = {k: torch.zeros(c, dtype=torch.float64, device=device) for k in ("dw", "aw", "db", "ab")}
        for rows in row_chunks(n, c):
            xr, dyr = t["x"][rows].double(), t["dy"][rows].double()
            rsr = t["rstd"][rows].double()[:, None]
            term = dyr * ((xr - t["mean"][rows].double()[:, None]) * rsr if ln else xr * rsr)
            sums["dw"] += term.sum(0)
            sums["aw"] += term.abs().sum(0)
            if ln:
                sums["db"] += dyr.sum(0)
                sums["ab"] += dyr.abs().sum(0)
        checks.append(compare(o["dw"], sums["dw"], sum_atol(n, sums["aw"])))
        if ln:
            checks.append(compare(o["db"], sums["db"], sum_atol(n, sums["ab"])))
        return merge(*checks)

    return t, fn, reset if acc else None, check


def make_call(torch, peer, p, dtype, device, lib, log):
    """(inputs, call, reset, check) of a peer at a point; torch.compile compiles here, outside any timing. lib: the
    entry points of a peer of OPTIONAL_PEERS (its loader's), None for the others."""
    import torch.nn.functional as F
    t, fn, reset, check = build_case(torch, F, p, dtype, device, liger=lib if peer == "liger" else None,
                                     quack=lib if peer == "quack" else None, formula=peer == "torch.compile")
    if peer == "liger" and p["heads"] is not None:
        log.write("  Liger's forward copies the strided q view to contiguous memory (ensure_contiguous) before "
                  "its kernel: timed as Liger runs it, copy included\n")
    if peer != "torch.compile":
        return t, fn, reset, check
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
    return t, compiled, reset, check


def validate(torch, t, call, reset, check, row, log):
    """One call checked against the float64 reference; the errors go into the row. True when it passed."""
    if reset:
        reset(t)
    out = call(t)
    torch.cuda.synchronize()
    max_abs, max_rel, bad = check(t, out)
    row.update(max_abs_err=max_abs, max_rel_err=max_rel)
    if bad:
        row["status"] = "FAIL"
        log.write(f"  FAIL: {bad} sampled elements outside the tolerance (max abs {max_abs:.3e})\n")
    return not bad


def new_row(peer, op, p, dtype, label):
    """A SKIP row (zeros, no clock) for the point, which the measurement fills in."""
    return {"op": op, "kernel": peer, "kernel_name": peer_function(peer, op, p) or "-", "dtype": dtype,
            "shape": label, "block_size": 0, "time_ms_median": 0, "time_ms_min": 0, "bytes": int(bytes_for(p, dtype)),
            "gbps": 0, "sol_gbps": 0, "sol_pct": 0, "max_abs_err": 0, "max_rel_err": 0, "status": "SKIP",
            "time_ms_launch_median": 0, "time_ms_launch_min": 0, "clock": ""}


def one_line(e):
    return f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"


def run_point(torch, bench, peer, op, dtype, args, label, device, lib, log):
    p = parse_point(op, args)
    row = new_row(peer, op, p, dtype, label)
    if peer_function(peer, op, p) is None:
        log.write(f"  skipped: {skip_reason(peer, op, p)}\n")
        return row
    try:
        t, call, reset, check = make_call(torch, peer, p, dtype, device, lib, log)
        with _no_recompile(torch, peer):
            if not validate(torch, t, call, reset, check, row, log):
                return row
            tm = (bench.time_hot if p["hot"] else bench.time)(lambda: call(t))
        sol, sol_clock = bench.copy_gbps(row["bytes"], p["hot"])
        if sol_clock != tm.clock:
            raise RuntimeError(f"the call was timed with clock {tm.clock}, the copy with {sol_clock}")
        gbps = row["bytes"] / (tm.ms * 1e-3) / 1e9
        row.update(time_ms_median=tm.ms, time_ms_min=tm.ms_min, time_ms_launch_median=tm.launch_ms,
                   time_ms_launch_min=tm.launch_min, clock=tm.clock, gbps=gbps, sol_gbps=sol,
                   sol_pct=100 * gbps / sol, status="OK")
        per = f" per launch (hot: {HOT_LAUNCHES} launches a graph replay)" if p["hot"] else ""
        log.write(f"  {tm.ms:.4f} ms (min {tm.ms_min:.4f}){per} | with launch {tm.launch_ms:.4f} ms | "
                  f"{gbps:.1f} GB/s | {100 * gbps / sol:.1f}% of copy {sol:.1f} | "
                  f"max err abs {row['max_abs_err']:.1e} | clock {tm.clock} | OK\n")
        if tm.activities:
            n = len(tm.activities)
            log.write(f"  a call on the GPU: {n} {'activity' if n == 1 else 'activities'}: "
                      + "; ".join(name[:80] + (f" <<<{lc[0]}, {lc[1]}>>>" if lc else "") for name, lc in tm.activities)
                      + "\n")
            row["launches"] = [list(lc) for _name, lc in tm.activities if lc]
    except PeerCannot as e:  # this version of the peer has no function for the point, or another signature
        log.write(f"  skipped: {e}\n")
        print(f"peers: {peer} {op} {dtype} {label}: {e}"[:400], file=sys.stderr)
    except Exception as e:  # a peer that cannot run this point is a skip with the reason in the log
        log.write(f"  skipped: {one_line(e)}\n")
        print(f"peers: {peer} {op} {dtype} {label}: {type(e).__name__}: {e}"[:400], file=sys.stderr)
    finally:
        torch.cuda.empty_cache()
    return row


def ncu_range(torch, bench, peer, op, dtype, args, label, device, lib, n, log):
    """--ncu-range: the point's N calls for Nsight Compute, each alone in a profiler range after a flush; no
    torch.profiler here (ncu and CUPTI activity tracing do not share the GPU's counters). Returns the exit code."""
    p = parse_point(op, args)
    row = new_row(peer, op, p, dtype, label)
    if peer_function(peer, op, p) is None:
        print(f"ncu-range: {skip_reason(peer, op, p)}", file=sys.stderr)
        return 1
    try:
        t, call, reset, check = make_call(torch, peer, p, dtype, device, lib, log)
        with _no_recompile(torch, peer):
            if not validate(torch, t, call, reset, check, row, log):
                print(f"ncu-range: {peer} {op} {dtype} {label} fails validation", file=sys.stderr)
                return 1
            for _ in range(n):
                bench.flush()  # on the call's stream: no timing here, and ncu serializes the kernels anyway
                torch.cuda.profiler.start()
                call(t)
                torch.cuda.profiler.stop()
            torch.cuda.synchronize()
    except Exception as e:
        print(f"ncu-range: {peer} cannot run {op} {dtype} {label}: {one_line(e)}", file=sys.stderr)
        return 1
    print(f"ncu-range: {n} calls of {peer} {op} {dtype} {label}", flush=True)
    return 0


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
    ap = cli.Parser("peers", __doc__)
    ap.add_argument("ops", nargs="*", help=f"ops (default: {' '.join(OPS)}; exactly one with --point)")
    which = ap.add_mutually_exclusive_group()
    which.add_argument("--quick", action="store_true", help="each op's default point only")
    which.add_argument("--point", metavar='"DTYPE ARGS..."', help="this point of the one op given")
    which.add_argument("--points", metavar="FILE", type=cli.readable_file,
                       help='the points of FILE (a "DTYPE ARGS..." line each) of the one op given')
    which.add_argument("--set", choices=[x for x in shapes_mod.SETS if x not in shapes_mod.PROGRAMS_ONLY],
                       help="this set of scripts/shapes.py's points only (default: every set each op has)")
    ap.add_argument("--peer", default="all", choices=PEERS + ["all"])
    ap.add_argument("--device", type=int, default=0)
    ap.add_argument("--out", default=os.path.join(ROOT, "results"), help="results folder (default results/)")
    ap.add_argument("--no-write", action="store_true", help="rows as JSON lines on stdout; no CSV, log on stderr")
    ap.add_argument("--ncu-range", type=int, metavar="N", help="no timing: N cold calls in profiler ranges, for ncu")
    a = ap.parse_args(argv[1:])
    ops = a.ops or OPS
    for op in ops:
        if op not in OPS:
            ap.error(f"unknown op '{op}' (one of {', '.join(OPS)})")
    if a.point is not None:
        if len(a.ops) != 1:
            ap.error(f"--point takes exactly one op, got {len(a.ops)}")
        try:
            dtype, args, label = parse_point_option(ops[0], a.point)
        except ValueError as e:
            ap.error(f"--point: {e}")
        pts = [(ops[0], dtype, args, label)]
    elif a.points is not None:
        if len(a.ops) != 1:
            ap.error(f"--points takes exactly one op, got {len(a.ops)}")
        with open(a.points) as f:
            lines = [(i, l.strip()) for i, l in enumerate(f, 1) if l.strip()]
        pts = []
        for i, text in lines:
            try:
                pts.append((ops[0], *parse_point_option(ops[0], text)))
            except ValueError as e:
                ap.error(f"--points {a.points} line {i}: {e}")
        if not pts:
            ap.error(f"--points {a.points}: no point in it")
    else:
        pts = sweep(ops, a.quick, [a.set] if a.set else None)
        if not pts:
            ap.error(f"no {a.set} points for {' '.join(ops)}")
    if a.ncu_range is not None:
        if a.ncu_range < 1:
            ap.error(f"--ncu-range takes a number of calls >= 1, got {a.ncu_range}")
        if a.point is None or a.peer == "all":
            ap.error("--ncu-range needs --point and one --peer")
        if parse_point(ops[0], pts[0][2])["hot"]:
            ap.error("--ncu-range profiles single cold calls, not a hot point's graph replays (drop --hot)")
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
    common = {"gpu": name, "sm": f"sm_{cap[0]}{cap[1]}", "cuda": torch.version.cuda or "?", "git_rev": git_rev()}
    writing = not a.no_write and a.ncu_range is None
    out_dir = os.path.join(a.out, slugify(name))
    path = os.path.join(out_dir, "peers.csv")
    if writing:
        os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "peers.log"), "a") if writing else contextlib.nullcontext(sys.stderr) as log:
        libs = {}  # the optional peers' entry points, of those that import here
        for peer in peers:
            if peer not in OPTIONAL_PEERS:
                continue
            try:
                libs[peer] = OPTIONAL_PEERS[peer][1]()
            except Exception as e:  # not installed, or it does not import with this torch (triton, CUDA ...)
                line = f"peers: {peer} skipped: {one_line(e)}"
                print(line, file=sys.stderr)
                if writing:
                    log.write(line + "\n")
        log.write(f"# peers.py {' '.join(argv[1:])}: {name} | torch {torch.__version__} | CUDA {common['cuda']} | "
                  f"cuDNN {torch.backends.cudnn.version()}"
                  + "".join(f" | {peer} {lib.version}" for peer, lib in libs.items()) + "\n")
        bench = Bench(torch, device)
        if a.ncu_range is not None:
            op, dtype, args, label = pts[0]
            if peers[0] in OPTIONAL_PEERS and peers[0] not in libs:
                return 1
            return ncu_range(torch, bench, peers[0], op, dtype, args, label, device, libs.get(peers[0]),
                             a.ncu_range, log)
        stored = read_csv(path) if writing else []
        rows = []
        for peer in peers:
            for i, (op, dtype, args, label) in enumerate(pts, 1):
                print(f"[{peer} {i}/{len(pts)}] {op} {dtype} {label}", file=sys.stderr, flush=True)
                log.write(f"{peer} | {op} | {dtype} | {label}\n")
                if peer in OPTIONAL_PEERS and peer not in libs:
                    r = new_row(peer, op, parse_point(op, args), dtype, label)
                    log.write(f"  skipped: {OPTIONAL_PEERS[peer][0]} does not import here (above)\n")
                else:
                    r = run_point(torch, bench, peer, op, dtype, args, label, device, libs.get(peer), log)
                r.update(common)
                rows.append(r)
                log.flush()
                if writing:
                    write_csv(path, merge_rows(stored, rows))  # after every point: a run cut short keeps its rows
                else:
                    print(json_row(r), flush=True)
    fails = [r for r in rows if r["status"] == "FAIL"]
    print(f"peers: {len(rows)} rows ({sum(r['status'] == 'OK' for r in rows)} OK, {len(fails)} FAIL)"
          + (f" -> {path}" if writing else ""), file=sys.stderr)
    return 1 if fails else 0


if __name__ == "__main__":
    cli.run(main)
