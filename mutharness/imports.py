"""Which copy of each file a run's Python processes imported, read from the start-up hook's logs.

The hook (`_startup`, installed as each run's `sitecustomize`) logs every import of every Python
process of the run; the pytest probe adds the main process's final `sys.modules`. From that
record the harness answers three questions: did the tests load a tracked file from the user's
tree (shadowing), did they load a mutation target's module from anywhere but the workspace (a
copy: an installed package), and did a run load the mutated file at all.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ERROR = "!error"  # the hook's own failures (see _startup.ERROR)
HOOKED = "!hooked"  # lines before it: imported at start-up, before the hook (_startup.HOOKED)
READ = "!read"  # a file of the workspace a process opened (_startup.READ)
SPAWN = "!spawn"  # a program that is not Python a process started (_startup.SPAWN)
MAX_LOG_BYTES = 64 * 1024 * 1024  # a log bigger than this is read no further


@dataclass(frozen=True)
class Loaded:
    """One module one process imported, and the file it came from."""

    pid: int
    module: str
    file: str
    early: bool = False  # imported while Python started, before the start-up hook ran


@dataclass(frozen=True)
class ImportRecord:
    """Every import of every process of one run that the hook saw."""

    loaded: tuple[Loaded, ...] = ()
    main_pid: int | None = None  # the pytest process
    sys_path: tuple[str, ...] = ()  # the pytest process's, at the end of the session
    errors: tuple[str, ...] = ()  # what the hook reported about itself
    processes: int = 0  # how many processes wrote a log
    read: tuple[str, ...] = ()  # the files of the workspace any process opened
    spawned: tuple[str, ...] = ()  # the programs, not Python, any process started

    def where(self, loaded: Loaded) -> str:
        """'the pytest process' or 'a child process (pid N)'."""
        if loaded.pid == self.main_pid:
            return "the pytest process"
        return f"a child process (pid {loaded.pid})"


def unescape(text: str) -> str:
    """A log field as written: `\\t`, `\\n`, `\\r` and `\\\\` undone (the start-up hook's and
    the node load record's escapes)."""
    if "\\" not in text:
        return text
    out: list[str] = []
    chars = iter(text)
    for char in chars:
        if char == "\\":
            following = next(chars, "")
            out.append({"t": "\t", "n": "\n", "r": "\r"}.get(following, following))
        else:
            out.append(char)
    return "".join(out)


def _read_log(path: Path) -> tuple[list[Loaded], list[str], list[str], list[str]]:
    loaded: list[Loaded] = []
    errors: list[str] = []
    read: list[str] = []
    spawned: list[str] = []
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_LOG_BYTES)
    except OSError:
        return loaded, errors, read, spawned
    hooked = False  # the file's first process writes its start-up lines, then HOOKED
    for raw in data.split(b"\n"):
        parts = os.fsdecode(raw).split("\t", 2)
        if len(parts) != 3 or not parts[0].isdigit():
            continue
        pid, module, file = int(parts[0]), parts[1], unescape(parts[2])
        if module == ERROR:
            errors.append(f"pid {pid}: {file}")
        elif module == HOOKED:
            hooked = True
        elif module == READ:
            read.append(file)
        elif module == SPAWN:
            spawned.append(file)
        else:
            loaded.append(Loaded(pid, module, file, early=not hooked))
    return loaded, errors, read, spawned


def read_record(directory: Path, probe: Mapping[str, Any]) -> ImportRecord:
    """The record of one run: the hook's logs in `directory` and the pytest probe's document."""
    loaded: list[Loaded] = []
    errors: list[str] = []
    read: dict[str, None] = {}
    spawned: dict[str, None] = {}
    logs = sorted(directory.glob("*.log")) if directory.is_dir() else []
    for log in logs:
        found, failed, opened, started = _read_log(log)
        loaded += found
        errors += failed
        read.update(dict.fromkeys(opened))
        spawned.update(dict.fromkeys(started))
    pid = probe.get("pid")
    main_pid = pid if isinstance(pid, int) else None
    modules = probe.get("modules")
    if main_pid is not None and isinstance(modules, Mapping):
        logged = {(entry.pid, entry.module, entry.file) for entry in loaded}
        loaded += [
            Loaded(main_pid, str(name), file) for name, file in modules.items()
            if isinstance(file, str) and (main_pid, str(name), file) not in logged
        ]
    sys_path = probe.get("sys_path")
    return ImportRecord(
        loaded=tuple(loaded),
        main_pid=main_pid,
        sys_path=tuple(str(entry) for entry in sys_path) if isinstance(sys_path, list) else (),
        errors=tuple(errors),
        processes=len(logs),
        read=tuple(read),
        spawned=tuple(spawned),
    )


@dataclass
class _Resolver:
    """Real paths of imported files, one `realpath` per directory."""

    cache: dict[str, str] = field(default_factory=dict)

    def real(self, file: str) -> str:
        head, tail = os.path.split(os.path.abspath(file))
        found = self.cache.get(head)
        if found is None:
            found = self.cache[head] = os.path.realpath(head)
        return os.path.normcase(os.path.join(found, tail))


def _relative(real: str, root: Path) -> str | None:
    """`real` relative to `root` as a `/` path, or None when it lies outside."""
    base = os.path.normcase(str(root))
    prefix = base.rstrip(os.sep) + os.sep
    if not real.startswith(prefix):
        return None
    return real[len(prefix):].replace(os.sep, "/")


@dataclass(frozen=True)
class Shadow:
    """A tracked file a run imported from the user's tree instead of the workspace."""

    loaded: Loaded
    relative: str  # the tracked path
    where: str


def shadowed(
    record: ImportRecord, user_root: Path, workspace_root: Path, tracked: Iterable[str]
) -> Shadow | None:
    """The first tracked file some process imported from the user's tree, if any."""
    wanted = set(tracked)
    resolver = _Resolver()
    for loaded in record.loaded:
        real = resolver.real(loaded.file)
        if _relative(real, workspace_root) is not None:
            continue
        relative = _relative(real, user_root)
        if relative is not None and relative in wanted:
            return Shadow(loaded, relative, record.where(loaded))
    return None


def module_tail(module: str, file: str) -> str | None:
    """The path a module's name implies for its file: `a.b` -> `a/b.py` or `a/b/__init__.py`."""
    name = os.path.basename(file)
    stem, dot, _ = name.partition(".")
    if not dot or module.startswith("__main__"):
        return None
    parts = module.split(".")
    if stem == "__init__":
        return "/".join([*parts, name])
    if stem != parts[-1]:
        return None  # loaded under another name (importlib by path, runpy): no tail to match
    return "/".join([*parts[:-1], name])


@dataclass(frozen=True)
class Copy:
    """A mutation target's module loaded from a file outside the workspace (an installed copy)."""

    target: str
    loaded: Loaded
    where: str


def _names(target: str, tail: str, tracked: set[str]) -> bool:
    """Whether `target` is the file of the module whose name implies `tail`.

    It is when the target ends with the tail and what precedes it is an import root: the
    repository root, or a directory that is not itself a package (`src/`, `lib/`). So
    `src/pkg/utils.py` is `pkg.utils`, never a top-level `utils` installed by someone else.
    """
    if target == tail:
        return True
    if not target.endswith("/" + tail):
        return False
    root = target[: -len(tail)]
    return f"{root}__init__.py" not in tracked


def copies(
    record: ImportRecord, workspace_root: Path, targets: Iterable[str], tracked: Iterable[str]
) -> tuple[Copy, ...]:
    """For each target, the first import of its module from outside the workspace."""
    resolver = _Resolver()
    known = set(tracked)
    found: dict[str, Copy] = {}
    python_targets = [target for target in dict.fromkeys(targets) if target.endswith(".py")]
    for loaded in record.loaded:
        tail = module_tail(loaded.module, loaded.file)
        if tail is None:
            continue
        real = resolver.real(loaded.file)
        if _relative(real, workspace_root) is not None or not real.endswith(
            os.path.normcase(os.sep + tail.replace("/", os.sep))
        ):
            continue
        for target in python_targets:
            if target not in found and _names(target, tail, known):
                found[target] = Copy(target, loaded, record.where(loaded))
    return tuple(found[target] for target in python_targets if target in found)


def loaded_file(record: ImportRecord, path: Path) -> bool:
    """Whether any process of the run imported the file at `path` (the workspace's copy)."""
    resolver = _Resolver()
    wanted = os.path.normcase(os.path.realpath(path))
    name = os.path.basename(wanted)  # `real` keeps a file's own name: no other name is it
    return any(os.path.normcase(os.path.basename(loaded.file)) == name
               and resolver.real(loaded.file) == wanted for loaded in record.loaded)


def read_below(record: ImportRecord, root: Path) -> frozenset[str]:
    """The repo-relative files under `root` any process of the run opened."""
    resolver = _Resolver()
    base = Path(os.path.realpath(root))
    found = (_relative(resolver.real(file), base) for file in record.read)
    return frozenset(relative for relative in found if relative is not None)


def loaded_below(record: ImportRecord, root: Path) -> frozenset[tuple[str, str]]:
    """The (module, repo-relative file) pairs any process of the run imported from `root`."""
    resolver = _Resolver()
    base = Path(os.path.realpath(root))
    found = ((loaded.module, _relative(resolver.real(loaded.file), base))
             for loaded in record.loaded)
    return frozenset((module, relative) for module, relative in found if relative is not None)
