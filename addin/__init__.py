"""Getting Compute Lab's Excel functions (:mod:`udfs.excel`) into Excel.

- :mod:`addin.classic`: Windows desktop Excel through the free xlwings add-in
  (``compute-lab addin install``);
- :mod:`addin.server_app` and the project in ``addin/server``: Office.js custom functions
  through xlwings Server, an optional extra with its own licence (``compute-lab serve``);
- :mod:`addin.lite`: the xlwings Lite bundle (``compute-lab lite-bundle``);
- :mod:`addin.commands`: those commands, registered with ``compute-lab``;
- :mod:`addin.local_server`: start a server process, wait for it, stop it (tests, benchmark).
"""
