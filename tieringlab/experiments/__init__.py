"""One module per paper (or notebook): the experiment grid -> labelled ``xarray.Dataset``.

Each module registers its ``params.yaml`` section with :func:`tieringlab.params.section`.
Importing this package imports every submodule, so the schema is always complete.
"""

from __future__ import annotations

import importlib
import pkgutil

for _mod in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    importlib.import_module(f"{__name__}.{_mod.name}")
