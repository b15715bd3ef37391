"""Every Excel function refuses an oversized call at once, naming the bound (issue 22, row 3).

A call's result shape is worked out from its arguments' shapes before a single cell is read:
over ``MAX_CELLS_PER_CALL`` cells (or, for TRAIN_QUANTILE, ``MAX_PLANS_PER_CALL`` plans) the
call is a CellError naming the bound; these tests make every cell conversion fail to show that
nothing is converted or computed first. The classic xlwings route calls these very functions;
the server and Lite routes are in tests/test_server_hardening.py and tests/test_lite.py.
"""

from __future__ import annotations

import inspect

import pytest

from udfs import _cells, _quantile_cells, excel
from udfs._cells import MAX_CELLS_PER_CALL, CellError

TEXT = {"accelerator_name": "H100", "run_name": "deepseek-v3", "field": "hbm_gb"}
TEXT_ARGS = {"quantity": "days", **TEXT}


def scalar(name):
    return TEXT_ARGS.get(name, 0.5 if name in ("p", "mfu") else 1000.0)


def arguments(function):
    return list(inspect.signature(getattr(excel, function)).parameters)


@pytest.fixture
def nothing_converted(monkeypatch):
    """Any cell conversion fails the test: the refusal must come first."""

    def converted(*args, **kwargs):
        raise AssertionError("a cell was converted before the size check")

    for module in (excel, _quantile_cells):
        for name in ("to_array", "to_text", "to_numbers"):
            if hasattr(module, name):  # each converter the module calls
                monkeypatch.setattr(module, name, converted)


def column(n, value):
    return [[value]] * n


@pytest.mark.parametrize("function", excel.__all__)
def test_one_argument_over_the_bound_is_refused_first(function, nothing_converted):
    names = arguments(function)
    big = names[-1] if function == "TRAIN_QUANTILE" else names[0]
    args = {name: scalar(name) for name in names}
    args[big] = column(MAX_CELLS_PER_CALL + 1, scalar(big))
    with pytest.raises(CellError) as caught:
        getattr(excel, function)(**args)
    assert str(caught.value) == (
        f"{function}: {big} is a range of 1,048,577 cells (1048577 rows x 1 column), over the "
        "limit of 1,048,576 cells per call (MAX_CELLS_PER_CALL); split it into smaller ranges"
    )


BROADCASTING = [f for f in excel.__all__ if f not in ("TRAIN_PLAN", "TRAIN_PLAN_RANGE")]


@pytest.mark.parametrize("function", BROADCASTING)
def test_a_broadcast_over_the_bound_is_refused_first(function, nothing_converted):
    # A column of 1,025 against a row of 1,024: each argument small, the table too large.
    names = arguments(function)
    first, second = names[:2]
    args = {name: scalar(name) for name in names}
    args[first] = column(1025, scalar(first))
    args[second] = [[scalar(second)] * 1024]
    with pytest.raises(CellError) as caught:
        getattr(excel, function)(**args)
    assert str(caught.value) == (
        f"{function}: the call would produce 1,049,600 cells (1025 rows x 1024 columns), over "
        "the limit of 1,048,576 cells per call (MAX_CELLS_PER_CALL); split it into smaller ranges"
    )


def test_the_issue_example_is_refused_before_any_work(nothing_converted):
    col = [[float(i + 1)] for i in range(8000)]
    with pytest.raises(CellError, match=r"64,000,000 cells \(8000 rows x 8000 columns\)"):
        excel.TRAIN_DAYS(37e9, 14.8e12, col, [[float(i + 1) for i in range(8000)]])


def test_a_call_of_exactly_the_bound_is_answered():
    result = excel.TRAIN_FLOPS(column(1024, 37e9), [[14.8e12] * 1024])
    assert len(result) == 1024 and len(result[0]) == 1024
    assert result[1023][1023] == excel.TRAIN_FLOPS(37e9, 14.8e12)


def test_mismatched_sizes_are_still_named_as_such():
    with pytest.raises(CellError, match="ranges have sizes that do not match"):
        excel.TRAIN_DAYS(37e9, 14.8e12, column(3, 2048.0), column(4, 400.0))


def test_plans_over_the_bound_are_refused_first(nothing_converted):
    n = excel.MAX_PLANS_PER_CALL + 1
    with pytest.raises(CellError) as caught:
        excel.TRAIN_QUANTILE("days", 0.5, 671e9, 37e9, 14.8e12, column(n, 2048.0), "H100")
    assert str(caught.value) == (
        f"TRAIN_QUANTILE: the call would compute {n:,} plans ({n} rows x 1 column), over the "
        f"limit of {excel.MAX_PLANS_PER_CALL:,} plans per call (MAX_PLANS_PER_CALL); split it "
        "into smaller ranges"
    )
    # The plans are the broadcast of the plan's own arguments: a row of 2 against a column of
    # half the bound and one plans is the bound and two.
    rows = excel.MAX_PLANS_PER_CALL // 2 + 1
    with pytest.raises(CellError, match=rf"{2 * rows:,} plans \({rows} rows x 2 columns\)"):
        excel.TRAIN_QUANTILE(
            "days", 0.5, 671e9, 37e9, [[14.8e12, 15e12]], column(rows, 2048.0), "H100"
        )


def test_p_and_quantity_ranges_repeat_plans_and_count_as_cells_only(monkeypatch):
    # 2 plans x 300 probabilities x 1 quantity = 600 cells, 2 plans: under a plan bound of 2.
    monkeypatch.setattr(_quantile_cells, "MAX_PLANS_PER_CALL", 2)
    ps = [[0.001 + 0.998 * j / 299 for j in range(300)]]
    got = excel.TRAIN_QUANTILE("days", ps, 671e9, 37e9, 14.8e12, [[2048.0], [4096.0]], "H100")
    assert len(got) == 2 and len(got[0]) == 300
    assert got[0][150] == excel.TRAIN_QUANTILE(
        "days", ps[0][150], 671e9, 37e9, 14.8e12, 2048, "H100"
    )
    with pytest.raises(CellError, match=r"3 plans .* \(MAX_PLANS_PER_CALL\)"):
        excel.TRAIN_QUANTILE("days", ps, 671e9, 37e9, 14.8e12, column(3, 2048.0), "H100")


def test_an_error_in_one_plan_still_names_its_cell():
    # The plans are found over the plan inputs' own shape; the cell named is still the
    # accelerators cell of the bad plan, whatever the p range around it.
    with pytest.raises(CellError) as caught:
        excel.TRAIN_QUANTILE(
            "days", [[0.1, 0.5, 0.9]], 671e9, 37e9, 14.8e12, [[2048.0], [2.5], [4096.0]], "H100"
        )
    assert caught.value.argument == "accelerators" and caught.value.position == (1, 0)


def test_shape_of_reads_shapes_as_the_conversion_does():
    import numpy as np

    assert _cells.shape_of(5.0) == () and _cells.shape_of([[5.0]]) == ()
    assert _cells.shape_of([1.0, 2.0]) == (2, 1)  # a flat list is a column
    assert _cells.shape_of([[1.0, 2.0]]) == (1, 2)
    assert _cells.shape_of(np.zeros(3)) == (3, 1)
    assert _cells.shape_of([[1.0], [1.0, 2.0]]) is None  # ragged: the conversion says so
    assert _cells.shape_of([]) is None
