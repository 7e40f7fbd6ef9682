#!/usr/bin/env python3
"""CI tests of scripts/peers.py's pure-Python parts and of scripts/side_by_side.py (no PyTorch, no GPU): the problem,
bytes and label of a point (hot points included; the backward ops' --accumulate and weight offset too), the function
each peer calls at it (or why it skips it; the backward's signature matching, call_args), the sets of points, the grouping of a profile's GPU activity into calls (cold) and graph replays (hot), the CSV (old files
included, rows replaced per set of points), and the command line's errors."""
import csv
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import csvfile  # noqa: E402
import ncu_check  # noqa: E402
import peers  # noqa: E402
import shapes  # noqa: E402
import side_by_side  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "tests"))
from fixture_csv import FIELDS, expect, status  # noqa: E402


# Every point of every op the peers run, in every set (standard, latency cold and hot), is understood (the shape
# list is shapes.py's, not a copy); the programs' --pdl points are not theirs.
expect("peers: the sweep leaves out the programs' --pdl points and tuning points, and only those",
       [p for p in peers.sweep(peers.OPS) if "--pdl" in p[2]] == []
       and len(peers.sweep(peers.OPS)) == sum(1 for op in peers.OPS for _d, a, l in shapes.points(op)
                                              if "--pdl" not in a and l not in shapes.tune_labels(op))
       and peers.sweep(["batchnorm"], sets=["tune"]) == []
       and all(peers.point_set("batchnorm", l) == "tune" for l in shapes.tune_labels("batchnorm")))
for op, dtype, args, label in peers.sweep(peers.OPS):
    try:
        p = peers.parse_point(op, args)
        ok = peers.bytes_for(p, dtype) > 0
    except Exception as e:  # noqa: BLE001
        ok, p = False, e
    expect(f"peers: parses {op} {dtype} {label}", ok, str(p))

# Bytes as the programs count them (hand-computed from each program's setup()).
ln = peers.parse_point("layernorm", ["-N", "8192", "-C", "768"])
expect("bytes: layernorm 8192x768 fp32 = x, y, weight, bias, mean, rstd",
       peers.bytes_for(ln, "fp32") == 2 * 8192 * 768 * 4 + 2 * 768 * 4 + 2 * 8192 * 4)
qk = peers.parse_point("rmsnorm", ["-N", "4096", "--heads", "32", "--head-dim", "128"])
expect("QK view: tokens 4096, stride 3*H*D by default", qk["tokens"] == 4096 and qk["S"] == 3 * 32 * 128)
expect("bytes: QK-norm bf16 counts q (not all of qkv), y, weight, rstd",
       peers.bytes_for(qk, "bf16") == 2 * 131072 * 128 * 2 + 128 * 2 + 131072 * 4)
fa = peers.parse_point("rmsnorm", ["-N", "8192", "-C", "4096", "--fused-add"])
expect("bytes: fused add adds the residual read and written",
       peers.bytes_for(fa, "bf16") - peers.bytes_for(peers.parse_point("rmsnorm", ["-N", "8192", "-C", "4096"]), "bf16")
       == 2 * 8192 * 4096 * 2)
bn = peers.parse_point("batchnorm", ["--layout", "nchw", "-N", "128", "-C", "64", "--height", "112", "--width", "112"])
expect("bytes: batchnorm NCHW training = x, y and 8 fp32 per channel",
       peers.bytes_for(bn, "bf16") == 2 * 128 * 64 * 112 * 112 * 2 + 8 * 4 * 64)
bn["inference"] = True
expect("bytes: batchnorm inference = x, y and 4 fp32 per channel",
       peers.bytes_for(bn, "fp32") == 2 * 128 * 64 * 112 * 112 * 4 + 4 * 4 * 64)
# The backward programs' bytes (layernorm_backward.cu and rmsnorm_backward.cu setup(): x, dy read, dx written and with
# --accumulate read too; weight read, dweight (LayerNorm: and dbias) written; the fp32 statistics read)
for op, args, dtype, want in [
        ("layernorm_backward", ["-N", "8192", "-C", "768"], "fp32", 3 * 8192 * 768 * 4 + 3 * 768 * 4 + 2 * 8192 * 4),
        ("layernorm_backward", ["-N", "16384", "-C", "4096", "--accumulate"], "bf16",
         4 * 16384 * 4096 * 2 + 3 * 4096 * 2 + 2 * 16384 * 4),
        ("layernorm_backward", ["-N", "1", "-C", "4097", "--hot"], "bf16", 3 * 4097 * 2 + 3 * 4097 * 2 + 2 * 4),
        ("rmsnorm_backward", ["-N", "8192", "-C", "4096"], "bf16", 3 * 8192 * 4096 * 2 + 2 * 4096 * 2 + 8192 * 4),
        ("rmsnorm_backward", ["-N", "16384", "-C", "4096", "--weight-offset", "1"], "fp32",
         3 * 16384 * 4096 * 4 + 2 * 4096 * 4 + 16384 * 4),
        ("rmsnorm_backward", ["-N", "16384", "-C", "4096", "--accumulate"], "fp32",
         4 * 16384 * 4096 * 4 + 2 * 4096 * 4 + 16384 * 4),
        ("rmsnorm_backward", ["-N", "64", "-C", "256", "--accumulate", "--weight-offset", "0.5"], "fp16",
         4 * 64 * 256 * 2 + 2 * 256 * 2 + 64 * 4)]:
    got = peers.bytes_for(peers.parse_point(op, args), dtype)
    expect(f"bytes: {op} {' '.join(args)} {dtype} = {want}", got == want, str(got))
# the programs' allowance for a sum over rows (harness/base.h sum_atol), and the float64 passes' chunks of rows
expect("sum_atol: (4 + 2 sqrt(n)) 2^-24 sum |term|", peers.sum_atol(16384, 3.0) == (4 + 2 * 128) * 2.0 ** -24 * 3.0
       and peers.sum_atol(1, 1.0) == 6 * 2.0 ** -24)
for n, c, elements in [(10, 4, 8), (3, 10 ** 9, 1 << 25), (16384, 4096, 1 << 25), (1, 1, 1), (7, 3, 10)]:
    chunks = peers.row_chunks(n, c, elements)
    rows = [r for sl in chunks for r in range(n)[sl]]
    expect(f"row_chunks: {n} rows of {c} in chunks of <= {elements} elements (at least a row): every row once, "
           "in order", rows == list(range(n)) and all(sl.stop - sl.start <= max(1, elements // c) for sl in chunks),
           str(chunks[:4]))
try:
    peers.parse_point("layernorm", ["--bogus"])
    expect("an unknown program argument is an error", False)
except ValueError:
    expect("an unknown program argument is an error", True)

# The peers and the function each calls at a point (the rows' kernel_name): QuACK has no BatchNorm and takes no
# strided QK-norm view (skip rows, the reason said), and its LayerNorm row says that it takes fp32 weight and bias
expect("peers: quack is a peer, and ncu_check takes every peer", "quack" in peers.PEERS
       and ncu_check.PEERS == peers.PEERS, str(ncu_check.PEERS))
rms = peers.parse_point("rmsnorm", ["-N", "8192", "-C", "4096"])
for op, p, want in [("layernorm", ln, "quack.layernorm_fwd (fp32 weight and bias)"),
                    ("layernorm", peers.parse_point("layernorm", ["-N", "4", "-C", "4096", "--hot"]),
                     "quack.layernorm_fwd (fp32 weight and bias)"),
                    ("rmsnorm", rms, "quack.rmsnorm_fwd"),
                    ("rmsnorm", peers.parse_point("rmsnorm", ["-N", "8192", "-C", "4096", "--weight-offset", "1"]),
                     "quack.rmsnorm_fwd"),
                    ("rmsnorm", fa, "quack.rmsnorm_fwd (residual)"), ("rmsnorm", qk, None), ("batchnorm", bn, None)]:
    got = peers.peer_function("quack", op, p)
    expect(f"peer_function: quack {op} {peers.point_label(p)} -> {want}", got == want, str(got))
why = peers.skip_reason("quack", "rmsnorm", qk)
expect("skip_reason: quack on the QK-norm view: QuACK's 2-D rows, one line",
       "QuACK's rmsnorm_fwd takes 2-D rows" in why and "\n" not in why, why)
expect("skip_reason: an op a peer does not have",
       peers.skip_reason("quack", "batchnorm", bn) == "quack has no batchnorm"
       and peers.skip_reason("liger", "batchnorm", bn) == "liger has no batchnorm")
expect("peer_function: liger runs the QK-norm view (its copy named), torch everything",
       "contiguous" in peers.peer_function("liger", "rmsnorm", qk)
       and all(peers.peer_function("torch", op, p)
               for op, p in [("layernorm", ln), ("rmsnorm", qk), ("batchnorm", bn)]))
names = {peers.peer_function(peer, op, peers.parse_point(op, args)) for peer in peers.PEERS
         for op, _d, args, _l in peers.sweep(peers.OPS)} - {None}
expect("peer_function: no comma in any kernel_name (a CSV column)", not any("," in x for x in names), str(names))

# The backward ops: every peer has a function at every point (what this version of a package lacks is found at run
# time: PeerCannot), its name says where --accumulate's add and the weight offset go
lnb = peers.parse_point("layernorm_backward", ["-N", "8192", "-C", "768"])
lnb_acc = peers.parse_point("layernorm_backward", ["-N", "16384", "-C", "4096", "--accumulate"])
rmsb = peers.parse_point("rmsnorm_backward", ["-N", "8192", "-C", "4096"])
rmsb_off = peers.parse_point("rmsnorm_backward", ["-N", "16384", "-C", "4096", "--weight-offset", "1"])
rmsb_acc = peers.parse_point("rmsnorm_backward", ["-N", "16384", "-C", "4096", "--accumulate", "--hot"])
for peer, op, p, want in [
        ("torch", "layernorm_backward", lnb, "aten.native_layer_norm_backward"),
        ("torch", "layernorm_backward", lnb_acc, "aten.native_layer_norm_backward + dx.add_ (accumulate)"),
        ("torch", "rmsnorm_backward", rmsb, "aten._fused_rms_norm_backward"),
        ("torch", "rmsnorm_backward", rmsb_off, "aten._fused_rms_norm_backward (weight + offset precomputed)"),
        ("torch", "rmsnorm_backward", rmsb_acc, "aten._fused_rms_norm_backward + dx.add_ (accumulate)"),
        ("torch.compile", "layernorm_backward", lnb, "fp32 formula"),
        ("torch.compile", "layernorm_backward", lnb_acc, "fp32 formula + dx accumulate fused"),
        ("torch.compile", "rmsnorm_backward", rmsb_off, "fp32 formula (weight + offset)"),
        ("liger", "layernorm_backward", lnb, "layer_norm_backward"),
        ("liger", "layernorm_backward", lnb_acc, "layer_norm_backward + dx.add_ (accumulate)"),
        ("liger", "rmsnorm_backward", rmsb_off, "rms_norm_backward (casting gemma: fp32 math; in_place=False)"),
        ("liger", "rmsnorm_backward", rmsb_acc,
         "rms_norm_backward (casting gemma: fp32 math; in_place=False) + dx.add_ (accumulate)"),
        ("quack", "layernorm_backward", lnb, "quack.layernorm_bwd"),
        ("quack", "layernorm_backward", lnb_acc, "quack.layernorm_bwd + dx.add_ (accumulate)"),
        ("quack", "rmsnorm_backward", rmsb_off, "quack.rmsnorm_bwd"),
        ("quack", "rmsnorm_backward", rmsb_acc, "quack.rmsnorm_bwd (accumulate fused: dresidual_out)")]:
    got = peers.peer_function(peer, op, p)
    expect(f"peer_function: {peer} {op} {peers.point_label(p)} -> {want}", got == want, str(got))
expect("peer_function: every peer has a function at every backward point, --accumulate named in each",
       all(peers.peer_function(peer, op, peers.parse_point(op, args)) for peer in peers.PEERS
           for op, _d, args, _l in peers.sweep(shapes.BACKWARD_OPS))
       and all("accumulate" in peers.peer_function(peer, op, peers.parse_point(op, args)) for peer in peers.PEERS
               for op, _d, args, label in peers.sweep(shapes.BACKWARD_OPS) if ":acc" in label))


# call_args: a version-dependent function's arguments from its signature, or PeerCannot with the reason (one line)
def liger_rms_new(dY, X, W, RSTD, offset, casting_mode, BLOCK_SIZE, num_warps, in_place, row_mode):
    pass


def liger_rms_old(dY, X, W, RSTD, offset, casting_mode, BLOCK_SIZE, num_warps):  # wrote dx into dy
    pass


def quack_rms(x, weight, dout, rstd, dresidual_out=None, has_bias=False, has_residual=False):  # no weight_offset
    pass


def positional(a, b, /, c=3, *args, d=4, **kw):
    pass


def positional_defaults(a=1, b=2, /):
    pass


LIGER_KNOWN = {k: k.lower() for k in ("dY", "X", "W", "RSTD", "offset", "casting_mode", "BLOCK_SIZE", "num_warps",
                                      "in_place", "row_mode")}
IN_PLACE = {"in_place": "this Liger-Kernel's rms_norm_backward has no in_place argument: it writes dx into dy"}
expect("call_args: every argument of the signature by name",
       peers.call_args(liger_rms_new, "f", LIGER_KNOWN, IN_PLACE) == ([], LIGER_KNOWN))
expect("call_args: a known argument the signature lacks is left out (row_mode of an older version)",
       peers.call_args(liger_rms_new, "f", dict(LIGER_KNOWN, extra=1)) == ([], LIGER_KNOWN))
expect("call_args: an argument with a default that is not known keeps its default",
       peers.call_args(quack_rms, "q", {"x": 1, "weight": 2, "dout": 3, "rstd": 4})
       == ([], {"x": 1, "weight": 2, "dout": 3, "rstd": 4}))
expect("call_args: positional-only arguments go by position", peers.call_args(positional, "p", {"a": 1, "b": 2, "d": 5})
       == ([1, 2], {"d": 5}))
for what, fn, known, need, reason in [
        ("an argument it needs that the signature lacks: the reason given", liger_rms_old, LIGER_KNOWN, IN_PLACE,
         IN_PLACE["in_place"]),
        ("QuACK's without weight_offset, at an offset point", quack_rms, {"x": 1, "weight": 2, "dout": 3, "rstd": 4,
                                                                          "weight_offset": 1.0},
         {"weight_offset": "this QuACK's rmsnorm_bwd has no weight_offset"}, "this QuACK's rmsnorm_bwd has no weight_offset"),
        ("an argument without a default that peers.py does not know", liger_rms_new, {"dY": 1}, None,
         "f takes an argument peers.py does not know: X"),
        ("a positional-only argument without a default that peers.py does not know", positional, {"b": 2}, None,
         "f takes an argument peers.py does not know: a"),
        ("a positional-only argument after one left to its default", positional_defaults, {"b": 2}, None,
         "f: its positional-only argument b follows one peers.py leaves out")]:
    try:
        peers.call_args(fn, "f", known, need)
        expect(f"call_args: {what} is PeerCannot", False)
    except peers.PeerCannot as e:
        expect(f"call_args: {what} is PeerCannot, one line: {e}", str(e) == reason and "\n" not in str(e), str(e))

# merge: rows of the (op, peer) pairs re-run are replaced, the others kept
old = [{"op": "layernorm", "kernel": "torch", "shape": "a"}, {"op": "layernorm", "kernel": "torch.compile", "shape": "a"},
       {"op": "rmsnorm", "kernel": "torch", "shape": "a"}]
new = [{"op": "layernorm", "kernel": "torch", "shape": "b"}]
m = peers.merge_rows(old, new)
expect("merge: replaces layernorm/torch, keeps the rest",
       [(r["op"], r["kernel"], r["shape"]) for r in m]
       == [("layernorm", "torch.compile", "a"), ("rmsnorm", "torch", "a"), ("layernorm", "torch", "b")], str(m))
old = [{"op": "rmsnorm", "kernel": "torch", "shape": s} for s in ("8192x4096", "4x4096", "4x4096:hot")]
m = peers.merge_rows(old, [{"op": "rmsnorm", "kernel": "torch", "shape": "1x4096:hot", "new": 1}])
expect("merge: a latency run replaces the latency rows (cold and hot), keeps the standard ones",
       [(r["shape"], "new" in r) for r in m] == [("8192x4096", False), ("1x4096:hot", True)], str(m))
m = peers.merge_rows(old, [{"op": "rmsnorm", "kernel": "torch", "shape": "8192x768", "new": 1}])
expect("merge: a standard run replaces the standard rows, keeps the latency ones",
       [(r["shape"], "new" in r) for r in m] == [("4x4096", False), ("4x4096:hot", False), ("8192x768", True)],
       str(m))

# Labels: the program's shape string, from the arguments (the labels of every set's points are shapes.py's)
for op, dtype, args, label in peers.sweep(peers.OPS):
    got = peers.point_label(peers.parse_point(op, args))
    expect(f"label: {op} {' '.join(args)} -> {label}", got == label, got)
for op, args, label in [("rmsnorm", ["-N", "8192", "-C", "4096", "--fused-add", "--weight-offset", "1"],
                         "8192x4096:add:off1"),
                        ("rmsnorm", ["-N", "16", "--heads", "4", "--head-dim", "64", "--row-stride", "1000"],
                         "16x4x64:s1000"),
                        ("rmsnorm", ["-N", "16", "--heads", "4", "--head-dim", "64", "--weight-offset", "0.5"],
                         "16x4x64:s768:off0.5"),
                        ("batchnorm", ["-N", "65536", "-C", "256", "--inference"], "65536x256:inf"),
                        ("batchnorm", ["--layout", "nhwc", "-N", "2", "-C", "8", "--height", "3", "--width", "5",
                                       "--inference"], "2x8x3x5:nhwc:inf"),
                        ("rmsnorm", ["--hot", "-N", "8192", "-C", "4096", "--fused-add"], "8192x4096:add:hot"),
                        ("rmsnorm", ["-N", "16", "--heads", "4", "--head-dim", "64", "--hot", "--weight-offset", "1"],
                         "16x4x64:s768:off1:hot"),
                        ("batchnorm", ["-N", "65536", "-C", "256", "--inference", "--hot"], "65536x256:inf:hot"),
                        ("layernorm", ["-N", "4", "-C", "4096", "--hot"], "4x4096:hot"),
                        # the backward programs: ":off" whatever the offset, then ":acc", then the mode's ":hot"
                        ("rmsnorm_backward", ["-N", "16384", "-C", "4096", "--weight-offset", "1"], "16384x4096:off"),
                        ("rmsnorm_backward", ["--accumulate", "--weight-offset", "0.5", "-N", "8", "-C", "8", "--hot"],
                         "8x8:off:acc:hot"),
                        ("rmsnorm_backward", ["-N", "8", "-C", "8", "--weight-offset", "0"], "8x8"),
                        ("layernorm_backward", ["-N", "4", "-C", "4096", "--accumulate", "--hot"], "4x4096:acc:hot"),
                        ("layernorm_backward", ["--rows", "16384", "--cols", "4096", "--accumulate"],
                         "16384x4096:acc")]:
    got = peers.point_label(peers.parse_point(op, args))
    expect(f"label: {op} {' '.join(args)} -> {label}", got == label, got)
expect("--point: dtype, arguments and label", peers.parse_point_option("layernorm", "bf16 -N 8192 -C 768")
       == ("bf16", ["-N", "8192", "-C", "768"], "8192x768"))
# the backward ops' points of the dense set and of a random draw (every variant, hot ones too) parse to their labels
for op in shapes.BACKWARD_OPS:
    pts = shapes.dense_points(op)[::29] + shapes.random_points(op, 7, 60)
    bad = [label for _d, args, label in pts if "--pdl" not in args and peers.point_label(peers.parse_point(op, args))
           != label]
    expect(f"label: {op}: dense and random points (:acc, :off, :hot) parse to the program's label", not bad, bad[:5])
p = peers.parse_point("rmsnorm_backward", ["-N", "8", "-C", "8", "--accumulate", "--weight-offset", "1", "--hot"])
expect("parse_point: rmsnorm_backward --accumulate --weight-offset 1 --hot", p["accumulate"] and p["offset"] == 1.0
       and p["hot"] and p["eps"] == 1e-6 and (p["N"], p["C"]) == (8, 8), str(p))
p = peers.parse_point("layernorm_backward", ["-N", "8", "-C", "8"])
expect("parse_point: layernorm_backward: no accumulate, no offset, eps 1e-5", not p["accumulate"]
       and p["offset"] == 0.0 and not p["hot"] and p["eps"] == 1e-5, str(p))
expect("parse_point: --accumulate is the backward programs' alone",
       all(not peers.parse_point(op, ["-N", "8", "-C", "8"])["accumulate"] for op in ("layernorm", "rmsnorm")))
for op, text in [("layernorm", "bf16 -N 8192"), ("layernorm", "-N 8192 -C 768"), ("layernorm", "bf16 -N 8192 -C 0"),
                 ("layernorm", "bf16 -N 8192 -C 768 --fused-add"), ("rmsnorm", "bf16 -N 8 --heads 4"),
                 ("rmsnorm", "bf16 -N 8 -C 8 --row-stride 9"), ("batchnorm", "fp32 -N 8 -C 8 --height 2"),
                 ("batchnorm", "fp32 -N 8 -C 8 --layout nwhc"), ("layernorm", "bf16 -N 8 -C"), ("layernorm", ""),
                 ("layernorm", "bf16 -N 8 -C 8 --hot 1"), ("rmsnorm", "bf16 -N 8 -C 8 --hott"),
                 ("layernorm_backward", "bf16 -N 8 -C 8 --weight-offset 1"),
                 ("layernorm_backward", "bf16 -N 8 -C 8 --accumulate 1"), ("rmsnorm_backward", "bf16 -N 8 --heads 4"),
                 ("rmsnorm_backward", "bf16 -N 8 -C 8 --fused-add"), ("rmsnorm_backward", "bf16 -N 8 -C 8 --pdl"),
                 ("rmsnorm", "bf16 -N 8 -C 8 --accumulate"), ("rmsnorm_backward", "bf16 -N 8 -C 8 --weight-offset x")]:
    try:
        peers.parse_point_option(op, text)
        expect(f"--point {op} '{text}' is an error", False)
    except ValueError as e:
        expect(f"--point {op} '{text}' is an error ({e})", "\n" not in str(e))

# Hot points: --hot is a flag of every op, the :hot suffix comes last and nothing else changes
for op in peers.OPS:
    cold = peers.parse_point(op, shapes.POINTS[op]["default"][0])
    hot = peers.parse_point(op, shapes.POINTS[op]["default"][0] + ["--hot"])
    expect(f"--hot: {op}: the flag, the label's last suffix, the same problem and bytes otherwise",
           not cold["hot"] and hot["hot"] and peers.point_label(hot) == peers.point_label(cold) + ":hot"
           and {**hot, "hot": False} == cold and peers.bytes_for(hot, "bf16") == peers.bytes_for(cold, "bf16"))
expect("--point: a hot point", peers.parse_point_option("rmsnorm", "bf16 -N 4 -C 4096 --hot")
       == ("bf16", ["-N", "4", "-C", "4096", "--hot"], "4x4096:hot"))

# The sets of points: sweep() takes shapes.py's, the latency set's points come cold and hot, in pairs
for op in ("layernorm", "rmsnorm", *shapes.BACKWARD_OPS):
    lat = [label for _op, _d, _args, label in peers.sweep([op], sets=["latency"])]
    std = [label for _op, _d, _args, label in peers.sweep([op], sets=["standard"])]
    cold = [label for label in lat if not label.endswith(":hot")]
    expect(f"sets: {op} latency: every cold point also hot, and nothing else", len(lat) == 2 * len(cold) > 0
           and sorted(lat) == sorted(cold + [label + ":hot" for label in cold]), str(lat))
    odd = [label for _op, _d, _args, label in peers.sweep([op], sets=["odd"])]
    expect(f"sets: {op}: standard, latency and odd apart, together the whole sweep", not set(std) & set(lat)
           and not (set(std) | set(lat)) & set(odd) and sorted(x[3] for x in peers.sweep([op])) == sorted(std + lat + odd)
           and all(peers.point_set(op, label) == "odd" for label in odd)
           and not any(label.endswith(":hot") for label in std))
    expect(f"sets: {op}: each hot latency point parses as hot, each cold one as cold",
           all(peers.parse_point(op, args)["hot"] == label.endswith(":hot")
               for _op, _d, args, label in peers.sweep([op], sets=["latency"])))
    expect(f"point_set: {op}: latency and standard labels", all(peers.point_set(op, x) == "latency" for x in lat)
           and all(peers.point_set(op, x) == "standard" for x in std))
expect("sets: batchnorm has no latency points", peers.sweep(["batchnorm"], sets=["latency"]) == []
       and peers.point_set("batchnorm", "65536x256") == "standard")
expect("sets: quick = each op's default point", [x[3] for x in peers.sweep(peers.OPS, quick=True)]
       == [shapes.default_label(op) for op in peers.OPS for _ in shapes.DTYPES])
expect("point_set: a shape outside every set counts as standard", peers.point_set("layernorm", "256x768:hot")
       == "standard" and peers.point_set("nosuchop", "4x4096") == "standard")


# The kernel window: the grouping of a timed loop's GPU activity into calls (Bench.time's trace)
def act(cat, stream, ts, dur, name="k"):
    return {"ph": "X", "cat": cat, "name": name, "pid": 0, "tid": stream, "ts": ts, "dur": dur,
            "args": {"device": 0, "stream": stream}}


def loop_trace(calls, flush=(40.0, 30.0), side=13, peer=7):
    """A timed loop's trace: per call, the flush's kernels (durations) on `side`, then the call's [(cat, dur)]
    on `peer`, 1 us apart, and a CPU op beside."""
    ev, ts = [{"ph": "X", "cat": "cpu_op", "name": "aten::fill_", "pid": 1, "tid": 1, "ts": 0.0, "dur": 5.0}], 10.0
    for c in calls:
        for dur in flush:
            ev.append(act("kernel", side, ts, dur))
            ts += dur + 1.0
        for cat, dur in c:
            ev.append(act(cat, peer, ts, dur))
            ts += dur + 1.0
    return {"traceEvents": ev}


def near(a, b):
    return len(a) == len(b) and all(abs(x - y) < 1e-9 for x, y in zip(a, b))


with open(os.path.join(ROOT, "tests", "fixtures", "peers_trace_loop.json")) as f:
    fixture = json.load(f)
ms, acts = peers.kernel_windows(fixture, 3)
names = [n for n, _lc in acts]
expect("kernel window: 2 kernels a call, fractional us: first start to last end; CPU events, flows and the "
       "annotation on the call's stream left out", near(ms, [0.014625, 0.0145, 0.015875]), str(ms))
expect("kernel window: the first call's activity names", names == [
    "triton_per_fused_native_layer_norm_0",
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float> >"], str(names))
expect("kernel window: each kernel's launch (blocks, threads a block) from the event's grid and block",
       [lc for _n, lc in acts] == [(132, 256), (132, 256)],
       str(acts))
ms, acts = peers.kernel_windows(loop_trace([[("gpu_memset", 2.0), ("kernel", 10.0)]] * 4), 4)
expect("kernel window: a memset and a kernel a call", near(ms, [0.013] * 4), str(ms))
expect("kernel window: no launch where the event has no grid and block", [lc for _n, lc in acts] == [None, None],
       str(acts))
ms, _ = peers.kernel_windows(loop_trace([[("gpu_memcpy", 50.0)]] * 3, flush=(40.0,), side=20, peer=7), 3)
expect("kernel window: the copy (one memcpy a call; the flush's stream id above the call's)",
       near(ms, [0.05] * 3), str(ms))
ms, _ = peers.kernel_windows({"traceEvents": [dict(e, args={}) for e in loop_trace([[("kernel", 5.0)]] * 2)
                                              ["traceEvents"]]}, 2)
expect("kernel window: the stream from tid where args has none", near(ms, [0.005] * 2), str(ms))

bad_traces = [("a call with another number of activities", loop_trace([[("kernel", 5.0)], [("kernel", 5.0)] * 2,
                                                                        [("kernel", 5.0)]]), 3),
              ("a call with no activity", loop_trace([[("kernel", 5.0)], [], [("kernel", 5.0)]]), 3),
              ("flushes that do not split into the repeats", loop_trace([[("kernel", 5.0)]] * 3), 4),
              ("a third stream", {"traceEvents": loop_trace([[("kernel", 5.0)]] * 2)["traceEvents"]
                                  + [act("kernel", 99, 500.0, 1.0)]}, 2),
              ("no call activity at all", loop_trace([[]] * 2), 2)]
overlap = loop_trace([[("kernel", 5.0)]] * 2)
overlap["traceEvents"][-1]["ts"] = overlap["traceEvents"][-3]["ts"] + 1.0  # the last call inside its flush
bad_traces.append(("a call that overlaps its flush", overlap, 2))
for what, trace, repeats in bad_traces:
    try:
        peers.kernel_windows(trace, repeats)
        expect(f"kernel window: {what} is an error", False)
    except peers.TraceError as e:
        expect(f"kernel window: {what} is an error ({e})", True)
for what, trace in [("an empty trace", {"traceEvents": []}),
                    ("a trace with CPU events only", {"traceEvents": [e for e in fixture["traceEvents"]
                                                                      if e.get("cat") != "kernel"]})]:
    try:
        peers.kernel_windows(trace, 3)
        expect(f"kernel window: {what} means no GPU activity (the events fall-back)", False)
    except peers.NoGpuActivity:
        expect(f"kernel window: {what} means no GPU activity (the events fall-back)", True)


# The hot loop: the grouping of its GPU activity into graph replays (Bench.time_hot's trace)
def replay_trace(replays, call, launches, stream=7, gap=3.0):
    """A hot loop's trace: `replays` replays, `gap` us apart, of a graph of `launches` calls, each call the
    [(cat, dur, name)] of `call`, 1 us apart, on `stream`; beside them the CPU side (a graph launch per replay)."""
    ev, ts = [], 10.0
    for _ in range(replays):
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaGraphLaunch", "pid": 1, "tid": 1, "ts": ts - 2.0,
                   "dur": 1.5})
        for _ in range(launches):
            for cat, dur, name in call:
                ev.append(act(cat, stream, ts, dur, name))
                ts += dur + 1.0
        ts += gap - 1.0
    return {"traceEvents": ev}


CALL = [("gpu_memset", 1.0, "Memset (Device)"), ("kernel", 3.0, "rms_norm_kernel")]
ms, acts = peers.replay_windows(replay_trace(10, CALL, 4), 10, 4)
names = [n for n, _lc in acts]
expect("replay window: per launch = a replay's first start to last end / launches (4 launches of a memset and "
       "a kernel, 1 us apart: 4 x 6 - 1 us)", near(ms, [(4 * 6.0 - 1.0) / 4 / 1e3] * 10), str(ms))
expect("replay window: the names of one launch's activities", names == ["Memset (Device)", "rms_norm_kernel"],
       str(names))
ms, acts = peers.replay_windows(replay_trace(3, [("gpu_memcpy", 8.0, "Memcpy DtoD")], 32), 3, 32)
names = [n for n, _lc in acts]
expect("replay window: the copy, 32 memcpys a replay", near(ms, [(32 * 9.0 - 1.0) / 32 / 1e3] * 3)
       and names == ["Memcpy DtoD"], str(ms))
slow = replay_trace(2, [("kernel", 2.0, "k")], 2)
slow["traceEvents"][-1]["dur"] = 12.0  # the second replay's last kernel runs 10 us longer
ms, _ = peers.replay_windows(slow, 2, 2)
expect("replay window: each replay timed on its own", near(ms, [0.0025, 0.0075]), str(ms))
ms, _ = peers.replay_windows({"traceEvents": [dict(e, args={}) for e in replay_trace(2, CALL, 2)["traceEvents"]]},
                             2, 2)
expect("replay window: the stream from tid where args has none", near(ms, [0.0055] * 2), str(ms))
two_streams = replay_trace(2, CALL, 2)
two_streams["traceEvents"][-1]["args"]["stream"] = 8
odd = replay_trace(3, CALL, 2)
odd["traceEvents"].pop()
other = replay_trace(2, CALL, 2)
other["traceEvents"][-1]["name"] = "another_kernel"
for what, trace, replays, launches in [
        ("a count that does not divide into the replays", replay_trace(3, CALL, 2), 5, 2),
        ("a count one short", odd, 3, 2),
        ("a replay whose count is not a multiple of its launches", replay_trace(2, CALL, 3), 2, 4),
        ("activities on two streams", two_streams, 2, 2),
        ("a replay that runs other activities", other, 2, 2)]:
    try:
        peers.replay_windows(trace, replays, launches)
        expect(f"replay window: {what} is an error", False)
    except peers.TraceError as e:
        expect(f"replay window: {what} is an error ({e})", "\n" not in str(e))
for what, trace in [("an empty trace", {"traceEvents": []}),
                    ("a trace with CPU events only", {"traceEvents": [e for e in replay_trace(2, CALL, 2)["traceEvents"]
                                                                      if e["cat"] == "cuda_runtime"]})]:
    try:
        peers.replay_windows(trace, 2, 2)
        expect(f"replay window: {what} means no GPU activity (the events fall-back)", False)
    except peers.NoGpuActivity:
        expect(f"replay window: {what} means no GPU activity (the events fall-back)", True)

# CSV: an older peers.csv (the programs' schema, without its newer columns) merges and rewrites
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "peers.csv")
    old_fields = FIELDS[:FIELDS.index("time_ms_launch_median")]
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=old_fields)
        w.writeheader()
        for op in ("layernorm", "rmsnorm"):
            w.writerow({k: "x" for k in old_fields} | {k: "0" for k in old_fields if k in csvfile.FLOATS + csvfile.INTS}
                       | {"op": op, "kernel": "torch", "dtype": "fp32", "status": "OK", "time_ms_median": "0.020000"})
    new = {"op": "layernorm", "kernel": "torch", "kernel_name": "torch.native_layer_norm", "dtype": "bf16",
           "shape": "8192x768", "block_size": 0, "time_ms_median": 0.0123456789, "time_ms_min": 0.012,
           "bytes": 25233408, "gbps": 2043.9, "sol_gbps": 2900.0, "sol_pct": 70.5, "max_abs_err": 0.0078125,
           "max_rel_err": 0.01, "status": "OK", "gpu": "G", "sm": "sm_90", "cuda": "13.0", "git_rev": "x",
           "time_ms_launch_median": 0.02, "time_ms_launch_min": 0.019, "clock": "cupti"}
    peers.write_csv(path, peers.merge_rows(peers.read_csv(path), [new]))
    with open(path, newline="") as f:
        header = next(csv.reader(f))
    back = peers.read_csv(path)
    expect("csv: the new columns at the end, in order",
           header == old_fields + csvfile.NEWER, str(header))
    expect("csv: the old row kept, its new columns empty", back[0]["op"] == "rmsnorm"
           and back[0]["time_ms_median"] == "0.020000" and back[0]["clock"] == ""
           and back[0]["time_ms_launch_median"] == "" and back[0]["chained"] == "", str(back[0]))
    expect("csv: the new row's numbers formatted", back[1]["time_ms_median"] == "0.012346"
           and back[1]["time_ms_launch_min"] == "0.019000" and back[1]["max_abs_err"] == "7.812e-03"
           and back[1]["clock"] == "cupti" and back[1]["bytes"] == "25233408", str(back[1]))
    row = json.loads(peers.json_row(new))
    expect("json row: the CSV's columns in order, numbers as numbers", list(row) == peers.CSV_FIELDS
           and row["time_ms_median"] == 0.0123456789 and row["clock"] == "cupti", str(row))

# The command line: every bad argument is one line and exit 2, before PyTorch is imported
script = os.path.join(ROOT, "scripts", "peers.py")
for args in [["--point", "bf16 -N 8192 -C 768", "layernorm", "rmsnorm"], ["--point", "bf16 -N 8192 -C 768"],
             ["--peer", "bogus"], ["--ncu-range", "0", "--peer", "torch", "--point", "bf16 -N 8 -C 8", "layernorm"],
             ["--ncu-range", "2", "--point", "bf16 -N 8 -C 8", "layernorm"], ["--ncu-range", "2", "layernorm"],
             ["--ncu-range", "x"], ["--point", "fp64 -N 8 -C 8", "layernorm"], ["--point", "bf16 -N 8", "layernorm"],
             ["--quick", "--point", "bf16 -N 8 -C 8", "layernorm"], ["nosuchop"], ["--set", "bogus"], ["--set"],
             ["--point", "bf16 -N 8 -C 8 --fused-add", "layernorm_backward"], ["layernorm_backward", "nosuchop"],
             ["--point", "bf16 -N 8 -C 8 --accumulate", "layernorm"],
             ["--set", "latency", "batchnorm"], ["--set", "latency", "--quick"],
             ["--set", "standard", "--point", "bf16 -N 8 -C 8", "layernorm"],
             ["--point", "bf16 -N 4 -C 8 --hot 1", "layernorm"],
             ["--ncu-range", "2", "--peer", "torch", "--point", "bf16 -N 4 -C 4096 --hot", "layernorm"]]:
    r = subprocess.run([sys.executable, script, *args], capture_output=True, text=True)
    expect(f"command line: {' '.join(args)}: exit 2, one line, no traceback",
           r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
           and not r.stdout, f"rc {r.returncode}: {r.stderr!r}")
r = subprocess.run([sys.executable, script, "--peer", "bogus"], capture_output=True, text=True)
expect("command line: --peer bogus names the peers, quack among them", "'quack'" in r.stderr, r.stderr)
r = subprocess.run([sys.executable, script, "--help"], capture_output=True, text=True)
expect("command line: --help", r.returncode == 0 and "--ncu-range" in r.stdout and "kernel" in r.stdout
       and "--set {standard,latency,odd}" in r.stdout and "--hot" in r.stdout and "K = 32" in r.stdout
       and "layernorm_backward rmsnorm_backward" in r.stdout and "native_layer_norm_backward" in r.stdout, r.stderr)

# Without PyTorch it says so, writes nothing and exits 0 (run with a python that cannot import torch).
with tempfile.TemporaryDirectory() as tmp:
    shim = os.path.join(tmp, "shim")
    os.makedirs(shim)
    with open(os.path.join(shim, "torch.py"), "w") as f:
        f.write("raise ImportError('no torch in this test')\n")
    env = dict(os.environ, PYTHONPATH=shim)
    r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "peers.py"), "--out", os.path.join(tmp, "res")],
                       capture_output=True, text=True, env=env)
    expect("no PyTorch: exit 0, says so, no rows", r.returncode == 0 and "PyTorch is not installed" in r.stderr
           and not os.path.exists(os.path.join(tmp, "res")), r.stderr)
    for args in [["--set", "latency", "layernorm", "batchnorm"], ["--set", "standard"],
                 ["--no-write", "--point", "bf16 -N 4 -C 4096 --hot", "rmsnorm"],
                 ["--no-write", "--peer", "quack", "--point", "bf16 -N 8192 -C 4096 --fused-add", "rmsnorm"],
                 ["--set", "latency", "layernorm_backward", "rmsnorm_backward"], ["--quick", "layernorm_backward"],
                 ["--no-write", "--point", "bf16 -N 16384 -C 4096 --accumulate", "layernorm_backward"],
                 ["--no-write", "--point", "fp32 -N 4 -C 4096 --weight-offset 1 --accumulate --hot",
                  "rmsnorm_backward"]]:
        r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "peers.py"), *args], capture_output=True,
                           text=True, env=env)
        expect(f"command line: {' '.join(args)}: accepted (no PyTorch: exit 0)", r.returncode == 0
               and "PyTorch is not installed" in r.stderr, r.stderr)


# side_by_side on a fixture: program rows (kernels 0..2) and peer rows
def row(kernel, name, gbps, sol_pct, bytes_=1e8, status="OK", shape="8192x4096", dtype="fp32", block=256):
    return {"op": "rmsnorm", "kernel": kernel, "kernel_name": name, "dtype": dtype, "shape": shape,
            "block_size": block, "time_ms_median": 0.1, "time_ms_min": 0.1, "bytes": bytes_, "gbps": gbps,
            "sol_gbps": 3000, "sol_pct": sol_pct, "max_abs_err": 0, "max_rel_err": 0, "status": status,
            "gpu": "G", "sm": "sm_90", "cuda": "13.0", "git_rev": "x"}


def write(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        w.writerows(rows)


with tempfile.TemporaryDirectory() as tmp:
    write(os.path.join(tmp, "rmsnorm.csv"), [row(0, "cudnn", 2000, 66.7, block=0), row(1, "a", 1000, 33.3),
                                              row(2, "b", 2700, 90.0), row(2, "b", 2400, 80.0, block=512),
                                              row(1, "a", 0, 0, shape="32768x128", status="FAIL")])
    write(os.path.join(tmp, "peers.csv"), [row("torch", "F.rms_norm", 1800, 60.0, block=0),
                                           row("torch.compile", "F.rms_norm", 2500, 83.3, block=0),
                                           row("liger", "LigerRMSNormFunction", 2600, 86.7, block=0),
                                           row("quack", "quack.rmsnorm_fwd", 2650, 88.3, block=0)])
    r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "side_by_side.py"), tmp],
                       capture_output=True, text=True)
    line = ("| fp32 | 8192x4096 | 2 b | 2700 | 90.0% | 2000 | 66.7% | 1800 | 60.0% | 2500 | 83.3% | 2600 | 86.7% "
            "| 2650 | 88.3% | 1.02x |")
    expect("side_by_side: best kernel (1 and up) against cuDNN, torch, torch.compile, Liger, QuACK (the best peer)",
           r.returncode == 0 and line in r.stdout.splitlines()
           and any(x.startswith("| dtype |") and x.endswith("Liger GB/s | %SOL | QuACK GB/s | %SOL | best kernel / "
                                                            "best peer |") for x in r.stdout.splitlines()),
           r.stdout + r.stderr)
    expect("side_by_side: a shape where no kernel passed says so",
           "| fp32 | 32768x128 | none OK | - | - | - | | - | | - | | - | | - | | - |" in r.stdout.splitlines(),
           r.stdout)
    write(os.path.join(tmp, "peers.csv"), [row("torch", "F.rms_norm", 1800, 60.0, bytes_=2e8, block=0)])
    r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "side_by_side.py"), tmp],
                       capture_output=True, text=True)
    expect("side_by_side: a peer counting other bytes is an error", r.returncode == 1 and "bytes differ" in r.stderr,
           r.stderr)
    write(os.path.join(tmp, "peers.csv"), [dict(row("torch", "F.rms_norm", 1800, 60.0, block=0), clock="cupti"),
                                           row("torch.compile", "F.rms_norm", 2500, 83.3, block=0)])
    r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "side_by_side.py"), tmp],
                       capture_output=True, text=True)
    line = ("| fp32 | 8192x4096 | 2 b | 2700 | 90.0% | 2000 | 66.7% | 1800\u2020 | 60.0%\u2020 | 2500 | 83.3% | - | "
            "| - | | 1.08x |")
    expect("side_by_side: a peer on another clock is marked, left out of the ratio, and an error",
           r.returncode == 1 and "clocks differ" in r.stderr and line in r.stdout.splitlines(), r.stdout + r.stderr)


# side_by_side's latency table: microseconds, cold / hot / hot+pdl, the best peer of each mode, the ratios
def lrow(kernel, shape, us, bytes_=60000.0, sol_gbps=40.0, status="OK"):
    gbps = bytes_ / us / 1e3 if us else 0  # a SKIP row has no time
    return dict(row(kernel, "k" if kernel else "cudnn", gbps, 50.0, bytes_=bytes_, status=status, shape=shape,
                    block=0), op="layernorm", time_ms_median=us / 1e3, sol_gbps=sol_gbps)


prog = [lrow(10, "1x4096", 2.4), lrow(0, "1x4096", 2.3), lrow(10, "1x4096:hot", 2.0, sol_gbps=60.0),
        lrow(10, "1x4096:hot:pdl", 1.5, sol_gbps=75.0), lrow(0, "1x4096:hot", 1.6, sol_gbps=60.0),
        lrow(0, "1x4096:hot:pdl", 0, status="SKIP"), lrow(10, "8192x768", 15.0)]
peer = [lrow("liger", "1x4096", 2.1), lrow("liger", "1x4096:hot", 1.9), lrow("torch", "1x4096:hot", 6.0)]
lat = side_by_side.latency_table("layernorm", prog, peer)
expect("latency table: cold 2.40 us against liger's 2.10 (0.88x), copy 1.50 us; hot 2.00, PDL 1.50 against cuDNN's "
       "1.60 (1.07x), the faster copy 0.80 us (1.88x); standard shapes left out",
       lat[2] == "| fp32 | 1x4096 | 1.50 | 2.40 | 2.10 liger | 0.88x | 1.60x | 0.80 | 2.00 | 1.50 | 1.60 cuDNN | 1.07x "
       "| 1.88x |" and len([x for x in lat if x.startswith("| fp32")]) == 1, "\n".join(lat))
lat = side_by_side.latency_table("layernorm", prog, peer + [lrow("quack", "1x4096:hot", 1.55)])
expect("latency table: the best of every peer's rows, QuACK's too: hot 1.55 us against the kernel's 1.50 (1.03x)",
       "| 1.55 quack | 1.03x | 1.88x |" in lat[2], "\n".join(lat))
expect("latency table: none for an op without latency points", side_by_side.latency_table("batchnorm", prog, peer) == [])
expect("side by side: the standard table leaves the latency points to the latency table",
       all("1x4096" not in x for x in side_by_side.table("layernorm", prog, peer)[0]))

sys.exit(status())
