"""The Python examples of docs/api.md run, and print what the page shows
under each (the ```text block that follows it)."""
import contextlib
import io
import os
import re

import pytest

from conftest import ROOT

DOC = os.path.join(ROOT, "docs", "api.md")


def examples():
    with open(DOC) as f:
        text = f.read()
    pairs = re.findall(r"```python\n(.*?)```\n\n```text\n(.*?)```", text, re.S)
    assert len(pairs) >= 4, "docs/api.md lost its Python examples"
    return pairs


@pytest.mark.parametrize("code, want", examples(), ids=lambda v: str(hash(v) % 1000))
def test_example(code, want, monkeypatch):
    monkeypatch.chdir(ROOT)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, DOC, "exec"), {"__name__": "__doc_example__"})
    assert out.getvalue() == want
