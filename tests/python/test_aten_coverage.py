"""docs/aten-coverage.md is what scripts/aten_coverage.py writes from the
lowering table today."""
import os
import subprocess
import sys

from conftest import ROOT


def test_coverage_page_is_current():
    r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "aten_coverage.py"), "--check"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
