"""The calls the browser test makes (one or more per function) and what each must answer.

Shared by ``tests/test_browser.py`` (Chromium, the served JavaScript, the real server) and
``tests/test_lite.py`` (the xlwings Lite bundle run as Pyodide mode runs it), so both routes
answer the very same request bodies.
"""

from __future__ import annotations

import inspect
import math

from udfs import excel

#: (label, function, arguments as typed: scalars or 2-D lists; omitted optionals left out).
CASES = [
    ("flops", "TRAIN_FLOPS", [37e9, 14.8e12]),
    ("flops grid", "TRAIN_FLOPS", [[[1e9], [2e9]], [[1e12, 2e12, 3e12]]]),
    ("hours", "TRAIN_ACCEL_HOURS", [37e9, 14.8e12, 400]),
    ("days", "TRAIN_DAYS", [37e9, 14.8e12, 2048, 400]),
    ("days spill", "TRAIN_DAYS", [37e9, 14.8e12, [[1024], [2048], [4096]], 400]),
    ("cost", "TRAIN_COST", [37e9, 14.8e12, 400, 2]),
    ("kwh default", "TRAIN_KWH", [37e9, 14.8e12, 400]),
    ("kwh", "TRAIN_KWH", [37e9, 14.8e12, 400, 700, 1.2]),
    ("checkpoint", "CHECKPOINT_GB", [671e9]),
    ("effective", "EFFECTIVE_TFLOPS", [989.4, 0.4]),
    ("goodput", "TRAIN_GOODPUT", [3.09, 1 / 60, 5 / 60]),
    ("accels for days", "ACCELS_FOR_DAYS", [2.79e6, 60]),
    ("implied mfu", "IMPLIED_MFU", [3.2856e24, 2.79e6, 989.4]),
    ("memory", "MIN_ACCELS_FOR_MEMORY", [671e9, 80]),
    ("chinchilla", "CHINCHILLA_TOKENS", [70e9]),
    ("co2", "TRAIN_CO2_T", [1.6e6, 481]),
    ("spec", "ACCEL_SPEC", ["h100", "bf16_tflops"]),
    ("spec n/a", "ACCEL_SPEC", ["H800", "tdp_watts"]),
    ("spec grid", "ACCEL_SPEC", [[["H100"], ["MI300X"]], [["hbm_gb", "tdp_watts"]]]),
    ("run", "REF_RUN", ["deepseek-v3", "accelerators"]),
    ("plan", "TRAIN_PLAN", [671e9, 37e9, 14.8e12, 2048, 400, 2]),
    ("quantile", "TRAIN_QUANTILE", ["days", 0.9, 671e9, 37e9, 14.8e12, 2048, "H100"]),
    (
        "quantile spill",
        "TRAIN_QUANTILE",
        ["hours", [[0.1], [0.5], [0.9]], 671e9, 37e9, 14.8e12, 2048, "H100"],
    ),
    (
        "quantile table",
        "TRAIN_QUANTILE",
        [
            [["hours", "days", "cost"]],
            [[0.1], [0.9]],
            671e9,
            37e9,
            14.8e12,
            2048,
            "h100",
            None,  # a blank cell: the typed throughput below is used
            2,
            0.15,
            None,
            None,
            None,
            None,
            400,
        ],
    ),
    ("plan range", "TRAIN_PLAN_RANGE", [671e9, 37e9, 14.8e12, 2048, "H100"]),
]

#: The DeepSeek-V3-like example plan on H100s, as TRAIN_QUANTILE's arguments after p.
_PLAN = [671e9, 37e9, 14.8e12, 2048, "H100"]

#: (label, function, arguments, the message Excel shows on hover over #VALUE!).
ERROR_CASES = [
    (
        "text",
        "TRAIN_DAYS",
        [37e9, 14.8e12, "many", 400],
        "TRAIN_DAYS: accelerators must be a number, not text ('many')",
    ),
    (
        "cell in a range",
        "TRAIN_DAYS",
        [37e9, 14.8e12, [[2048], [2.5]], 400],
        "TRAIN_DAYS: accelerators at row 2, column 1 must be a whole number (got 2.5)",
    ),
    (
        "mfu",
        "EFFECTIVE_TFLOPS",
        [989.4, 1.2],
        None,  # the message is the function's own, checked against it
    ),
    ("unknown", "REF_RUN", ["gpt-9", "total_params"], None),
    (
        "p",
        "TRAIN_QUANTILE",
        ["days", 90, *_PLAN],
        "TRAIN_QUANTILE: p must be a probability strictly between 0 and 1 (0.1 for P10, 0.9 "
        "for P90) (got 90)",
    ),
    ("quantity in a range", "TRAIN_QUANTILE", [[["days"], ["weeks"]], 0.9, *_PLAN], None),
    ("one plan", "TRAIN_PLAN_RANGE", [671e9, 37e9, 14.8e12, [[1024], [2048]], "H100"], None),
]


def arity(name):
    return len(inspect.signature(getattr(excel, name)).parameters)


def excel_args(name, args):
    """Arguments as Excel's runtime passes them: each a 2-D array, omitted optionals null."""
    out = [a if isinstance(a, list) else [[a]] for a in args]
    return out + [None] * (arity(name) - len(out))


def request_body(name, args, runtime="1.4"):
    """The body the served custom-functions JavaScript posts for this call (session aside)."""
    return {
        "client": "Office.js",
        "func_name": name,
        "args": excel_args(name, args),
        "caller_address": "[Book1.xlsx]Sheet1!B2",
        "culture_info_name": "en-US",
        "date_format": "M/d/yyyy",
        "version": "0.37.8",
        "runtime": runtime,
    }


NA_ERROR = {"type": "Error", "errorType": "NotAvailable"}


def wire(value, runtime):
    """One cell of the expected response: "#N/A" is a real error only at runtime 1.4+."""
    if value == excel.NOT_AVAILABLE:
        return NA_ERROR if float(runtime) >= 1.4 else "#N/A"
    if isinstance(value, float) and math.isnan(value):
        return NA_ERROR if float(runtime) >= 1.4 else "#N/A"
    return value


def expected(name, args, runtime="1.4"):
    """The ``result`` the server must answer: the Python function's own value, 2-D."""
    call_args = [None if a is None else a for a in args]
    result = getattr(excel, name)(*call_args)
    rows = result if isinstance(result, list) else [[result]]
    return [[wire(v, runtime) for v in row] for row in rows]


def expected_message(name, args):
    """The message of the error the Python function raises for ``args``."""
    try:
        getattr(excel, name)(*args)
    except Exception as err:  # CellError, an xw.XlwingsError
        return str(err)
    raise AssertionError(f"{name}{tuple(args)} did not fail")
