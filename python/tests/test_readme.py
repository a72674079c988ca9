"""The Python examples of README.md and python/README.md run as written."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def python_blocks(path):
    return re.findall(r"```python\n(.*?)```", path.read_text(), flags=re.S)


@pytest.mark.parametrize("readme", ["README.md", "python/README.md"])
def test_readme_examples_run(readme):
    blocks = python_blocks(ROOT / readme)
    assert blocks, f"no python example in {readme}"
    for code in blocks:
        scope = {}
        exec(compile(code, readme, "exec"), scope)
        if "info" in scope:
            assert scope["info"] == 0
        if "report" in scope:
            assert scope["report"].converged
