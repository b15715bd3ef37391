"""Compute Lab's Excel functions as xlwings Server custom functions (Office.js).

The functions are the ones classic xlwings and xlwings Lite use: ``udfs.excel``. xlwings
must have been imported with ``XLWINGS_ON_SERVER=true`` (``addin.server_app`` sets it) or
the decorators are no-ops and no function would be registered; that is checked here.
"""

from udfs.excel import *  # noqa: F403
from udfs.excel import __all__ as _names

if not all(hasattr(globals()[_name], "__xlfunc__") for _name in _names):
    raise RuntimeError(
        "udfs.excel was imported before XLWINGS_ON_SERVER=true was set, so its functions are "
        "not registered with xlwings Server; start the server with `compute-lab serve`"
    )
