"""The hand-off's tables as CSV files: one file per table, named after it, columns named after
the quantities (``total_cost_usd_p90``), text guarded against formula injection
(:func:`workbook_templates.sheetkit.safe_text`), 15 significant digits, dates ``yyyy-mm-dd``."""

from __future__ import annotations

import datetime as _dt
import math

from udfs.schedule import is_money

from ..sheetkit import TEMPLATE_VERSION, safe_text

__all__ = [
    "ACTUALS_CSV_FILES",
    "BASELINE_CSV",
    "CSV_FILES",
    "FORECAST_FILES",
    "README",
    "STAMP_COLUMNS",
    "csv_frame",
    "csv_frames",
    "csv_writer",
    "column_meaning",
    "readme_text",
]

#: The CSV file written beside them with ``--baseline`` (this hand-off against the baseline).
BASELINE_CSV = "baseline"
#: The CSV files written by ``--csv`` (each ``<name>.csv``), one per table.
CSV_FILES = (
    "runs",
    "costs",
    "ranges",
    "budget",
    "status_totals",
    "assumptions",
    "not_in_budget",
    "blank_inputs",
    "totals",
    "monthly",
    "quarterly",
    "fiscal_years",
    "monthly_by_run",
    "fpa",
    "mismatches",
    "checks",
    "files",
    "sources",
)

#: The CSV files added when actuals are given (``report --actuals``).
ACTUALS_CSV_FILES = ("variance",)
#: The CSV files a hand-off with actuals adds (the forecast's tables).
FORECAST_FILES = ("forecast", "forecast_runs", "forecast_status", "forecast_years")

#: Columns every CSV file ends with: the hand-off's version label (report --version, blank
#: without it), its template version and its as-of date.
STAMP_COLUMNS = ("version", "template_version", "as_of_date")
#: The name of the data dictionary written beside the CSV files.
README = "README.txt"


def csv_frames(c, as_of):
    """{name: DataFrame} of the tables to write: text guarded, US$ to the cent, and every
    row stamped with the version label, the template version and the as-of date (``as_of``,
    a date). ``baseline.csv`` is written only with a baseline (report --baseline)."""
    extra = [BASELINE_CSV] if BASELINE_CSV in c.tables else []
    added = (*ACTUALS_CSV_FILES, *FORECAST_FILES)
    names = [*CSV_FILES, *extra, *(n for n in added if n in c.tables)]
    return {name: csv_frame(c, name, as_of) for name in names}


def csv_frame(c, name, as_of):
    """The table ``name`` of ``c`` as its CSV file holds it (:func:`csv_frames`)."""
    import pandas as pd  # here: the command reads its files before pandas is imported

    df = c.tables[name].copy()
    for col in df.columns:
        if is_money(col) and pd.api.types.is_numeric_dtype(df[col]):
            df[col] = df[col].round(2)
        elif not pd.api.types.is_numeric_dtype(df[col]):
            df[col] = df[col].map(safe_text)
    df["version"] = safe_text(c.version or "")
    df["template_version"] = TEMPLATE_VERSION
    df["as_of_date"] = as_of
    return df


def csv_writer(df):
    """A function writing ``df`` as CSV to a path."""

    def write(path):
        frame = df.copy()
        for col in frame.columns:
            if frame[col].dtype == object:  # float_format skips mixed columns
                frame[col] = frame[col].map(
                    lambda v: f"{v:.15g}" if isinstance(v, float) and math.isfinite(v) else v
                )
            if frame[col].map(lambda v: isinstance(v, _dt.date)).any():
                frame[col] = frame[col].map(
                    lambda v: v.isoformat() if isinstance(v, _dt.date) else v
                )
        # 15 significant digits: what a double holds exactly, without the last-bit noise
        # of a sum (30840000.00000001 is written 30840000); 3.79e+25 FLOPs stay exact.
        frame.to_csv(path, index=False, encoding="utf-8", lineterminator="\n", float_format="%.15g")

    return write


#: What each file holds (the data dictionary's first lines per file).
FILE_NOTES = {
    "runs": "one row per budget run: every input (as typed, or the value used when blank) "
            "and every output",
    "costs": "one row per budget run: compute, electricity and other costs, and their shares",
    "ranges": "one row per budget run: P10, P50 and P90 of hours, days and costs",
    "budget": "one row per budget run: status, approval, approver, approved amount, owner, "
              "cost centre, months (the P50 run's and the P90 run's end), costs, P90, "
              "contingency and its throughput and price parts",
    "status_totals": "one row per line of the budget (Approved, Proposed, and Proposed "
                     "(approval incomplete) when a run typed Approved lacks its approval), each "
                     "figure the sum of the line's runs: no total row, sum the rows",
    "assumptions": "one row per budget run: price, throughput source, TFLOP/s, MFU, PUE, $/kWh",
    "not_in_budget": "Reference and Excluded runs: listed, never summed",
    "blank_inputs": "one row per default applied (an input left blank) per budget run",
    "totals": "one row: the budget's totals (the only file that is a total), with the P90 if "
              "the runs were independent",
    "monthly": "every month from the first to the last, 0 where nothing is spent; each amount "
               "the sum of the month's rows of monthly_by_run.csv (runs without a start date "
               "are in totals.csv only)",
    "quarterly": "every fiscal quarter of the fiscal years touched, 0 where nothing is spent; "
                 "each amount the sum of its months in monthly.csv",
    "fiscal_years": "one row per fiscal year; each amount the sum of its months in monthly.csv",
    "monthly_by_run": "one row per budget run and month of its P90 run (the P50 run's months "
                      "and the later ones its P90 run spends in, at a P50 of 0); a run without "
                      "a start date has no month and no row here (monthly.csv's Unscheduled "
                      "row, fpa.csv's rows with a blank month hold it)",
    "fpa": "long format for a pivot or an FP&A tool: one row per run, month and account "
           "(compute, electricity, other): the rounded rows every other file sums, so p50_usd "
           "and p90_usd add up to the budget's total and P90 to the cent; a month of the P90 "
           "run after the P50 run has p50_usd 0; a run without a start date has month blank "
           "and fiscal year 'unscheduled'. Each row has the run's cost centre, GL account, "
           "expense class (capex or opex) and currency; a compute row the run's GL account, "
           "its P50 and P90 accelerator-hours and its rate (electricity and other rows: GL "
           "account blank, for FP&A to code)",
    "forecast": "with actuals: one row per budget run and month, fpa_scenario 'actual' (a "
                "month locked to its actual spend: p10 = p50 = p90) or 'forecast' (the rest of "
                "the run, P10 / P50 / P90 of the remaining part only); a run's rows add up to "
                "its estimate at completion (forecast_runs) at each quantile, to the cent; a "
                "run not started follows its budget (p50_usd its P50 months)",
    "forecast_runs": "with actuals: one row per budget run: progress, hours per token (the "
                     "plan's, the run's own, pooled), today's price, budget, actual to date, "
                     "estimate at completion P10 / P50 / P90 and variance",
    "forecast_status": "with actuals: budget, actual to date, forecast at completion (P50) and "
                       "variance by budget status; sum the rows",
    "forecast_years": "with actuals: the same by fiscal year (budget: the P50 schedule; a run "
                      "without a start date and without actuals in an 'Unscheduled' row)",
    "mismatches": "saved planner values that differ from the engine",
    "checks": "every check: OK, WARN, ERROR or INFO",
    "files": "the planners read: size, SHA-256, template version",
    "sources": "method, defaults and catalogue figures with their sources",
    "variance": "plan against actual in long format (report --actuals): one amount per run "
                "code, month, scenario and account; budget rows are the P50 plan's months "
                "(total per month, as fpa.csv sums them), actual rows the actuals, forecast "
                "rows each run's actual months then its re-forecast (P50), variance rows the "
                "five parts of each month's variance (actual - budget) up to the as-of month "
                "(the budget runs' last month with actuals), adding up to it to the cent; "
                "account unplanned: spend on a run code no budget run has; account "
                "unallocated (run code '(unallocated)'): FOCUS spend without a run tag",
    "baseline": "with report --baseline: this hand-off against the baseline hand-off, one row "
                "per run and month (P50 now and in the baseline) and one 'run total' row per "
                "run; the month rows add up to the run total row; a run Approved in the "
                "baseline has its approved amount on its run total row "
                "(baseline_approved_usd), apart from the change",
}  # fmt: skip
#: Column meanings particular to one file (over COLUMN_NOTES).
FILE_COLUMN_NOTES = {
    "variance": {
        "run_code": "the run's code: the planner's Run code, else derived from the team and "
                    "scenario name; the key actuals files use",
        "scenario": "budget (the plan), actual, forecast, or variance (a part of it)",
        "account": "total for budget, actual and forecast; for variance one of volume, rate, "
                   "efficiency, scope, timing; unplanned or unallocated for actual spend no "
                   "budget run holds",
        "amount_usd": "US$, to the cent",
        "month": "first day of the month, yyyy-mm-dd",
    },
    "fpa": {
        "month": "first day of the month, yyyy-mm-dd (blank: a run without a start date)",
        "fiscal_year": "the fiscal year (--fiscal-year-start): FY2027 or FY2026/27; "
                       "'unscheduled' for a run without a start date",
        "quarter": "the fiscal quarter: FY2027 Q1; 'unscheduled' for a run without a start date",
        "gl_account": "the run's general-ledger account as typed on the planner, on compute "
                      "rows only: the planner's GL account is the compute account; blank on "
                      "electricity and other rows (for FP&A to code) and when none was typed "
                      "(a WARN on checks.csv)",
        "cost_centre": "the cost centre the run is charged to, typed on the planner, on every "
                       "row of the run; blank if not typed (a WARN on checks.csv)",
        "accelerator_hours": "the run's P50 accelerator-hours in the month (compute rows; blank "
                             "on the others): the quantity the rate prices; a run's months add "
                             "up to its accelerator-hours; 0 in a month only the P90 run "
                             "reaches",
        "accelerator_hours_p90": "the P90 run's accelerator-hours in the month (compute rows; "
                                 "blank on the others): the run's P90 accelerator-hours spread "
                                 "over the P90 run's days, so a month after the P50 run has its "
                                 "hours here; a run's months add up to its P90 "
                                 "accelerator-hours. p90_usd also holds the price's P90, so it "
                                 "can exceed accelerator_hours_p90 x rate",
        "p50_usd": "US$, the P50 of the run's account in the month, to the cent: the rows every "
                   "other file sums",
        "p90_usd": "US$, the P90 of the run's account in the month (compute and electricity on "
                   "the P90 run's days; other costs as at P50), to the cent",
    },
    "checks": {
        "check": "what is checked, e.g. 'Typed, not defaults', 'Approval', 'FP&A codes'",
        "status": "OK, INFO (nothing to do), WARN (a person should look) or ERROR (a real "
                  "failure, e.g. a file left out); the worst is the hand-off's master check",
        "file": "the planner file the line is about (blank: the whole hand-off)",
        "detail": "what was found, naming the scenario and the planner cells (sheet!cell)",
    },
    "mismatches": {
        "sheet": "the planner sheet of the output cell",
        "cell": "the output cell (e.g. G41) whose saved value differs",
        "name": "the output quantity the cell holds (its column in runs.csv)",
        "cached_value": "the value saved in the file (by the spreadsheet, or typed over the "
                        "formula)",
        "engine_value": "the engine's value of the same output from the same inputs",
        "relative_difference": "|saved - engine| / the larger of the two (blank: a saved "
                               "value that is not a number)",
        "cell_holds": "formula, or typed value (a number typed over the output's formula)",
    },
    "files": {
        "size_bytes": "the file's size in bytes",
        "sha256": "the SHA-256 of the file's bytes (hex): which file exactly was read",
        "planner_template_version": "the planner template version saved in the file (blank: "
                                    "none found)",
        "scenarios_read": "the scenario columns read with inputs (in the budget or not)",
        "budget_status_row": "yes, or 'no (an older planner): status unknown' when the file "
                             "has no Budget status row",
        "cached_values": "yes when a spreadsheet saved the outputs' values (compared with the "
                         "engine on mismatches.csv), else 'no (never recalculated)'",
    },
    "blank_inputs": {
        "input_label": "the input's label on the planner (e.g. Price per accelerator-hour)",
        "input": "the input's name (its column in runs.csv)",
        "value_used": "the value the hand-off used in place of the blank",
        "unit": "the unit of value_used",
        "why": "where the value used comes from (the default's rule and source)",
    },
    "sources": {
        "section": "Method (how figures are computed), Assumption, Input default or "
                   "Accelerator (catalogue figure)",
        "item": "what the row is about (a formula, a default's input, an accelerator)",
        "value": "the figure used (blank for a method row)",
        "unit": "the unit of value",
        "detail": "the formula, rule or source of the figure",
    },
    "totals": {
        "files": "planner files consolidated",
        "runs": "budget runs (Approved, Proposed, status unknown) summed",
        "not_in_budget_runs": "Reference and Excluded runs listed in not_in_budget.csv, not "
                              "summed",
        "accelerator_hours": "the budget runs' P50 accelerator-hours, summed",
        "electricity_kwh": "the budget runs' P50 electricity in kWh, summed",
        "co2_tonnes": "the budget runs' operational emissions in tonnes of CO2, summed",
    },
    "status_totals": {
        "runs": "budget runs on the line",
        "accelerator_hours": "the line's runs' P50 accelerator-hours, summed",
    },
    "monthly": {
        "runs": "budget runs spending in the month (at P50 or at P90)",
    },
    "not_in_budget": {
        "budget_status": "Reference or Excluded, as typed on the planner: why the run is "
                         "listed and never summed",
        "total_cost_usd": "US$ to the cent, the run's P50 total cost (compute + electricity + "
                          "other costs): listed for comparison, in no total and no fpa.csv row",
    },
    "forecast_status": {
        "runs": "budget runs with that status",
    },
    "forecast": {
        "month": "first day of the month, yyyy-mm-dd (blank: a run without a start date and "
                 "without actuals)",
        "fiscal_year": "the fiscal year (--fiscal-year-start): FY2027 or FY2026/27; "
                       "'Unscheduled (no start date)' for a run without a start date and "
                       "without actuals",
    },
    "forecast_years": {
        "fiscal_year": "the fiscal year (--fiscal-year-start): FY2027 or FY2026/27; "
                       "'Unscheduled (no start date)' for runs without a start date and "
                       "without actuals",
    },
    "baseline": {
        "month": "first day of the month, yyyy-mm-dd (blank on 'unscheduled' and 'run total' "
                 "lines)",
        "p50_usd": "US$, this hand-off's P50 of the run in the month (its fpa.csv rows "
                   "summed), or its total on the run total line, to the cent",
    },
}  # fmt: skip
#: Meanings of the columns that are not a quantity of udfs.quantities.
COLUMN_NOTES = {
    "run_code": "the run's key: the planner's Run code, or (when blank) derived from the "
                "owner and the scenario name as OWNER-SCENARIO (run_code_derived yes); never "
                "changed by editing the status, dates, price or plan; unique per hand-off",
    "run_code_derived": "yes when the Run code was blank and derived from the owner and the "
                        "scenario name",
    "plan_fingerprint": "P- and 10 hex digits from every input that prices the run (not its "
                        "name, run code, status, owner or approval): changes when the plan "
                        "changes, unlike run_code",
    "version": "the hand-off's version label (report --version), blank without one",
    "baseline_version": "the baseline hand-off's version label (report --baseline)",
    "baseline_as_of": "the baseline hand-off's as-of date",
    "baseline_status": "the run's budget status in the baseline (blank: not in it)",
    "line": "'month' (one month), 'unscheduled' (a run without a start date) or 'run total'",
    "baseline_p50_usd": "US$, the baseline's P50, to the cent (a run total: the sum of the "
                        "run's months)",
    "baseline_approved_usd": "US$, on the run total row of a run Approved in the baseline: "
                             "its approved amount then (the baseline's P50 when the baseline "
                             "has no approved amount); blank on the other rows. Not a change: "
                             "change_usd compares the P50s",
    "change_usd": "p50_usd - baseline_p50_usd, US$, to the cent",
    "change": "what changed: new run, not in this hand-off, the plan's inputs that changed",
    "file": "the planner file as given on the command line",
    "column": "the planner's scenario column letter",
    "scenario": "the scenario's name (Inputs, first row)",
    "budget_status": "Approved or Proposed (a blank status counts as Proposed; 'status "
                     "unknown' for an older planner without the row); in budget.csv "
                     "and status_totals.csv a run typed Approved without its reference, date, "
                     "approver or approved amount is on the line 'Proposed (approval "
                     "incomplete)', counted as Proposed",
    "status": "Approved or Proposed (a run typed Approved whose approval is incomplete counts "
              "as Proposed), or 'status unknown' (an older planner without the row)",
    "approval": "an Approved run's reference, date, approver and approved amount "
                "('CFO-2027-01 (2027-01-04), CFO, $120.0M'), and '; P50 $31.5M over' "
                "when its P50 total cost is over that amount; for a run typed Approved "
                "without its reference, date, approver or approved amount (counted as "
                "Proposed), what is missing ('missing: approver, amount')",
    "approver": "who approved the run (typed on the planner)",
    "approved_amount_usd": "the amount approved, US$ (typed on the planner); a P50 total cost "
                           "over it is a WARN on checks.csv",
    "cost_centre": "the cost centre the run is charged to (typed on the planner; blank if not)",
    "gl_account": "the general-ledger account of the run's compute cost (typed on the "
                  "planner; blank if not); fpa.csv puts it on compute rows only",
    "expense_class": "capex for the compute of a run priced as owned (the ownership "
                     "equivalent of owned capacity), else opex (rented compute, electricity, "
                     "other costs)",
    "currency": "USD: every amount of the hand-off is in US dollars",
    "throughput_source": "where the run's effective TFLOP/s comes from: typed throughput (the "
                         "override), typed MFU, or calibrated default (the calibrated MFU)",
    "scheduled": "yes when the run has a start date (spread over months), else 'no: no "
                 "start date' (in totals.csv only)",
    "compute_cost_usd": "Compute cost (US$ to the cent), P50: accelerator-hours x price per "
                        "accelerator-hour (rental or the ownership equivalent); the sum of "
                        "the matching fpa.csv compute rows",
    "electricity_cost_usd": "Electricity cost (US$ to the cent), P50: kWh x US$ per kWh; 0 (blank "
                            "in runs.csv and costs.csv) when unpriced: a rental all-in price "
                            "includes the power; the sum of the matching fpa.csv electricity "
                            "rows",
    "other_costs_usd": "Other costs of the run (US$): storage, data, staff... typed on the "
                       "planner as one sum, no range (the same at P90); in the monthly files "
                       "the month's part, spread evenly over the P50 run's months",
    "training_tokens": "Training tokens (tokens): the tokens the run trains on, as typed on "
                       "the planner",
    "total_cost_usd": "Total cost (US$ to the cent), P50: compute + electricity + other "
                      "costs (the sum of the matching fpa.csv p50_usd rows)",
    "total_cost_usd_p90": "Total cost, P90 (US$ to the cent): compute and electricity at P90 "
                          "+ other costs (the sum of the matching fpa.csv p90_usd rows); a "
                          "sum of runs sums their P90s",
    "compute_cost_share": "compute_cost_usd / total_cost_usd (a fraction)",
    "electricity_cost_share": "electricity_cost_usd / total_cost_usd (a fraction)",
    "other_costs_share": "other_costs_usd / total_cost_usd (a fraction)",
    "cumulative_total_cost_usd": "US$, the running sum of total_cost_usd from the first row "
                                 "to this one",
    "first_month": "the period's first month, yyyy-mm-dd",
    "approved_total_cost_usd": "US$, the P50 total cost of the Approved runs (an approval "
                               "complete), summed",
    "proposed_total_cost_usd": "US$, the P50 total cost of the Proposed runs, summed, "
                               "including runs typed Approved whose approval is incomplete",
    "status_unknown_total_cost_usd": "US$, the P50 total cost of the runs of older planners "
                                     "without a Budget status row, summed",
    "scheduled_total_cost_usd": "US$, the P50 total cost of the runs with a start date (the "
                                "months of monthly.csv), summed",
    "unscheduled_total_cost_usd": "US$, the P50 total cost of the runs without a start date "
                                  "(in no month), summed",
    "rate": "US$ per accelerator-hour, the run's price (compute rows; blank on the others)",
    "account": "compute (the price per accelerator-hour x hours), electricity, other",
    "p50_usd": "US$, the estimate (P50), to the cent",
    "p90_usd": "US$, the P90 (exceeded by one run in ten), to the cent",
    "month": "first day of the month, yyyy-mm-dd",
    "fiscal_year": "the fiscal year (--fiscal-year-start): FY2027 or FY2026/27",
    "quarter": "the fiscal quarter: FY2027 Q1",
    "contingency_usd": "P90 - P50 of the total cost, US$",
    "contingency_throughput_usd": "the part of the contingency from throughput risk (a slower "
                                  "run: more accelerator-hours and electricity), US$; with "
                                  "contingency_price_usd it adds up to contingency_usd",
    "contingency_price_usd": "the part of the contingency from price risk (the price per "
                             "accelerator-hour above the estimate), US$: the compute cost's "
                             "contingency x price_sigma^2 / (throughput_sigma^2 + "
                             "price_sigma^2)",
    "expected_cost_usd": "the run's expected (mean) total cost, US$ to the cent: P50 x "
                         "EXP(sigma^2 / 2), sigma = LN(P90 / P50) / NORM.S.INV(0.9) (the cost "
                         "taken lognormal); above the P50 when the range is wide",
    "total_cost_usd_p90_independent": "the budget's P90 if the runs' costs were independent "
                                      "(Fenton-Wilkinson lognormal sum), US$; "
                                      "total_cost_usd_p90 sums the runs' P90s (every run late "
                                      "together)",
    "start_month": "the first month of the run, yyyy-mm-dd (blank: no start date)",
    "end_month": "the last month of the P50 run, yyyy-mm-dd",
    "end_month_p90": "the last month of the P90 run (the P90 accelerator-hours at the run's "
                     "capacity), yyyy-mm-dd: where the P90 spend ends",
    "share": "the month's share of the P50 run (0 in a month of the P90 run after it)",
    "template_version": "the hand-off's template version",
    "as_of_date": "the date the hand-off was made, yyyy-mm-dd",
    "defaults_used": "the defaults applied to blank inputs, one text",
    "run_status": "not started (no actuals), running, completed or failed (the latest actual "
                  "month's status; running when none is given)",
    "fpa_scenario": "actual (a month locked to its actuals) or forecast",
    "p10_usd": "US$, P10 (one run in ten spends less), to the cent",
    "fraction_done": "tokens processed / plan tokens (without token counts: accelerator-hours "
                     "to date / plan accelerator-hours); 1 for a completed or failed run",
    "tokens_processed": "tokens processed to date (blank when a month does not give them)",
    "accelerator_hours_to_date": "accelerator-hours to date, from the actuals",
    "plan_hours_per_token": "the plan's accelerator-hours per token (the prior)",
    "observed_hours_per_token": "the run's own accelerator-hours per token to date",
    "pooled_hours_per_token": "the forecast's hours per token: the observed pulled toward the "
                              "plan's by pull",
    "pull": "fraction_done / (fraction_done + own_runs_k): how far the forecast moves to the "
            "observed hours per token",
    "sigma_remaining": "spread (sigma of ln hours) of the remaining part: the plan's x "
                       "SQRT(1 - pull); its compute cost adds the plan's price spread",
    "usd_per_accelerator_hour_today": "US$ per accelerator-hour the hours left are priced at: "
                                      "compute (the latest actual month with hours: its spend "
                                      "less its electricity and the plan's other costs of the "
                                      "month, per hour; else the plan's price) + electricity "
                                      "(that month's electricity_usd per hour, else the plan's "
                                      "kWh per hour x US$ per kWh); the plan's other costs "
                                      "left are added as a sum, never per hour",
    "budget_usd": "US$, the budget (P50), to the cent",
    "actual_to_date_usd": "US$, the actual spend to date, to the cent",
    "eac_usd": "US$, the forecast at completion (P50): actual to date + the remaining part",
    "eac_usd_p10": "US$, the forecast at completion, P10",
    "eac_usd_p90": "US$, the forecast at completion, P90",
    "variance_usd": "US$, forecast at completion - budget (above 0: over budget)",
}  # fmt: skip


def _quantity_notes():
    """{name: meaning} of the spec's inputs and outputs (:mod:`udfs.quantities`): the label,
    the unit and the note (the rule or formula) the planner shows."""
    from udfs.quantities import PLAN_INPUTS, PLAN_OUTPUTS, RANGE_OUTPUTS

    notes = {}
    for q in (*PLAN_INPUTS, *PLAN_OUTPUTS, *RANGE_OUTPUTS):
        text = q.label + (f" ({q.unit})" if q.unit else "")
        notes[q.name] = f"{text}: {q.note}" if q.note else text
    return notes


def column_meaning(name, col, quantities=None):
    """What column ``col`` of the file ``name`` holds: its note for that file
    (:data:`FILE_COLUMN_NOTES`), else its note (:data:`COLUMN_NOTES`), else the quantity's
    label, unit and note. A column without one is a LookupError: every column is explained."""
    quantities = _quantity_notes() if quantities is None else quantities
    for notes in (FILE_COLUMN_NOTES.get(name, {}), COLUMN_NOTES, quantities):
        if col in notes:
            return notes[col]
    raise LookupError(f"{name}.csv: column {col!r} has no meaning in the data dictionary")


def readme_text(frames, version=None):
    """The data dictionary (``README.txt``): every file, every column and what it means
    (:func:`column_meaning`); ``version`` is the hand-off's version label (report --version)."""
    quantities = _quantity_notes()
    lines = [
        "Compute Lab finance hand-off: CSV files (UTF-8, comma-separated, one header row).",
        f"Version: {version}" if version else "Version: (none given; report --version labels it)",
        "Amounts in US$ are rounded once, to the cent, per run, month and account (fpa.csv);",
        "every other amount is a sum of those rows, so the files tie to the cent. Other",
        "numbers carry 15 significant digits;",
        "dates are yyyy-mm-dd. No file has a total row except totals.csv: sum the rows.",
        "Every row ends with version, template_version and as_of_date. Text that a",
        "spreadsheet would read as a formula starts with an apostrophe.",
        "",
    ]
    for name, df in frames.items():
        lines.append(f"{name}.csv: {FILE_NOTES[name]}")
        lines += [f"  {col}: {column_meaning(name, col, quantities)}" for col in df.columns]
        lines.append("")
    return "\n".join(lines)
