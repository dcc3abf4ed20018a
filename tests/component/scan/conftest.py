"""Makes the scan test kit (tests/unit/scan/scankit.py) importable as ``scan_testkit``."""

import importlib.util
import sys
from pathlib import Path

if "scan_testkit" not in sys.modules:
    _path = Path(__file__).resolve().parents[2] / "unit" / "scan" / "scankit.py"
    _spec = importlib.util.spec_from_file_location("scan_testkit", _path)
    _module = importlib.util.module_from_spec(_spec)
    sys.modules["scan_testkit"] = _module
    _spec.loader.exec_module(_module)
