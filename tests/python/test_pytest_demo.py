# SPDX-License-Identifier: GPL-2.0-only
# A small pytest suite run by tests/integration/pytest.t, in husk and
# natively: the summaries must match.
import os

import pytest


@pytest.mark.parametrize("x", [1, 2, 3])
def test_square(x):
    assert x * x >= x


def test_tmp_path(tmp_path):
    p = tmp_path / "a.txt"
    p.write_text("hi")
    assert p.read_text() == "hi"


def test_capsys(capsys):
    print("hello")
    assert capsys.readouterr().out == "hello\n"


def test_capfd(capfd):
    os.write(1, b"raw\n")
    assert capfd.readouterr().out == "raw\n"


def test_fails():
    assert 1 + 1 == 3
