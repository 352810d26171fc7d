#!/usr/bin/env python3
"""Times torch.cumsum on int32 and float32 CUDA tensors the way the scan runner
(build/scan/scan) times a row, and writes the runner's CSV columns, so PyTorch's scan
sits beside the scan stages.

The method is the runner's (scan/runner.cu, common/timing.hpp):
  - the inputs are the runner's for the seed (int: the top 32 bits of common/inputs.cpp's
    hash64; float: its uniform pattern), copied to the GPU once; each n is a prefix of the
    largest;
  - one checked call per row: int32 sums exactly (wrapping), float sums within the error
    bound the runner uses for CUB (scan/check.hpp: (gamma(d_i) + gamma_double(n)) A_i,
    d_i = 128 + 8 (i // 512), A_i the running sum of |x|);
  - one untimed warm-up, then timed repetitions: before each, a read of a buffer twice the
    L2's size, outside the timed region; CUDA events on torch's current stream around the
    call only; up to --reps, at least --min-reps, no more than fit in --budget-ms per row;
    the median, min and max.
torch.cumsum has no exclusive form: every row is inclusive. Exit codes: 0 done, 1 a row
failed its check or torch could not run, 2 bad usage (nothing written), 3 no CUDA device.

"""
import argparse
import datetime
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import output_files  # noqa: E402  the scripts' output checks and whole-file writes
import result_files  # noqa: E402  the runners' CSV format
import time_torch_cupy as tc  # noqa: E402  the number grammar, repetitions, device metadata

PROGRAM = "time_torch_scan.py"
TYPES = ("int", "float")
MAX_N = 1 << 31
# The scan runner's CSV columns, in its order (scan/runner.cu, make_record).
COLUMNS = ("n", "type", "kind", "key", "id", "title", "grid", "reps", "median_us", "min_us", "max_us", "gbs",
           "pct_peak", "of_copy", "vs_cub", "max_error_ratio", "check", "check_detail")

def parse_args(argv):
    """The options as a dict; raises tc.UsageError (argparse itself exits 2 on its own errors
    and 0 after --help)."""
    p = output_files.Parser(prog=PROGRAM, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", metavar="N[,N...]",
                   help="elements to scan (default 2^24), comma-separated: 16777216, 2^24, 16M or 64MiB")
    p.add_argument("--sweep", metavar="LO:HI[:F]", help="every size from LO to HI, multiplying by F (default 2)")
    p.add_argument("--types", metavar="LIST", default=",".join(TYPES), help="int, float or int,float (the default)")
    tc.add_run_options(p, reps=100, budget_ms=1000)
    a = p.parse_args(argv)
    if a.n is not None and a.sweep is not None:
        raise tc.UsageError("--n and --sweep cannot be combined: give the sizes with one of them.")
    if a.sweep is not None:
        sizes = tc.parse_sweep(a.sweep)
        if sizes[-1] > MAX_N:
            raise tc.UsageError("--sweep goes past 2^31 elements, the largest scan here.")
    else:
        items = [x for x in (a.n or "2^24").split(",") if x.strip()]
        if not items:
            raise tc.UsageError(f"--n '{a.n}' gives no size.")
        sizes = [tc.parse_count(x, "--n", 1, MAX_N) for x in items]
    types = [x for x in a.types.split(",") if x]
    if not types or any(t not in TYPES for t in types):
        raise tc.UsageError(f"--types '{a.types}': write int, float or int,float.")
    return {"sizes": sizes, "types": list(dict.fromkeys(types)), **tc.run_options(a)}


def inputs(kind, seed, n):
    """The runner's inputs: int, hash64(seed, i) >> 32 as int32; float, its uniform pattern."""
    import numpy as np
    if kind != "int":
        return tc.uniform_inputs(seed, n)
    out = np.empty(n, dtype=np.int32)
    for start, z in tc.hash64_chunks(seed, n):
        out[start:start + len(z)] = (z >> np.uint64(32)).astype(np.uint32).view(np.int32)
    return out


def check(kind, x, y, chunk=1 << 24):
    """(verdict, max_error_ratio, detail) of the outputs y for the inputs x (numpy)."""
    import numpy as np
    n = len(x)
    if kind == "int":
        carry = np.uint32(0)
        for start in range(0, n, chunk):
            part = np.cumsum(x[start:start + chunk].view(np.uint32), dtype=np.uint32) + carry
            got = y[start:start + chunk].view(np.uint32)
            if not np.array_equal(part, got):
                i = start + int(np.argmax(part != got))
                return "FAIL", math.nan, f"output {i} is {int(y[i])}, expected {int(part[i - start].view(np.int32))}"
            carry = part[-1]
        return "ok", math.nan, f"all {n} outputs exact"
    u, ud = 2.0**-24, 2.0**-53
    worst, s, a = 0.0, 0.0, 0.0
    for start in range(0, n, chunk):
        xs = x[start:start + chunk].astype(np.float64)
        ref = np.cumsum(xs) + s
        absum = np.cumsum(np.abs(xs)) + a
        depth = 128 + 8 * (np.arange(start, start + len(xs), dtype=np.float64) // 512)
        du = depth * u
        bound = np.where(du < 1, du / (1 - du), np.inf) + tc.gamma(n, ud)
        bound = bound * absum
        err = np.abs(y[start:start + chunk].astype(np.float64) - ref)
        bad = ~(err <= bound) & np.isfinite(bound)
        if bad.any():
            i = int(np.argmax(bad))
            return "FAIL", math.nan, (f"output {start + i} is {float(y[start + i])!r}, reference {float(ref[i])!r}, "
                                      f"error {err[i]:.3g} above its bound {bound[i]:.3g}")
        finite = np.isfinite(bound) & (bound > 0)
        if finite.any():
            worst = max(worst, float((err[finite] / bound[finite]).max()))
        s, a = float(ref[-1]), float(absum[-1])
    return "ok", worst, f"all {n} outputs within their bounds (largest error {worst:.2g} of its bound)"


def main(argv):
    try:
        opt = parse_args(argv)
    except tc.UsageError as e:
        return output_files.refuse(PROGRAM, str(e))
    try:
        meta = tc.device_metadata(opt["device"])
    except RuntimeError as e:
        print(f"{PROGRAM}: {e}", file=sys.stderr)
        return tc.EXIT_NO_DEVICE
    try:
        import numpy as np
        import torch
    except ImportError as e:
        print(f"{PROGRAM}: torch and numpy are needed ({e}).", file=sys.stderr)
        return 1
    if not torch.cuda.is_available():
        print(f"{PROGRAM}: torch sees no CUDA device (a CPU-only build?).", file=sys.stderr)
        return 1
    info = dict(meta)
    peak = float(info["peak_gbs"])
    dev = torch.device("cuda", opt["device"])
    torch.cuda.set_device(dev)
    flush_buf = None if opt["warm_l2"] else torch.ones(max(2 * int(info["l2_bytes"]), 1 << 20) // 4,
                                                       dtype=torch.int32, device=dev)
    n_max = max(opt["sizes"])
    records, all_ok = [], True
    print(f"torch.cumsum ({torch.__version__}, CUDA {torch.version.cuda}) on {info['device']}, median of up to "
          f"{opt['reps']} repetitions per row, L2 {'warm' if opt['warm_l2'] else 'flushed (read) before each'}")
    print(f"{'n':>10} {'type':<6} {'reps':>5} {'median-us':>10} {'GB/s':>7} {'%peak':>6} check", flush=True)
    for kind in opt["types"]:
        host = inputs(kind, opt["seed"], n_max)
        x_all = torch.from_numpy(host).to(dev)
        dtype = torch.int32 if kind == "int" else torch.float32
        for n in opt["sizes"]:
            x = x_all[:n]
            y = torch.cumsum(x, 0, dtype=dtype)  # the checked call
            verdict, ratio, detail = check(kind, host[:n], y.cpu().numpy())
            del y
            times = []
            if verdict == "ok":
                start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                torch.cumsum(x, 0, dtype=dtype)  # warm-up
                torch.cuda.synchronize()

                def one_rep():
                    if flush_buf is not None:
                        flush_buf.max()  # a read of the whole buffer
                    start.record()
                    torch.cumsum(x, 0, dtype=dtype)
                    stop.record()
                    stop.synchronize()
                    times.append(start.elapsed_time(stop) * 1e3)

                t0 = datetime.datetime.now()
                one_rep()
                first_ms = (datetime.datetime.now() - t0).total_seconds() * 1e3
                reps = tc.planned_repetitions(first_ms, opt["reps"], opt["min_reps"], opt["budget_ms"])
                while len(times) < reps:
                    one_rep()
            med = tc.median(times) if times else math.nan
            gbs = 8 * n / (med * 1e-6) / 1e9 if times else math.nan
            rec = {"n": n, "type": kind, "kind": "inclusive", "key": "torch", "id": "torch_cumsum",
                   "title": f"torch.cumsum ({torch.__version__})", "grid": None,
                   "reps": str(len(times)) + ("*" if times and len(times) < opt["reps"] else "") if times else "-",
                   "median_us": med, "min_us": min(times) if times else math.nan,
                   "max_us": max(times) if times else math.nan, "gbs": gbs, "pct_peak": 100 * gbs / peak,
                   "of_copy": None, "vs_cub": None, "max_error_ratio": ratio, "check": verdict,
                   "check_detail": detail}
            print(f"{tc.format_count(n):>10} {kind:<6} {rec['reps']:>5} {med:>10.1f} {gbs:>7.0f} "
                  f"{rec['pct_peak']:>6.1f} {verdict}", flush=True)
            if verdict != "ok":
                print(f"  failed its check: {detail}")
                all_ok = False
            records.append(rec)
        del x_all
    meta = meta + [("program", PROGRAM), ("torch", torch.__version__), ("torch_cuda", str(torch.version.cuda)),
                   ("commit", tc.git_commit()),
                   ("date", datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")),
                   ("seed", str(opt["seed"])), ("bytes_counted", "8 per element (4 read, 4 written)"),
                   ("max_reps", str(opt["reps"])), ("min_reps", str(opt["min_reps"])),
                   ("budget_ms_per_row", f"{opt['budget_ms']:g}"), ("l2_flushed", "no" if opt["warm_l2"] else "yes"),
                   ("timing", "CUDA events around torch.cumsum, median of the repetitions")]
    if opt["csv"]:
        output_files.write(opt["csv"], result_files.csv_text(list(COLUMNS), records, meta, number=".10g"))
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
