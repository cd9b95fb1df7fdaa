"""The correctness check in torch, where the tensors are (issue 38): src/verify/compare.h's CompareTensors on the
device, returning statistics, not tensors.

The task server compares a candidate's outputs with the reference's on the device that made them; this is the same
check as the C++ one, field for field (python/tests and src/verify/compare_torch_test.cc hold them to each other):
element i passes when |actual - expected| <= atol + rtol * |expected|, both read as float64 (exact for every
supported float type); a non-finite actual value passes only where the reference has the same one (NaN with NaN
when nan_equal); integers and bool (as 0/1) compare as integers, so a zero tolerance is exact equality. The error
statistics cover the pairs where both values are finite. Large tensors go in chunks, so the float64 temporaries stay
small beside outputs of gigabytes.

`python -m anvil_py.compare_torch CASES.json` compares the cases it lists and prints each result as a JSON line (for
the agreement test, src/verify/compare_torch_test.cc).
"""

import json
import math
import os
import sys

import torch

RELATIVE_ERROR_FLOOR = 1e-12  # kRelativeErrorFloor
# Elements per chunk: on the CPU small enough for the float64 temporaries to stay in cache (1<<17: 0.5 s for 2^25
# float32 on the 2-core CPU machine, 4x faster than 1<<22), on a GPU large enough to keep it busy;
# ANVIL_COMPARE_CHUNK sets it (tests make it small).
_CHUNK_SET = os.environ.get("ANVIL_COMPARE_CHUNK")


def _chunk_elements(device):
    if _CHUNK_SET:
        return int(_CHUNK_SET)
    return 1 << 17 if device.type == "cpu" else 1 << 24
_TWO_TO_64 = float(1 << 64)


def _unravel(flat, shape):
    index = [0] * len(shape)
    for d in range(len(shape) - 1, -1, -1):
        if shape[d] <= 0:
            continue
        index[d] = flat % shape[d]
        flat //= shape[d]
    return index


def _floating_chunk(e, a, atol, rtol, nan_equal):
    """(mismatch mask, finite mask, abs diff over finite pairs, rel over finite pairs)."""
    e = e.double()
    a = a.double()
    finite = torch.isfinite(e) & torch.isfinite(a)
    if bool(finite.all()):
        # Every pair finite (the usual case): the same values with fewer passes.
        diff = (a - e).abs_()
        mag = e.abs()
        mismatch = ~(diff <= atol + rtol * mag)
        return mismatch, finite, diff, diff / mag.clamp_(min=RELATIVE_ERROR_FLOOR), e, a
    diff = torch.where(finite, (a - e).abs(), torch.zeros((), dtype=torch.float64, device=e.device))
    mag = e.abs()
    rel = diff / mag.clamp(min=RELATIVE_ERROR_FLOOR)
    rel = torch.where(finite, rel, torch.zeros((), dtype=torch.float64, device=e.device))
    close = diff <= atol + rtol * torch.where(finite, mag, torch.zeros((), dtype=torch.float64, device=e.device))
    same = (e == a) | (torch.isnan(e) & torch.isnan(a)) if nan_equal else (e == a)
    mismatch = torch.where(finite, ~close, ~same)
    return mismatch, finite, diff, rel, e, a


def _integral_chunk(e, a, is_bool):
    if is_bool:
        e = e.to(torch.int64) != 0
        a = a.to(torch.int64) != 0
    e = e.to(torch.int64)
    a = a.to(torch.int64)
    differ = e != a
    # |a - e| exactly as an unsigned 64-bit number (the int64 difference wraps), then as float64.
    d = torch.where(a > e, a - e, e - a)
    diff = d.double() + (d < 0).double() * _TWO_TO_64
    diff = torch.where(differ, diff, torch.zeros((), dtype=torch.float64, device=e.device))
    mag = e.double().abs()
    rel = diff / mag.clamp(min=RELATIVE_ERROR_FLOOR)
    return differ, diff, rel, mag, e.double(), a.double()


def compare_tensors(expected, actual, atol, rtol, nan_equal=True, read=None):
    """CompareResult as a dict: ok, problem, elements, mismatches, nonfinite_mismatches, max_abs_error,
    max_rel_error, mean_abs_error, first_mismatch, first_mismatch_index, expected_at_first, actual_at_first.
    `read(start, stop)`: the actual flat elements [start, stop) to compare (default: `actual`'s own)."""
    shape = list(expected.shape)
    n = math.prod(shape)
    result = {"ok": False, "problem": "", "elements": n, "mismatches": 0, "nonfinite_mismatches": 0,
              "max_abs_error": 0.0, "max_rel_error": 0.0, "mean_abs_error": 0.0, "first_mismatch": -1,
              "first_mismatch_index": [], "expected_at_first": 0.0, "actual_at_first": 0.0}
    if list(actual.shape) != shape:
        result["problem"] = "shape"
        return result
    if actual.dtype != expected.dtype:
        result["problem"] = "dtype"
        return result
    e_flat = expected.reshape(-1)
    a_flat = actual.reshape(-1)
    floating = expected.dtype.is_floating_point
    is_bool = expected.dtype == torch.bool
    total = 0.0
    pairs = 0
    chunk = _chunk_elements(expected.device)
    for start in range(0, n, chunk):
        e = e_flat[start:start + chunk]
        a = a_flat[start:start + chunk] if read is None else read(start, min(start + chunk, n))
        if floating:
            mismatch, finite, diff, rel, ed, ad = _floating_chunk(e, a, atol, rtol, nan_equal)
            pairs += int(finite.sum())
        else:
            differ, diff, rel, mag, ed, ad = _integral_chunk(e, a, is_bool)
            mismatch = differ & ~(diff <= atol + rtol * mag)
            pairs += e.numel()
        total += float(diff.sum())
        if diff.numel():
            result["max_abs_error"] = max(result["max_abs_error"], float(diff.max()))
            result["max_rel_error"] = max(result["max_rel_error"], float(rel.max()))
        count = int(mismatch.sum())
        if count:
            result["mismatches"] += count
            result["nonfinite_mismatches"] += int((mismatch & ~torch.isfinite(ad)).sum())
            if result["first_mismatch"] < 0:
                i = int(mismatch.nonzero()[0, 0])
                result["first_mismatch"] = start + i
                result["expected_at_first"] = float(ed[i])
                result["actual_at_first"] = float(ad[i])
                x = result["actual_at_first"]
                result["problem"] = "nan" if math.isnan(x) else ("inf" if math.isinf(x) else "values")
    result["mean_abs_error"] = total / pairs if pairs else 0.0
    result["ok"] = result["mismatches"] == 0
    if not result["ok"]:
        result["first_mismatch_index"] = _unravel(result["first_mismatch"], shape)
    return result


def compare_copied(expected, buffer, atol, rtol, nan_equal=True, points=None):
    """compare_tensors of an exported buffer's values, each chunk first copied into memory of this process's own and
    the copy compared (what the candidate may still change is never what is compared), one chunk at a time: a copy
    of the whole would hold as much memory again as a multi-GB output. (result, the copied values at flat `points`,
    on the buffer's device: a change at them since is after_return; None without points)."""
    flat = buffer.reshape(-1)
    kept = None if points is None else torch.empty(len(points), dtype=buffer.dtype, device=buffer.device)

    def read(start, stop):
        copy = flat[start:stop].to(expected.device, copy=True)
        if kept is not None:
            inside = (points >= start) & (points < stop)
            if bool(inside.any()):
                kept[inside] = copy[(points[inside] - start).to(copy.device)].to(kept.device)
        return copy

    return compare_tensors(expected, buffer, atol, rtol, nan_equal, read=read), kept


def json_number(x):
    """NaN and infinities as text: JSON has none."""
    return x if math.isfinite(x) else repr(x)


def main(argv):
    """Each case of the JSON list in argv[0] ({"expected": DIR, "actual": DIR, "atol", "rtol", "nan_equal"}: the
    first tensor of two tensor directories) compared, one JSON line per case."""
    from anvil_py import tensor_io
    with open(argv[0]) as f:
        cases = json.load(f)
    for case in cases:
        expected = tensor_io.read_dir(case["expected"])[0][1]
        actual = tensor_io.read_dir(case["actual"])[0][1]
        result = compare_tensors(expected, actual, case["atol"], case["rtol"], case["nan_equal"])
        for key in ("expected_at_first", "actual_at_first", "max_abs_error", "max_rel_error", "mean_abs_error"):
            result[key] = json_number(result[key])
        print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
