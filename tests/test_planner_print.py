"""The planner as printed: no number as ###, row labels and headers on every page, text whole.

The number widths are read from the generated workbook (each cell's format rendered at the
largest plausible value of its input); the rest from the planner printed to PDF by LibreOffice.
"""

from __future__ import annotations

import datetime as dt
import re

import openpyxl
import pytest
from helpers import CUSTOM_PLAN, PLANNER, type_plan

from udfs.quantities import PLAN_INPUTS

#: The largest figure a user could plausibly type, by unit (money: ten billion dollars), capped
#: by the input's own bound.
PLAUSIBLE_MAX = {
    "US$": 1e10,
    "parameters": 1e15,
    "tokens": 1e15,
    "accelerators": 1e6,
    "TFLOP/s": 1e5,
    "fraction": 10.0,
    "US$/accelerator-hour": 1000.0,
    "W": 1e5,
    "ratio": 10.0,
    "US$/kWh": 10.0,
    "gCO2/kWh": 2000.0,
    "bytes": 100.0,
}


def _sections(fmt):
    """A number format's sections (split at ';' outside quotes)."""
    out, current, quoted = [], "", False
    for ch in fmt:
        if ch == '"':
            quoted = not quoted
        if ch == ";" and not quoted:
            out.append(current)
            current = ""
        else:
            current += ch
    return [*out, current]


def shown(fmt, value):
    """The text a positive ``value`` shows in number format ``fmt`` (the formats the planner
    uses: conditions such as [>=1000], thousands separators, scaling commas, decimals,
    percent and quoted literals)."""
    chosen = None
    for section in _sections(fmt):
        cond = re.match(r"\[>=([\d.]+)\]", section)
        if cond is None or value >= float(cond.group(1)):
            chosen = section[cond.end() :] if cond else section
            break
    assert chosen is not None, fmt
    text, k = "", 0
    while k < len(chosen):
        ch = chosen[k]
        if ch == '"':
            end = chosen.index('"', k + 1)
            text += chosen[k + 1 : end]
            k = end + 1
            continue
        digits = re.match(r"[#0,.]+", chosen[k:])
        if digits:
            part = digits.group(0)
            body = part.rstrip(",")
            v = value / 1000 ** (len(part) - len(body))
            if "%" in chosen:
                v *= 100
            decimals = len(body.split(".")[1]) if "." in body else 0
            text += f"{v:,.{decimals}f}" if "," in body else f"{v:.{decimals}f}"
            k += len(part)
            continue
        text += ch
        k += 1
    return text


def test_shown_renders_the_planner_formats():
    assert shown('"$"#,##0', 120e6) == "$120,000,000"
    assert shown("0.0%", 0.35) == "35.0%"
    assert shown('[>=1000000000]"$"#,##0.00,,,"B";[>=10000000]"$"#,##0.0,,"M";"$"#,##0', 12e7) == (
        "$120.0M"
    )


def _fits(ws, cell, value):
    width = ws.column_dimensions[cell.column_letter].width
    text = shown(cell.number_format, value)
    return len(text) + 1 <= width, (ws.title, cell.coordinate, cell.number_format, text, width)


def test_no_input_prints_as_hashes_at_its_largest_plausible_value(generated_templates):
    """An approved amount of $120,000,000 printed "###" in an 11-wide scenario column: each
    number input of each scenario column shows its largest plausible value (its bound's
    ceiling, else PLAUSIBLE_MAX) within the column's width."""
    wb = openpyxl.load_workbook(generated_templates[PLANNER])
    ws = wb["Inputs"]
    checked = 0
    for q in PLAN_INPUTS:
        if q.unit not in PLAUSIBLE_MAX:
            continue
        most = PLAUSIBLE_MAX[q.unit]
        if q.bound is not None:
            for cap in (q.bound.high, q.bound.ceiling):
                if cap is not None:
                    most = min(most, cap)
        ((_, ref),) = wb.defined_names[q.name].destinations
        for row in ws[ref.replace("$", "")]:
            for cell in row:
                ok, why = _fits(ws, cell, most)
                assert ok, why
                checked += 1
    assert checked >= 8 * 15


def test_no_cost_prints_as_hashes_on_calculations(generated_templates):
    """The costs of a $120M run ("Compute cost", "Total cost, P90") printed ### on
    Calculations: each US$ row shows ten billion dollars within its scenario columns."""
    from workbook_templates.planner.layout import SCENARIO_COLUMNS

    ws = openpyxl.load_workbook(generated_templates[PLANNER])["Calculations"]
    rows = [r for r in range(5, ws.max_row + 1) if ws.cell(r, 2).value == "US$"]
    assert len(rows) >= 6
    for r in rows:
        for c in SCENARIO_COLUMNS:
            ok, why = _fits(ws, ws.cell(r, c), PLAUSIBLE_MAX["US$"])
            assert ok, why


# -- printed by LibreOffice ----------------------------------------------------------------------

#: Custom 1: an approved $120M budget run leaving its other inputs to their defaults; Custom 2:
#: an Excluded alternative with defaults too; Custom 3-5: blank, even their names.
APPROVED = {**CUSTOM_PLAN, "scenario_name": "405B dense", "budget_status": "Approved",
            "owner": "Team Beta", "approval_ref": "BOARD-27-3",
            "approval_date": dt.datetime(2027, 6, 1), "approver": "Board",
            "approved_amount_usd": 120_000_000, "usd_per_accelerator_hour": 3.3,
            "start_date": dt.datetime(2027, 10, 1)}  # fmt: skip
EXCLUDED = {**CUSTOM_PLAN, "scenario_name": "Alternative", "budget_status": "Excluded",
            "owner": "Team Beta", "usd_per_accelerator_hour": 2.1,
            "start_date": dt.datetime(2027, 2, 15)}  # fmt: skip
#: The sheets two pages wide, and the header of their label column.
WIDE = {"Inputs": "Scenario", "Calculations": "Quantity", "Checks": "Check"}


@pytest.fixture(scope="module")
def printed(generated_templates, tmp_path_factory):
    """(the filled planner, its LibreOffice recalculation, its PDF)."""
    from helpers import require_soffice

    from workbook_templates.recalc import convert, recalculate

    require_soffice()
    d = tmp_path_factory.mktemp("planner-print")
    wb = openpyxl.load_workbook(generated_templates[PLANNER])
    type_plan(wb, 3, APPROVED)
    type_plan(wb, 4, EXCLUDED)
    for k in (5, 6, 7):
        type_plan(wb, k, {"scenario_name": None})
    path = d / "filled.xlsx"
    wb.save(path)
    (pdf,) = convert([path], d / "pdf", "pdf")
    (done,) = recalculate([path], d / "lo")
    return path, done, pdf


def _pages_by_sheet(pdf, *options):
    """sheet -> [each of its pages' text] (pdftotext with ``options``)."""
    from test_print import _HEADER, _page_texts

    layout = _page_texts(pdf, "-layout")
    texts = _page_texts(pdf, *options) if options != ("-layout",) else layout
    out = {}
    for page, text in zip(layout, texts, strict=True):
        head = _HEADER.match(next(line for line in page.splitlines() if line.strip()))
        out.setdefault(head.group(2).strip(), []).append(text)
    return out


def test_wide_sheets_repeat_their_labels_and_header_on_every_page(printed):
    """Checks' second page printed columns headed "0 0 0" and no row labels, Inputs' notes
    pages no input labels: every page of a sheet two pages wide has its label column's header
    (the header row and column A repeat), and no header reads 0 for a blank scenario."""
    _, _, pdf = printed
    pages = _pages_by_sheet(pdf, "-layout")
    for sheet, head in WIDE.items():
        assert len(pages[sheet]) >= 2, sheet
        for n, page in enumerate(pages[sheet], 1):
            lines = [line.split() for line in page.splitlines() if line.strip()]
            at = [i for i, words in enumerate(lines) if words and words[0] == head]
            assert at, (sheet, n, lines[:6])
            if sheet != "Inputs":  # the scenario names (Inputs' row 4 holds typed names)
                header = [w for words in lines[at[0] : at[0] + 3] for w in words]
                assert "0" not in header, (sheet, n, header)
    (labels,) = [p for p in pages["Inputs"] if "For Approved: the amount approved" in p]
    line = next(x for x in labels.splitlines() if "For Approved: the amount approved" in x)
    assert line.split()[:2] == ["Approved", "amount"], line


def _tokens(text):
    """Words, split at spaces, "/" and "-" too (where a wrapped line may break)."""
    return [w for w in re.split(r"[\s/\-]+", text) if w]


def _in_order(wanted, words):
    """Whether ``wanted`` prints word after word in ``words`` ([(word, page, line)], the
    page's lines with text counted): each word on the line of the one before or one of the
    next two, on the same page (the other cells of its row may print between, a header
    cell centred beside a taller one a line apart)."""
    for start, (w, page, line) in enumerate(words):
        if not wanted or w != wanted[0]:
            continue
        at, ok = start, True
        for want in wanted[1:]:
            _, page, line = words[at]
            nxt = None
            for j in range(at + 1, len(words)):
                _, p, n = words[j]
                if p != page or n > line + 2:
                    break
                if words[j][0] == want:
                    nxt = j
                    break
            if nxt is None:
                ok = False
                break
            at = nxt
        if ok:
            return True
    return not wanted


@pytest.mark.parametrize("sheet", ["Summary", "Our runs", "Reference runs", "Inputs"])
def test_every_printed_text_prints_whole(printed, sheet):
    """No text cut at a column or the page edge ("US$/accelerator-hou", "(see Throughput",
    "more ru", "(on screen; the pri"): a text on one line prints whole on a line, a wrapped
    one word after word, a note wrapped across merged cells whole; Summary's notes
    (formulas, as LibreOffice works them out) too."""
    from openpyxl.utils import range_boundaries

    path, done, pdf = printed
    pages = _pages_by_sheet(pdf, "-layout")[sheet]
    lines = [" ".join(x.split()) for p in pages for x in p.splitlines()]
    words = [(w, k, n) for k, p in enumerate(pages)
             for n, x in enumerate(x for x in p.splitlines() if x.strip())
             for w in _tokens(x)]  # fmt: skip
    ws = openpyxl.load_workbook(path)[sheet]
    values = openpyxl.load_workbook(done, data_only=True)[sheet]
    _, _, last_col, last_row = range_boundaries(ws.print_area.split("!")[-1].replace("$", ""))
    cut, checked = [], 0
    for row in ws.iter_rows(max_row=last_row, max_col=last_col):
        for c in row:
            if not isinstance(c.value, str) or ws.row_dimensions[c.row].hidden:
                continue
            text = c.value
            if text.startswith("="):  # a note of Summary's, as LibreOffice worked it out
                if sheet != "Summary" or c.column != 4 or c.style != "Note":
                    continue
                text = values[c.coordinate].value
                if not text:
                    continue
            if c.alignment.wrap_text:  # its lines may sit among its row's other cells
                whole = _in_order(_tokens(text), words)
            else:
                whole = any(" ".join(text.split()) in line for line in lines)
            checked += 1
            if not whole:
                cut.append((c.coordinate, text[:60]))
    assert checked >= 5 and not cut, (sheet, cut)


def test_the_defaults_are_listed_whole_and_counted_for_the_budget(printed):
    """The list of inputs left to a default prints whole (the $0.08/kWh placeholder included,
    its row tall enough), and the headline box counts only the budget's scenarios with
    defaults, not the Excluded alternative."""
    from workbook_templates.planner.summary import _LIST_LINE_CHARS, LIST_ROW

    path, done, pdf = printed
    wb = openpyxl.load_workbook(done, data_only=True)
    ws = wb["Summary"]
    col = [c.value for c in ws[LIST_ROW]].index("Inputs left to a default") + 1
    rows = {ws.cell(r, 1).value.split(". ", 1)[1]: r for r in range(LIST_ROW + 1, LIST_ROW + 9)}
    for name in ("405B dense", "Alternative"):
        text = ws.cell(rows[name], col).value
        assert "electricity $0.08/kWh" in text and not text.endswith("..."), text
        assert text.endswith("checkpoint 2 bytes"), text
        height = openpyxl.load_workbook(path)["Summary"].row_dimensions[rows[name]].height
        assert height >= 15 * -(-len(text) // _LIST_LINE_CHARS), (name, height, len(text))
    ((sheet, ref),) = wb.defined_names["headline_defaults"].destinations
    in_budget = sum(
        isinstance(ws.cell(r, 3).value, (int, float)) and bool(ws.cell(r, col).value)
        for r in rows.values()
    )
    assert in_budget == 1
    assert wb[sheet][ref.replace("$", "")].value == in_budget
