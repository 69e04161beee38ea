"""The examples run as documented against a daemon with two devices."""
import pathlib
import subprocess
import sys

import pytest

EXAMPLES = pathlib.Path(__file__).parents[1] / "examples"


@pytest.mark.parametrize("example", ["vadd.py", "matmul.py", "gradient_merge.py", "async_pipeline.py"])
def test_the_example_runs(daemon, example):
    r = subprocess.run([sys.executable, str(EXAMPLES / example), "--target", daemon.unix], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert ": ok" in r.stdout, r.stdout
