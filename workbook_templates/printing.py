"""The print set-up every workbook shares: paper, scale, titles, page breaks.

One copy for every template and the hand-off: the paper (:func:`paper_size`: the
``COMPUTE_LAB_PAPER`` variable, else the locale's), :func:`print_setup` (fit to pages wide,
print titles and area, the scale kept at :data:`MIN_PRINT_SCALE_PCT` or more, a heading
kept on the page of the rows under it) and the measures behind them (:func:`used_area`,
:func:`chart_extent`, :func:`column_width`). The page header and footer, which name the
template version, are :func:`workbook_templates.sheetkit.header_footer`.
"""

from __future__ import annotations

import os

from openpyxl.utils import column_index_from_string, get_column_letter, range_boundaries
from openpyxl.worksheet.properties import PageSetupProperties

__all__ = [
    "PAPER_SIZES",
    "PAPER_ENV",
    "MIN_PRINT_SCALE_PCT",
    "paper_size",
    "print_setup",
    "used_area",
    "chart_extent",
    "column_width",
    "first_page_last_col",
    "title_rows",
    "empty_row",
]


#: Paper sizes a workbook can print on (openpyxl's paperSize codes).
PAPER_SIZES = {"a4": 9, "letter": 1}
#: Territories whose locale default is US Letter (the others print on A4).
LETTER_TERRITORIES = ("US", "CA", "MX", "PH", "CL", "CO", "VE", "PR", "GT", "SV", "CR", "PA")
#: The environment variable that chooses the paper ("a4" or "letter") over the locale.
PAPER_ENV = "COMPUTE_LAB_PAPER"


def paper_size(environ=None):
    """The paper every workbook prints on: ``COMPUTE_LAB_PAPER`` (a4 or letter) when set,
    else the locale's (``LC_PAPER``, ``LC_ALL`` or ``LANG``: Letter in the US, Canada and the
    other Letter countries), else A4. An unknown value of the variable is refused."""
    env = os.environ if environ is None else environ
    chosen = env.get(PAPER_ENV, "").strip().lower()
    if chosen:
        if chosen not in PAPER_SIZES:
            from udfs.validation import CommandError

            raise CommandError(f"{PAPER_ENV} must be a4 or letter, not {chosen[:20]!r}")
        return chosen
    for var in ("LC_PAPER", "LC_ALL", "LANG"):
        value = env.get(var, "")
        if value:
            territory = value.split(".")[0].split("_")[-1].upper() if "_" in value else ""
            return "letter" if territory in LETTER_TERRITORIES else "a4"
    return "a4"


def print_setup(
    ws,
    pages_wide=1,
    print_titles=None,
    title_cols=None,
    print_area=None,
    pages_tall=0,
    paged=False,
):
    """Landscape A4 or Letter (:func:`paper_size`), ``pages_wide`` pages across,
    ``pages_tall`` down (0: as tall as it needs).

    ``print_titles`` rows (``"4:4"``) and ``title_cols`` columns (``"A:B"``) repeat on every
    page. The print area is ``print_area`` (``"A1:J40"``), else every filled cell and every
    chart (:func:`used_area`), so nothing outside the content prints. The one print set-up
    of every template (the hand-off can call it too); :func:`header_footer` adds the page
    header and footer once the workbook is complete.

    A sheet that fits one page wide only below :data:`MIN_PRINT_SCALE_PCT` prints at that
    scale on more pages, its page breaks set here (:func:`keep_headings`); so does a
    ``paged`` sheet (a long one whose columns fit at that scale).
    """
    paper = paper_size()
    ws.page_setup.orientation = "landscape"
    ws.page_setup.paperSize = PAPER_SIZES[paper]
    ws.print_options.gridLines = False
    ws.page_margins.left = ws.page_margins.right = 0.5
    ws.page_margins.top = ws.page_margins.bottom = 0.75
    ws.page_margins.header = ws.page_margins.footer = 0.3
    if print_titles:
        ws.print_title_rows = print_titles
    ws.print_area = print_area or used_area(ws)
    if not paged and fit_scale(ws, paper, pages_wide, pages_tall) * 100 >= MIN_PRINT_SCALE_PCT:
        ws.page_setup.fitToWidth = pages_wide
        ws.page_setup.fitToHeight = pages_tall
        ws.sheet_properties.pageSetUpPr = PageSetupProperties(fitToPage=True)
        if title_cols:
            ws.print_title_cols = title_cols
        return
    # fitting would print small type: print at the smallest readable scale instead, as many
    # pages across and down as that takes (no column repeated: a note merged across columns
    # would print under it)
    ws.sheet_properties.pageSetUpPr = PageSetupProperties(fitToPage=False)
    ws.page_setup.fitToWidth = ws.page_setup.fitToHeight = None
    ws.page_setup.scale = MIN_PRINT_SCALE_PCT
    keep_headings(ws, paper)


#: Rows (of the default height) a heading keeps with it on its page when its whole block
#: (down to the next empty row) is longer than a page.
KEEP_WITH_NEXT_ROWS = 4


def _is_heading(ws, r):
    first = ws.cell(r, 1)
    if first.style == "Header":
        return True
    return first.style == "Section" and all(
        ws.cell(r, c).value in (None, "") for c in range(2, ws.max_column + 1)
    )


def title_rows(ws):
    """The rows ``ws`` repeats atop each printed page, (first, last), or None."""
    if not ws.print_title_rows:
        return None
    top, bottom = (int(x) for x in ws.print_title_rows.replace("$", "").split(":"))
    return top, bottom


def empty_row(ws, r):
    """Whether row ``r`` of ``ws`` prints nothing: no cell with a value other than ""."""
    cells = (ws._cells.get((r, j)) for j in range(1, ws.max_column + 1))
    return all(cell is None or cell.value in (None, "") for cell in cells)


def _kept(ws, r, last_row, room):
    """Height a heading at row ``r`` keeps together: its block (down to the next empty row)
    when that fits on a page, else itself and :data:`KEEP_WITH_NEXT_ROWS` rows."""
    height = 0.0
    for k in range(r, last_row + 1):
        if k > r and empty_row(ws, k):
            break
        height += 0.0 if ws.row_dimensions[k].hidden else ws.row_dimensions[k].height or _ROW_PT
    return height if height <= room else (KEEP_WITH_NEXT_ROWS + 1) * _ROW_PT


def keep_headings(ws, paper):
    """Page breaks of a sheet at :data:`MIN_PRINT_SCALE_PCT`, set by hand: the page height
    at that scale (:data:`PRINTABLE_PT`, a little less than a program's own), less the
    repeated title rows, filled row by row from each break, and a heading whose block would
    not fit below it moved to the next page (:func:`_kept`). A row without a height gets the default
    15 points, so that every program pages the rows as counted here (LibreOffice's own
    default is shorter)."""
    from openpyxl.worksheet.pagebreak import Break

    _, first_row, _, last_row = range_boundaries(ws.print_area.split("!")[-1].replace("$", ""))
    titles, repeated = 0.0, title_rows(ws)
    if repeated is not None:
        top, bottom = repeated
        titles = sum(ws.row_dimensions[r].height or _ROW_PT for r in range(top, bottom + 1))
    page = PRINTABLE_PT[paper][1] * 100 / MIN_PRINT_SCALE_PCT
    breaks = {b.id for b in ws.row_breaks.brk}
    used, first_page = 0.0, True
    for r in range(first_row, last_row + 1):
        if not ws.row_dimensions[r].height:
            ws.row_dimensions[r].height = _ROW_PT
        height = 0.0 if ws.row_dimensions[r].hidden else ws.row_dimensions[r].height
        room = page - (0 if first_page else titles)
        if used + height > room and used > 0:  # a break of our own: never where we guessed
            ws.row_breaks.append(Break(id=r - 1))
            breaks.add(r - 1)
            used, first_page = 0.0, False
        elif _is_heading(ws, r) and used > 0 and used + _kept(ws, r, last_row, room) > room:
            ws.row_breaks.append(Break(id=r - 1))
            breaks.add(r - 1)
            used, first_page = 0.0, False
        used += height
        if r in breaks:
            used, first_page = 0.0, False


#: The smallest print scale (percent) of any page: an 11-point cell (the body type of every
#: sheet) prints at 7.7 points, above the 7-point floor of a readable printed word. A sheet
#: that would fit its pages only below this scale prints at it, on more pages.
MIN_PRINT_SCALE_PCT = 70
#: Printable width and height (points) of each paper, landscape, inside the margins of
#: :func:`print_setup` (0.5 inch left and right; 0.75 inch top and bottom).
PRINTABLE_PT = {"a4": (842 - 72, 595 - 108), "letter": (792 - 72, 612 - 108)}


#: Pixels per column width unit as LibreOffice prints it (measured: 8.3; Excel's 7 would
#: overestimate the scale a wide sheet fits at).
PRINTED_PX_PER_WIDTH = 8.5


def area_points(ws):
    """(width, height) in points of the print area of ``ws`` at 100%
    (:data:`PRINTED_PX_PER_WIDTH` pixels per width unit plus 5 of padding, a pixel 0.75
    point)."""
    first_col, first_row, last_col, last_row = range_boundaries(
        ws.print_area.split("!")[-1].replace("$", "")
    )
    width = sum(
        column_width(ws, get_column_letter(c)) * PRINTED_PX_PER_WIDTH + 5
        for c in range(first_col, last_col + 1)
    )
    height = sum(ws.row_dimensions[r].height or _ROW_PT for r in range(first_row, last_row + 1))
    return width * 0.75, height


def fit_scale(ws, paper, pages_wide=1, pages_tall=0):
    """The scale (1 = 100%) at which the print area fits ``pages_wide`` pages across and
    ``pages_tall`` down (0: any number down)."""
    width, height = area_points(ws)
    page_w, page_h = PRINTABLE_PT[paper]
    scale = min(1.0, pages_wide * page_w / width)
    if pages_tall:
        scale = min(scale, pages_tall * page_h / height)
    return scale


#: Centimetres per point; the default row height in points; pixels per width unit.
_CM_PER_PT = 2.54 / 72
_ROW_PT = 15.0


def _column_cm(ws, col):
    return (column_width(ws, get_column_letter(col)) * 7 + 5) / 96 * 2.54


def _row_cm(ws, row):
    return (ws.row_dimensions[row].height or _ROW_PT) * _CM_PER_PT


def chart_extent(ws, chart):
    """(last column, last row) a chart anchored at a cell covers, from its size in cm."""
    anchor = chart.anchor if isinstance(chart.anchor, str) else None
    if anchor is None:  # a loaded chart: its two-cell anchor
        marker = chart.anchor._from
        col, row = marker.col + 1, marker.row + 1
    else:
        letters = "".join(ch for ch in anchor if ch.isalpha())
        col, row = column_index_from_string(letters), int(anchor[len(letters) :])
    width, height = chart.width, chart.height
    while width > 0:
        width -= _column_cm(ws, col)
        col += 1
    while height > 0:
        height -= _row_cm(ws, row)
        row += 1
    return col - 1, row - 1


def used_area(ws):
    """``A1:<last column><last row>`` over every filled cell and every chart of ``ws``."""
    last_col, last_row = 1, 1
    for row in ws.iter_rows():
        for c in row:
            if c.value is not None and c.value != "":
                last_col, last_row = max(last_col, c.column), max(last_row, c.row)
    for merged in ws.merged_cells.ranges:
        last_col, last_row = max(last_col, merged.max_col), max(last_row, merged.max_row)
    for chart in ws._charts:
        col, row = chart_extent(ws, chart)
        last_col, last_row = max(last_col, col), max(last_row, row)
    return f"A1:{get_column_letter(last_col)}{last_row}"


def first_page_last_col(ws):
    """The last column that prints on a paged sheet's first page (at
    :data:`MIN_PRINT_SCALE_PCT`, on the narrower paper, a tenth spared: LibreOffice wraps a
    merged note a little wider than it prints): a note merged up to it prints whole."""
    room = 0.9 * min(w for w, _ in PRINTABLE_PT.values()) * 100 / MIN_PRINT_SCALE_PCT
    used, col = 0.0, 0
    while True:
        width = column_width(ws, get_column_letter(col + 1))
        used += (width * PRINTED_PX_PER_WIDTH + 5) * 0.75
        if used > room:
            return max(col, 1)
        col += 1


def column_width(ws, letter):
    """A column's width in characters (Excel's default, 8.43, when none is set)."""
    width = ws.column_dimensions[letter].width if letter in ws.column_dimensions else None
    return width or 8.43
