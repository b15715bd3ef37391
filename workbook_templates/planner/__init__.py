"""The training-run planner workbook (``training-run-planner.xlsx``), described as data.

Scenario columns D..K hold, in order, the dense reference (Llama 3.1 405B), the MoE
reference (DeepSeek-V3), the DeepSeek-V3-like example plan and blank custom columns.
Every input row on ``Inputs`` and every output row on ``Calculations`` has a workbook-scoped
defined name spanning those columns, named as in :data:`udfs.quantities.PLAN_INPUTS` and
``PLAN_OUTPUTS``. The output formulas are rendered from the model spec (:mod:`udfs.model`),
and the "as used" rows and column C ("Used when blank") from :data:`udfs.plan.RULES`, so
nothing here types the model a second time.

Budget and ranges (issues 10 and 11): ``budget_status`` (a dropdown; the references and the
example preset to Reference, grey and locked) and ``owner`` on Inputs; a blank MFU takes the
calibrated default (the spec's ``calibrated_mfu`` over the Accelerators sheet's
``accel_mfu_intercept``); Calculations adds ``throughput_source``, the uncertainties as used,
``throughput_sigma``, ``price_sigma`` and ``{q}_p10`` / ``{q}_p90`` rows (the spec's
``RANGE_OUTPUTS``), the Summary their P10 / P50 / P90. The Checks sheet's ``master_status``
reads OK, WARN or ERROR (``master_check``: TRUE unless ERROR). The Summary's switch
(``active_scenario_switch``) is blank by default: ``active_scenario`` is then the first
complete custom column, else the example.

One module per sheet: :mod:`.inputs`, :mod:`.calculations`, :mod:`.summary`,
:mod:`.sensitivity`, :mod:`.monthly`, :mod:`.charts`, :mod:`.reference` (Accelerators and
Reference runs), :mod:`.checks`; :mod:`.scenarios` holds the preloaded columns and
:mod:`.layout` the column layout.
"""

from __future__ import annotations

import datetime as _dt

from openpyxl.styles import Alignment

from udfs import catalogue
from udfs.plan import RULES

from ..sheetkit import Book, add_change_log, add_cover, order_sheets, set_properties
from .calculations import calculations_sheet
from .charts import charts_sheet
from .checks import checks_sheet
from .inputs import inputs_sheet
from .layout import FILENAME, N_CUSTOM, SCENARIO_COLUMNS, SHEETS
from .monthly import monthly_sheet
from .own_runs import own_runs_sheet
from .reference import accelerators_sheet, reference_sheet
from .scenarios import scenarios
from .sensitivity import SENS_ACCELERATORS, SENS_MFU, SENS_PRICE, sensitivity_sheet
from .summary import summary_sheet

__all__ = [
    "FILENAME",
    "SCENARIO_COLUMNS",
    "N_CUSTOM",
    "SENS_ACCELERATORS",
    "SENS_MFU",
    "SENS_PRICE",
    "scenarios",
    "build",
]


def build(generated=None):
    """The planner as an openpyxl Workbook (not saved)."""
    generated = generated or _dt.datetime.now().replace(microsecond=0)
    scen = scenarios(generated)
    book = Book()
    accelerators_sheet(book)
    inputs_sheet(book, scen)
    calculations_sheet(book, scen)
    summary_sheet(book, scen)
    sensitivity_sheet(book)
    monthly_sheet(book)
    reference_sheet(book)
    checks_sheet(book, scen)
    own_runs_sheet(book)  # "Our runs" (issue 17): read by the default MFU's formulas
    charts_sheet(book)
    add_change_log(book, generated)
    _cover(book, generated)
    order_sheets(book, [s for s, _ in SHEETS])
    set_properties(book, "Training-run planner", "Compute Lab planning template", generated)
    return book.wb


def _cover(book, generated):
    llama, ds = catalogue.run("Llama 3.1 405B"), catalogue.run("DeepSeek-V3")
    add_cover(
        book,
        "Training-run planner",
        "Plan a large-model training run: from parameters, tokens and accelerators to training "
        "FLOPs, accelerator-hours, wall-clock days, checkpoint size, cost, electricity and CO2, "
        "side by side for several scenarios, with plain Excel formulas (no macros, no add-in).",
        [
            "Inputs: the first three columns hold the dense reference (Llama 3.1 405B), the MoE "
            "reference (DeepSeek-V3) and the DeepSeek-V3-like example plan (Compute Lab "
            "methodology); they are grey and locked (budget status Reference): never counted "
            "in a budget.",
            "For your own plan, use a Custom column: type the total parameters, training tokens "
            "and accelerator count (and active parameters for an MoE model). Every other input "
            "starts blank: a blank input takes column C, shown greyed on Calculations until you "
            "type your own figure (type the price and the start date: a default is a WARN in the "
            "hand-off; a "
            "blank power takes the accelerator's TDP from the catalogue, else "
            f"{RULES['watts_per_accelerator'].default:,.0f} W; a blank MFU the calibrated default "
            "for the accelerator and the model size). Set the budget status (blank counts as "
            "Proposed) and the owner.",
            "Summary: it shows your first filled custom column (else the example); type 1-8 in "
            "the switch to pick another. Sensitivity, Monthly spend and Charts follow it. "
            "Ranges: P10 / P50 / P90 of hours, days and costs.",
            "Checks: the master check reads OK, WARN (something needs a look: a calibrated "
            "default throughput or an override in the budget, a blank budget status) or ERROR "
            "(also shown here and on the Summary).",
            "Figures are planning estimates from a linear model (6 x active parameters x tokens, "
            "perfect scaling); see the notes on each sheet.",
        ],
        SHEETS[1:],
        [
            f"Llama 3.1 405B: {catalogue.source('run', llama['name'])}; "
            f"{catalogue.source('run', llama['name'], 'accelerators')}",
            f"DeepSeek-V3: {catalogue.source('run', ds['name'])}; "
            f"{catalogue.source('run', ds['name'], 'accelerator_hours')}",
            "The DeepSeek-V3-like example plan (Compute Lab methodology): 400 effective "
            "TFLOP/s, $2.0/hour, 700 W",
            "Accelerators and further runs: the Accelerators and Reference runs sheets, a source "
            "beside every figure",
            "Defaults: world-average grid intensity 481 gCO2/kWh (Ember 2023); MFU default = "
            "calibrated on runs with public accelerator-hours by accelerator generation, "
            "validated with each organisation left out (Accelerators sheet; "
            "docs/methodology-calibration.md)",
        ],
        generated,
    )
    ws = book.wb["Cover"]
    for row in ws.iter_rows(max_col=2):
        for cell in row:  # the master check in three states (sheetkit's cover reads TRUE/FALSE)
            if isinstance(cell.value, str) and cell.value.startswith('=IF(master_status="OK",'):
                cell.value = (
                    '=IF(master_status="OK","OK: every check passes",IF(master_status="WARN",'
                    '"WARN: every check passes; have a look at the warnings on Checks",'
                    '"ERROR: "&master_cause&" (Checks sheet)"))'
                )
                cell.alignment = Alignment(vertical="top", wrap_text=True)  # a long cause
    ws.page_setup.fitToHeight = 1  # the Cover prints on one page
