# SPDX-License-Identifier: GPL-2.0-only
"""The README's library examples (docs/examples/, included in the README
verbatim) run as shown, and hostile Dask tasks leave their workers up."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "docs", "examples")


def readme():
    with open(os.path.join(ROOT, "README.md")) as f:
        return f.read()


@pytest.mark.parametrize("name", ["run_python.py", "run_c.c", "dask_runs.py"])
def test_readme_holds_the_example(name):
    with open(os.path.join(EXAMPLES, name)) as f:
        assert f.read() in readme(), f"README.md does not hold docs/examples/{name} verbatim"


def test_python_example(tmp_path):
    (tmp_path / "ds").mkdir()
    (tmp_path / "out").mkdir()
    out = subprocess.run([sys.executable, os.path.join(EXAMPLES, "run_python.py")], cwd=tmp_path,
                         capture_output=True, text=True, timeout=60)
    assert out.stdout == "0 b'2\\n' b'' True start\n", out


def test_c_example(tmp_path):
    exe = tmp_path / "run_c"
    lib = os.path.join(ROOT, "build", "lib")
    subprocess.run(["cc", "-Wall", "-Werror", "-I", os.path.join(ROOT, "include"), "-o", exe,
                    os.path.join(EXAMPLES, "run_c.c"), "-L", lib, "-lhusk"], check=True)
    out = subprocess.run([exe], capture_output=True, text=True, timeout=60,
                         env=dict(os.environ, LD_LIBRARY_PATH=lib))
    assert out.stdout == "exit, status 0: 2\n", out


def test_dask_example():
    out = subprocess.run([sys.executable, os.path.join(EXAMPLES, "dask_runs.py")], capture_output=True, text=True,
                         timeout=300)
    assert out.stdout.splitlines() == [str([i * i for i in range(20)]), "timeout 124", "exit 1", "exit 1"], out


def test_hostile_tasks_leave_the_workers_up():
    import husk
    from dask.distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=2, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        pids = client.run(os.getpid)
        hostile = [
            ("python", ["-c", "while True: pass"], {"timeout": 1}),
            ("python", ["-c", "import os\nwhile True: os.fork()"], {"timeout": 10}),
            ("python", ["-c", "b = [bytearray(1 << 20) for _ in range(4096)]"], {"memory": "64M"}),
            ("python", ["-c", "print('x' * 10**7)"], {"output_limit": 4096}),
            ("python", ["-c", "import ctypes; ctypes.string_at(0)"], {}),
            ("python", ["-c", "pass"], {"memory": "1K"}),  # husk refuses: an exception in the task
        ]
        futures = [client.submit(husk.run, p, a, pure=False, **kw) for p, a, kw in hostile]
        done = [f.exception() or f.result() for f in futures]
        assert [getattr(r, "reason", None) for r in done[:5]] == ["timeout", "exit", "memory", "output", "crash"], done
        assert isinstance(done[5], husk.UsageError) and done[5].status == 125
        assert client.run(os.getpid) == pids  # the same worker processes, all alive
        r = client.submit(husk.run, "python", ["-c", "print('still here')"], pure=False).result()
        assert r.stdout == b"still here\n"
