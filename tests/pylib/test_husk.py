# SPDX-License-Identifier: GPL-2.0-only
"""The Python package husk (python/husk) over libhusk: results, husk's own
errors as exceptions, timeouts and limits, streaming, asyncio, husk.map,
datasets and the workdir, threads.  Run by tests/integration/python_package.t
(HUSK_BIN, HUSK_LIBRARY and PYTHONPATH set there)."""
import asyncio
import os
import subprocess
import sys
import threading
import time

import pytest

import husk


def test_run_result():
    r = husk.run("python", ["-c", "import os, sys; print(1+1, os.environ['K'], sys.argv[1:])", "a"],
                 timeout=5, memory="256M", env={"K": "V"})
    assert r.exit_status == 0 and r.reason == "exit" and r.ok
    assert r.stdout == b"2 V ['a']\n" and r.stderr == b""
    assert r.stats["event"] == "end" and r.stats["wall_s"] > 0
    assert set(r.stats["phases_ms"]) >= {"create", "load", "run", "destroy"}
    assert [a["event"] for a in r.audit][0] == "start" and r.audit[0]["policy"]["memory"] == 256 << 20


def test_failure_is_a_result():
    r = husk.run("python", ["-c", "import sys; sys.stderr.write('bad\\n'); sys.exit(3)"])
    assert (r.exit_status, r.reason, r.stderr, r.ok) == (3, "exit", b"bad\n", False)
    r = husk.run("lua", ["-e", "error('boom')"])
    assert r.exit_status == 1 and b"boom" in r.stderr


def test_timeout_and_limits():
    t = time.monotonic()
    r = husk.run("lua", ["-e", "while true do end"], timeout=0.5)
    assert (r.exit_status, r.reason) == (124, "timeout") and time.monotonic() - t < 10
    r = husk.run("python", ["-c", "print('x' * 100000)"], output_limit=1000)
    assert r.reason == "output" and len(r.stdout) <= 1000
    r = husk.run("python", ["-c", "b = bytearray(200 << 20)"], memory="64M")
    assert r.exit_status != 0 and r.reason in ("memory", "exit", "crash")


def test_husk_errors_are_exceptions(tmp_path):
    with pytest.raises(husk.UsageError) as e:
        husk.run("python", ["-c", "pass"], memory="1K")
    assert e.value.status == 125 and "memory size" in str(e.value)
    with pytest.raises(husk.UsageError):
        husk.run("no-such-image")
    with pytest.raises(husk.UsageError, match="unknown option"):
        husk.run("python", options={"no-such-option": 1})
    with pytest.raises(husk.StartError):
        husk.run("python", husk_path="/nonexistent/husk")
    bad = tmp_path / "policy.json"
    bad.write_text("[1, 2")
    with pytest.raises(husk.UsageError, match="not JSON"):
        husk.Policy.from_file(bad)
    bad.write_text('{"memory": "lots"}')
    with pytest.raises(husk.UsageError) as e:
        husk.run("python", ["-c", "pass"], policy=husk.Policy.from_file(bad))
    assert e.value.status == 125
    assert isinstance(e.value, ValueError)  # a usage error is a ValueError too


def test_no_kvm_is_a_usage_error():
    code = ("import husk\ntry:\n    husk.run('lua', ['-e', ''])\nexcept husk.UsageError as e:\n"
            "    print(type(e).__name__, e.status, e)\n")
    out = subprocess.run(["unshare", "--mount", "sh", "-c", "mount -t tmpfs none /dev && exec \"$0\" -c \"$1\"",
                          sys.executable, code], capture_output=True, text=True, timeout=60)
    assert out.stdout.startswith("UsageError 125 ") and "/dev/kvm" in out.stdout, out


def test_policy_from_file(tmp_path):
    p = tmp_path / "policy.json"
    p.write_text('{"memory": "64M", "timeout": 5}')
    pol = husk.Policy.from_file(p)
    assert pol.data["memory"] == "64M"
    r = husk.run("python", ["-c", "print(1)"], policy=pol)
    assert r.ok and r.audit[0]["policy"]["memory"] == 64 << 20 and r.audit[0]["policy"]["timeout"] == 5


def test_stdin_kinds(tmp_path):
    code = ["-c", "import sys; print(sys.stdin.read()[::-1])"]
    assert husk.run("python", code, stdin=b"abc").stdout == b"cba\n"
    assert husk.run("python", code, stdin="xyz").stdout == b"zyx\n"
    f = tmp_path / "in"
    f.write_bytes(b"from a file")
    with open(f, "rb") as fh:
        assert husk.run("python", code, stdin=fh).stdout == b"elif a morf\n"
    assert husk.run("python", code).stdout == b"\n"  # none: end of file at once


def test_streaming_callbacks(tmp_path):
    chunks, stamps = [], []

    def on_err(b):
        chunks.append(b)
        stamps.append(time.monotonic())

    code = ("import sys, time\nsys.stderr.write('one\\n'); sys.stderr.flush(); time.sleep(0.5)\n"
            "sys.stderr.write('two\\n'); print('out')")
    out = tmp_path / "out"
    with open(out, "wb") as fh:
        r = husk.run("python", ["-c", code], stderr=on_err, stdout=fh)
    end = time.monotonic()
    assert b"".join(chunks) == b"one\ntwo\n" and r.stderr == b"" and r.stdout == b""
    assert end - stamps[0] > 0.3  # the first chunk came while the program ran
    assert out.read_bytes() == b"out\n"


def test_callback_stops_the_run():
    seen = []

    def stop_at_three(b):
        seen.append(b)
        return len(seen) >= 3

    code = "import sys, time\nwhile True:\n    print('x', file=sys.stderr, flush=True); time.sleep(0.01)"
    t = time.monotonic()
    with pytest.raises(husk.StoppedError):
        husk.run("python", ["-c", code], stderr=stop_at_three, timeout=30)
    assert time.monotonic() - t < 10


def test_callback_exception_propagates():
    def broken(b):
        raise KeyError("from the callback")

    with pytest.raises(KeyError):
        husk.run("python", ["-c", "print(1)"], stdout=broken)


def test_datasets_and_workdir(tmp_path):
    ds, wd = tmp_path / "ds", tmp_path / "wd"
    ds.mkdir()
    wd.mkdir()
    (ds / "in.txt").write_text("dataset")
    r = husk.run("python", ["-c", "open('/workdir/out.txt', 'w').write(open('/data/inputs/in.txt').read().upper())"],
                 ro={"inputs": ds}, workdir=wd)
    assert r.ok and (wd / "out.txt").read_text() == "DATASET"
    assert (ds / "in.txt").read_text() == "dataset"


def test_asyncio():
    async def main():
        t = time.monotonic()
        rs = await asyncio.gather(*[husk.run_async("python", ["-c", f"print({i})"]) for i in range(8)])
        return rs, time.monotonic() - t

    rs, took = asyncio.run(main())
    assert [r.stdout for r in rs] == [f"{i}\n".encode() for i in range(8)]


def test_threads_run_at_once():
    results = {}

    def one(i):
        results[i] = husk.run("python", ["-c", f"import time; time.sleep(0.3); print({i})"]).stdout

    ts = [threading.Thread(target=one, args=(i,)) for i in range(8)]
    t = time.monotonic()
    for x in ts:
        x.start()
    for x in ts:
        x.join()
    took = time.monotonic() - t
    assert results == {i: f"{i}\n".encode() for i in range(8)}
    assert took < 8 * 0.3  # the GIL is released during a run: they overlap


def test_map_200():
    src = "def fn(x):\n    print('noise')\n    return {'in': x, 'sq': x * x}\n"
    out = husk.map(src, range(200), parallel=4, timeout=30)
    assert out == [{"in": i, "sq": i * i} for i in range(200)]


def test_map_failures():
    src = "def fn(x):\n    return 1 / x\n"
    with pytest.raises(husk.TaskError) as e:
        husk.map(src, [1, 0, 2], parallel=2)
    assert e.value.result.exit_status == 1 and "ZeroDivisionError" in str(e.value)
    out = husk.map(src, [1, 0, 2], parallel=2, return_exceptions=True)
    assert out[0] == 1.0 and isinstance(out[1], husk.TaskError) and out[2] == 0.5
    hostile = "def fn(x):\n    while True: pass\n"
    out = husk.map(hostile, [1], timeout=0.5, return_exceptions=True)
    assert out[0].result.reason == "timeout"


def test_results_pickle():
    import pickle
    r = husk.run("python", ["-c", "print(1)"])
    assert pickle.loads(pickle.dumps(r)) == r
    e = pickle.loads(pickle.dumps(husk.UsageError("husk: x", 125, 4)))
    assert (e.message, e.status) == ("husk: x", 125)


def test_audit_larger_than_a_pipe(tmp_path):
    """The audit records come through a pipe read while husk runs: 3,000
    refused files (a denial record each, ~0.5 MB) with the outputs going to
    files, so that the audit pipe alone is read until the run ends."""
    wd = tmp_path / "wd"
    wd.mkdir()
    with open(tmp_path / "out", "wb") as out:
        r = husk.run("python", ["-c", "for i in range(3000): open(f'f{i}.tmp', 'w')\nprint('done')"], workdir=wd,
                     stdout=out, stderr=out, timeout=120, options={"files-allow": ["**", "!*.tmp"]})
    assert r.ok and (tmp_path / "out").read_bytes().startswith(b"done\n") and r.stdout == b""
    denials = [a for a in r.audit if a["event"] == "denial" and a["kind"] == "file policy"]
    assert len(denials) == 3000 and len(r.audit_text) > 1 << 16
    assert r.stats["workdir_denied"] == 3000 and not list(wd.iterdir())


def test_version():
    assert husk.version() == subprocess.run([os.environ["HUSK_BIN"], "--version"], capture_output=True,
                                            text=True).stdout.split()[1]


def test_review_stage(tmp_path):
    wd = tmp_path / "wd"
    wd.mkdir()
    (wd / "a").write_text("a\n")
    (wd / "b").write_text("b\n")
    prog = "open('a', 'a').write('x\\n'); open('b', 'a').write('y\\n'); open('c', 'w').write('z\\n'); open('.env', 'w')"
    r = husk.run("python", ["-c", prog], workdir=wd, review=True, options={"files-refuse": "hidden"})
    assert r.ok and r.stage is not None and os.path.isdir(r.stage.path)
    assert (wd / "a").read_text() == "a\n" and not (wd / "c").exists(), "staged, not applied"
    changes = {c["path"]: c for c in r.stage.changes}
    assert {p: c["action"] for p, c in changes.items()} == {".env": "create", "a": "modify", "b": "modify", "c": "create"}
    assert changes[".env"]["denied"].startswith("a hidden file") and changes["a"]["before"]["size"] == 2
    assert r.stats["workdir_denied"] == 1 and r.stats["workdir_stage"] == r.stage.path
    assert r.stage.diff("a") == "--- a/a\n+++ b/a\n@@ -1 +1,2 @@\n a\n+x\n", r.stage.diff("a")
    with pytest.raises(husk.UsageError):
        r.stage.diff("no-such-path")
    (wd / "b").write_text("the host's\n")
    refused = r.stage.apply(["a", "b"])
    assert [c["path"] for c in refused] == ["b"], "the host's change refused, reported as data"
    assert (wd / "a").read_text() == "a\nx\n" and (wd / "b").read_text() == "the host's\n"
    assert sorted(c["path"] for c in r.stage.pending()) == ["b", "c"]
    assert r.stage.apply(["c"]) == [] and (wd / "c").read_text() == "z\n"
    r.stage.discard()
    assert not os.path.exists(r.stage.path) and not (wd / ".env").exists()
    with pytest.raises(husk.UsageError):
        r.stage.changes  # gone
