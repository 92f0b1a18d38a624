# SPDX-License-Identifier: GPL-2.0-only
"""Run programs in husk's microVMs from Python.

    import husk
    r = husk.run("python", ["-c", "print(1+1)"], timeout=5, memory="256M")
    r.exit_status, r.stdout, r.stderr, r.audit, r.stats

Each run is a fresh VM, as with ``husk run`` (the package is a thin layer
over libhusk, include/husk.h).  husk's own failures (a bad option or
policy, no /dev/kvm, no husk executable) raise HuskError subclasses; a
program that fails, crashes or hits a limit is a Result, not an exception.
The GIL is released while a run goes on: threads (and ``run_async``) run
sandboxes concurrently.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import functools
import json
import os
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence, Union

from ._lib import ffi, lib

__all__ = [
    "run", "run_async", "map", "Result", "Policy", "Stage", "HuskError", "UsageError", "HostError",
    "StartError", "StoppedError", "TaskError", "version",
]

# husk's own exit statuses (husk.h's enum husk_exit_status).
EXIT_USAGE = lib.HUSK_EXIT_USAGE


class HuskError(Exception):
    """husk did not run the program.  ``message`` is husk's one line,
    ``status`` husk's exit status where husk itself refused (125: a bad
    option, policy, program or no /dev/kvm; 120: husk or KVM failed)."""

    def __init__(self, message: str, status: Optional[int] = None, code: int = 0):
        super().__init__(message, status, code)
        self.message, self.status, self.code = message, status, code

    def __str__(self) -> str:
        return self.message


class UsageError(HuskError, ValueError):
    """A bad option, value, policy, program or dataset; or no /dev/kvm."""


class HostError(HuskError, OSError):
    """The host failed: husk or KVM (status 120), or a host call of the library."""


class StartError(HuskError, FileNotFoundError):
    """The husk executable could not be started (set HUSK_BIN)."""


class StoppedError(HuskError):
    """An output callback stopped the run."""


class TaskError(Exception):
    """A task of ``husk.map`` failed: its ``result`` says how."""

    def __init__(self, message: str, result: "Result"):
        super().__init__(message, result)
        self.result = result

    def __str__(self) -> str:
        return self.args[0]

    def __repr__(self) -> str:
        return f"TaskError({self.args[0]!r})"


@dataclasses.dataclass(frozen=True)
class Result:
    """How a run ended.  ``exit_status`` is husk's exit status: the
    program's, or 124 (timeout), 152 (CPU time), 153 (output limit), 123
    (the workdir not written back), 128+N (a signal).  ``reason`` is the
    audit's: exit, crash, timeout, cpu, output, memory, panic, error.
    ``stdout``/``stderr`` hold what was collected (empty where a stream went
    to a file or a callback).  ``audit`` is the run's audit records,
    ``stats`` the end record (wall_s, cpu_s, peak_guest_memory, phases_ms,
    start, ...); both are read from ``audit_text`` (JSON lines) when first
    asked for."""

    exit_status: int
    reason: str
    stdout: bytes
    stderr: bytes
    audit_text: str = dataclasses.field(repr=False)

    @functools.cached_property
    def audit(self) -> list:
        """The run's audit records, in order."""
        return [json.loads(line) for line in self.audit_text.splitlines() if line]

    @functools.cached_property
    def stats(self) -> dict:
        """The run's end record (the last; husk writes it last)."""
        for line in reversed(self.audit_text.splitlines()):
            rec = json.loads(line) if line else None
            if isinstance(rec, dict) and rec.get("event") == "end":
                return rec
        return {}

    @property
    def ok(self) -> bool:
        """The program exited with status 0."""
        return self.reason == "exit" and self.exit_status == 0

    @property
    def stage(self) -> Optional["Stage"]:
        """The workdir's changes, staged (``review=True``, or a file policy
        some of whose changes the host refused), or None."""
        path = self.stats.get("workdir_stage")
        return Stage(path) if path else None


class Stage:
    """A run's staged workdir changes (``husk review|apply|discard``): a
    directory beside the workdir, DIR.husk-stage-ID.  ``changes`` lists
    them as data (path, action: create/modify/replace/rename/delete/mode,
    type, size, mode, state: staged/applied/dropped, "denied" with the file
    policy's reason, "before": the host's entry when the run started);
    ``diff(path)`` the change as a unified diff."""

    def __init__(self, path: Union[str, os.PathLike]):
        self.path = os.fspath(path)

    def manifest(self) -> dict:
        """The stage's manifest (``husk review STAGE --json``)."""
        err = ffi.new("struct husk_error *")
        text = lib.husk_stage_manifest(_b(self.path), err)
        if text == ffi.NULL:
            _raise(err)
        try:
            return json.loads(ffi.string(text).decode())
        finally:
            lib.husk_free(text)

    @property
    def changes(self) -> list:
        return self.manifest()["changes"]

    def diff(self, path: Union[str, os.PathLike]) -> str:
        """The change at ``path`` as a unified diff against the host's file
        (a binary file: its sizes and SHA-256; "" for a change without
        contents)."""
        err = ffi.new("struct husk_error *")
        text = lib.husk_stage_diff(_b(self.path), _b(path), err)
        if text == ffi.NULL:
            _raise(err)
        try:
            return ffi.string(text).decode("utf-8", errors="replace")
        finally:
            lib.husk_free(text)

    def pending(self) -> list:
        """The changes still to decide (not applied, dropped or denied)."""
        return [c for c in self.changes if c["state"] == "staged" and "denied" not in c]

    def apply(self, paths: Sequence[Union[str, os.PathLike]] = ()) -> list:
        """Applies the pending changes at or under each path (none given:
        all).  Returns the changes refused because the host changed their
        paths since the run began (they stay staged): [] when all went in."""
        err = ffi.new("struct husk_error *")
        args = [ffi.new("char[]", _b(p)) for p in paths]
        rc = lib.husk_stage_apply(_b(self.path), args or ffi.NULL, len(args), err)
        if rc < 0:
            _raise(err)
        if not rc:
            return []
        wanted = [os.fspath(p).rstrip("/") or "/" for p in paths]

        def selected(c: dict) -> bool:
            names = [c["path"]] + ([c["from"]] if "from" in c else [])
            return not wanted or any(n == w or n.startswith(w + "/") for n in names for w in wanted)
        return [c for c in self.pending() if selected(c)]

    def discard(self, paths: Sequence[Union[str, os.PathLike]] = ()) -> None:
        """Drops the pending changes at or under each path (none: all)."""
        err = ffi.new("struct husk_error *")
        args = [ffi.new("char[]", _b(p)) for p in paths]
        if lib.husk_stage_discard(_b(self.path), args or ffi.NULL, len(args), err) < 0:
            _raise(err)

    def __repr__(self) -> str:
        return f"Stage({self.path!r})"


class Policy:
    """A policy file (husk run --policy; its keys in ``husk policy show``),
    read and checked as JSON at once: a file that is not a JSON object
    raises UsageError here rather than at the run."""

    def __init__(self, path: str, data: dict):
        self.path, self.data = path, data

    @classmethod
    def from_file(cls, path: Union[str, os.PathLike]) -> "Policy":
        path = os.fspath(path)
        try:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
        except OSError as e:
            raise UsageError(f"husk: cannot read the policy {path}: {e.strerror}", EXIT_USAGE) from None
        except ValueError as e:
            raise UsageError(f"husk: policy {path}: not JSON ({e})", EXIT_USAGE) from None
        if not isinstance(data, dict):
            raise UsageError(f"husk: policy {path}: not a JSON object", EXIT_USAGE)
        return cls(os.path.abspath(path), data)

    def __repr__(self) -> str:
        return f"Policy.from_file({self.path!r})"


def version() -> str:
    """libhusk's version (the same as ``husk --version``)."""
    return ffi.string(lib.husk_version()).decode()


def _raise(err) -> None:
    message = ffi.string(err.message).decode(errors="replace")
    code, status = err.code, err.status
    if code == lib.HUSK_E_HUSK:
        kind = UsageError if status == EXIT_USAGE else HostError
        raise kind(message, status, code)
    if code == lib.HUSK_E_INVALID:
        raise UsageError(message, None, code)
    if code == lib.HUSK_E_START:
        raise StartError(message, None, code)
    if code == lib.HUSK_E_CALLBACK:
        raise StoppedError(message, None, code)
    raise HostError(message, None, code)


def _b(s: Union[str, bytes, os.PathLike]) -> bytes:
    if isinstance(s, bytes):
        return s
    return os.fsencode(s)


_Output = Union[None, int, Callable[[bytes], Any], Any]


def run(program: str, args: Sequence[Union[str, bytes]] = (), *, timeout: Optional[float] = None,
        memory: Union[str, int, None] = None, cpu_time: Optional[float] = None,
        output_limit: Union[str, int, None] = None, ro: Optional[Mapping[str, Union[str, os.PathLike]]] = None,
        workdir: Union[str, os.PathLike, None] = None, env: Optional[Mapping[str, str]] = None,
        stdin: Union[None, bytes, str, int, Any] = None, stdout: _Output = None, stderr: _Output = None,
        policy: Union[Policy, str, os.PathLike, None] = None, cold: bool = False, image: Optional[str] = None,
        review: bool = False,
        options: Optional[Mapping[str, Union[str, int, float, bool, None, Sequence[str]]]] = None,
        husk_path: Optional[str] = None) -> Result:
    """Run ``program`` (an image name such as "python" or "lua", a static
    ELF file, or with ``image=NAME`` a command of a Debian image) with
    ``args`` in a fresh microVM, and return its Result.

    ``timeout``/``cpu_time`` in seconds; ``memory``/``output_limit`` as
    bytes or "256M"; ``ro`` maps dataset names to host directories (read-only
    at /data/NAME); ``workdir`` is the writable /workdir, written back;
    ``env`` adds variables; ``stdin`` is bytes/str, an fd or a file object
    (default: empty).  ``stdout``/``stderr``: None collects into the
    Result, an fd or file object receives it, a callable gets each chunk
    (bytes) as it comes (return True from it to stop the run).  ``policy``
    is a Policy or a path; ``options`` any other husk run option by its long
    name (``{"pids": 64, "allow-net": ["example.org:443"], "cold": True}``,
    the file policy: ``{"files-allow": ["src/**"], "files-refuse": "hidden"}``).
    ``review``: the workdir's changes are staged, not written back: the
    Result's ``stage`` (a Stage) lists them and applies them.
    """
    err = ffi.new("struct husk_error *")
    c = lib.husk_config_new(_b(program))
    if c == ffi.NULL:
        raise HostError("out of memory")
    keep = []  # cffi objects that must live until the run ends
    try:
        def check(rc: int) -> None:
            if rc != 0:
                _raise(err)

        def set_option(name: str, value: Any) -> None:
            if value is None or value is False:
                return
            values = value if isinstance(value, (list, tuple)) else [value]
            for v in values:
                check(lib.husk_config_set(c, name.encode(), ffi.NULL if v is True else str(v).encode(), err))

        for a in args:
            check(lib.husk_config_arg(c, _b(a), err))
        for k, v in (env or {}).items():
            check(lib.husk_config_env(c, _b(k), _b(v), err))
        for name, d in (ro or {}).items():
            check(lib.husk_config_ro(c, _b(name), _b(os.path.abspath(os.fspath(d))), err))
        if workdir is not None:
            check(lib.husk_config_workdir(c, _b(os.path.abspath(os.fspath(workdir))), err))
        set_option("image", image)
        set_option("timeout", timeout)
        set_option("memory", memory)
        set_option("cpu-time", cpu_time)
        set_option("output-limit", output_limit)
        set_option("cold", cold)
        set_option("review", review)
        if policy is not None:
            set_option("policy", policy.path if isinstance(policy, Policy) else os.path.abspath(os.fspath(policy)))
        for name, value in (options or {}).items():
            set_option(name, value)
        if husk_path:
            check(lib.husk_config_husk_path(c, _b(husk_path), err))
        if isinstance(stdin, str):
            stdin = stdin.encode()
        if isinstance(stdin, (bytes, bytearray, memoryview)):
            data = bytes(stdin)
            check(lib.husk_config_stdin_bytes(c, data, len(data), err))
        elif stdin is not None:
            check(lib.husk_config_stdin_fd(c, stdin if isinstance(stdin, int) else stdin.fileno(), err))
        failure = []
        for stream, sink in ((1, stdout), (2, stderr)):
            if sink is None:
                continue
            if callable(sink):
                def relay(_arg, _stream, data, length, sink=sink):
                    try:
                        return 1 if sink(bytes(ffi.buffer(data, length))) is True else 0
                    except BaseException as e:  # reraised after the run
                        failure.append(e)
                        return 1
                cb = ffi.callback("int(void *, int, const void *, size_t)", relay)
                keep.append(cb)
                check(lib.husk_config_output_callback(c, stream, cb, ffi.NULL, err))
            else:
                if hasattr(sink, "flush"):
                    sink.flush()
                check(lib.husk_config_output_fd(c, stream, sink if isinstance(sink, int) else sink.fileno(), err))
        r = lib.husk_run(c, err)
        if failure:
            if r != ffi.NULL:
                lib.husk_result_free(r)
            raise failure[0]
        if r == ffi.NULL:
            _raise(err)
        try:
            n = ffi.new("size_t *")
            out = bytes(ffi.buffer(lib.husk_result_output(r, 1, n), n[0]))
            errb = bytes(ffi.buffer(lib.husk_result_output(r, 2, n), n[0]))
            return Result(lib.husk_result_status(r), ffi.string(lib.husk_result_reason(r)).decode(), out, errb,
                          ffi.string(lib.husk_result_audit(r)).decode())
        finally:
            lib.husk_result_free(r)
    finally:
        lib.husk_config_free(c)


async def run_async(program: str, args: Sequence[Union[str, bytes]] = (), **kwargs: Any) -> Result:
    """``run`` without blocking the event loop: the run goes on in the
    loop's default executor (a thread; the GIL is released while husk
    runs), so many runs can be awaited at once."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(None, functools.partial(run, program, list(args), **kwargs))


# The program husk.map runs in each sandbox: the task's source and input
# arrive on stdin as JSON; the function's printing goes to stderr, its
# JSON result alone to stdout.
_MAP_RUNNER = r"""
import json, sys
task = json.load(sys.stdin)
space = {"__name__": "__husk_map__"}
exec(compile(task["source"], "<husk.map source>", "exec"), space)
out, sys.stdout = sys.stdout, sys.stderr
value = space[task["function"]](task["input"])
sys.stdout = out
json.dump({"value": value}, sys.stdout)
"""


def map(fn_source: str, inputs: Iterable[Any], parallel: int = os.cpu_count() or 1, *, function: str = "fn",
        return_exceptions: bool = False, **run_kwargs: Any) -> list:
    """One sandbox per input: ``fn_source`` (Python source defining
    ``function``, "fn" by default) runs in a fresh ``python`` VM for each
    input, which it gets as JSON; its return value comes back as JSON.  Up
    to ``parallel`` sandboxes at once; results in the order of ``inputs``.
    A task that fails raises TaskError (with its Result), or with
    ``return_exceptions=True`` stands in the list in its place.  Other
    keyword arguments go to ``run`` (timeout, memory, ro, ...)."""
    tasks = [json.dumps({"source": fn_source, "function": function, "input": x}).encode() for x in inputs]

    def one(stdin: bytes) -> Any:
        r = run("python", ["-c", _MAP_RUNNER], stdin=stdin, **run_kwargs)
        if not r.ok:
            tail = r.stderr.decode(errors="replace").strip().splitlines()[-1:] or [""]
            return TaskError(f"husk.map: a task ended ({r.reason}, status {r.exit_status}): {tail[0]}", r)
        return json.loads(r.stdout)["value"]

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, parallel)) as pool:
        results = list(pool.map(one, tasks))
    if not return_exceptions:
        for x in results:
            if isinstance(x, TaskError):
                raise x
    return results
