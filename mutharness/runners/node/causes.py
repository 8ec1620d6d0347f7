"""What node's log says made a test file fail to load: node's error line (its code, the module,
the file, the workspace's paths made the repository's) and a remedy that fits what the log and
the trees show: a loader or a node that strips types for TypeScript, the install for a package
that is not installed, the commit for a module the commit lacks. Never a guess: a line without
an error code gives nothing, and an error with no known remedy is named alone."""

from __future__ import annotations

import re
from pathlib import Path

from mutharness.environment import version_tuple

LOG_BYTES = 1024 * 1024  # node prints the error of a file that fails to load before its counts
_ERROR = re.compile(
    r"^(?P<kind>[A-Za-z]*Error)(?: \[(?P<code>[A-Z][A-Z0-9_]+)\])?: (?P<message>.+)$")
_CODE = re.compile(r"^\s+code: '(?P<code>[A-Z][A-Z0-9_]+)',?$")
_EXTENSION = re.compile(r'Unknown file extension "(?P<extension>\.[^"]+)"')
_MISSING = re.compile(r"Cannot find (?:package|module) '(?P<specifier>[^']+)'")
NOT_LOADING = frozenset({"ERR_ASSERTION", "ERR_TEST_FAILURE"})  # a test's, not a file's
TYPESCRIPT = (".ts", ".mts", ".cts")
LOADER = ('preload a loader the project installed ([node] import = ["tsx"] in mutharness.toml, '
          "or --import tsx in package.json's test script)")
# how each lockfile's packages are installed as it records them; else the package.json's
INSTALLS = (
    ("package-lock.json", "npm ci"), ("npm-shrinkwrap.json", "npm ci"),
    ("pnpm-lock.yaml", "pnpm install --frozen-lockfile"),
    ("yarn.lock", "yarn install --frozen-lockfile"),
)


def version_of(text: str) -> tuple[int, int, int] | None:
    """`v20.20.2` or `20.20.2` as numbers (`environment.version_tuple`'s release parts)."""
    numbers = version_tuple(text.removeprefix("v"))[:3]
    return (numbers[0], numbers[1], numbers[2]) if len(numbers) == 3 else None


def _strips_types(version: tuple[int, int, int]) -> bool:
    """node strips TypeScript types without a flag from 23.6 and 22.18 on."""
    return version >= (23, 6) or (22, 18) <= version < (23,)


def _typescript(version: tuple[int, int, int] | None, extension: str) -> str:
    shown = "" if version is None else " " + ".".join(map(str, version))
    newer = "or run node 22.18+ or 23.6+ (--node PATH), which strip them"
    if extension not in TYPESCRIPT:
        return f"node{shown} runs no {extension} file by itself: {LOADER}"
    if version is None or version < (22, 6):
        return f"node{shown} strips no TypeScript types: {LOADER}, {newer}"
    if not _strips_types(version):
        return (f"node{shown} strips TypeScript types only with --experimental-strip-types "
                '([node] options = ["--experimental-strip-types"] in mutharness.toml); or '
                f"{LOADER}, {newer}")
    return LOADER  # a node that strips types was told not to, or the file is a package's


def _install(checkout: Path) -> str:
    for lockfile, command in INSTALLS:
        if (checkout / lockfile).is_file():
            return f"{command} installs {lockfile}'s"
    return "npm install installs package.json's"


def _missing(specifier: str, cwd: Path, user_root: Path | None) -> str:
    """The remedy for a module node did not find: a package not installed, a file the commit
    lacks (in your tree, untracked); nothing when the trees show neither."""
    bases = (str(cwd), str(cwd.resolve()))
    if specifier.startswith(("/", "file:")):
        path = specifier.removeprefix("file://")
        for base in bases:
            if path.startswith(base + "/") and user_root is not None:
                relative = path[len(base) + 1:]
                if (user_root / relative).exists():
                    return (f"{relative} is in your tree but not in the commit a run checks "
                            "out: commit it")
        return ""
    if specifier.startswith(".") or user_root is None:
        return ""
    parts = specifier.split("/")
    name = "/".join(parts[:2] if specifier.startswith("@") else parts[:1])
    installed = user_root / "node_modules"
    if not installed.is_dir():
        where = "the repository has no node_modules"
    elif not (installed / name).exists():
        where = f"your node_modules has no {name}"
    else:
        return ""
    return (f"'{name}' is not installed ({where}): install the project's packages "
            f"({_install(cwd)}), then run again")


def _code_below(lines: list[str], at: int) -> str | None:
    """The `code: '...'` node prints in the object below an error line, if any."""
    for line in lines[at + 1:at + 60]:
        if (match := _CODE.match(line)) is not None:
            return match["code"]
        if line.startswith("}") or _ERROR.match(line):
            return None
    return None


def _required_from(lines: list[str], at: int) -> str:
    """CommonJS's `Require stack:`: the module that required the missing one."""
    below = lines[at + 1:at + 3]
    if len(below) == 2 and below[0] == "Require stack:" and below[1].startswith("- "):
        return f" (required from {below[1][2:]})"
    return ""


def _relative(text: str, cwd: Path) -> str:
    """`text` with the workspace's paths (and file URLs) made the repository's."""
    for base in dict.fromkeys((str(cwd), str(cwd.resolve()))):
        text = text.replace(Path(base).as_uri() + "/", "").replace(base + "/", "")
    return text


def load_cause(log: Path, cwd: Path, version: tuple[int, int, int] | None,
               user_root: Path | None) -> str:
    """node's first error line in the run's `log` that carries an error code (none of a
    test's own, `ERR_ASSERTION`), with the code, the paths of the workspace `cwd` made the
    repository's, and a remedy that fits (`; remedy: ...`) when one is known; "" when the log
    holds none."""
    try:
        with log.open("rb") as handle:
            text = handle.read(LOG_BYTES).decode("utf-8", "replace")
    except OSError:
        return ""
    lines = text.splitlines()
    for at, line in enumerate(lines):
        match = _ERROR.match(line)
        code = None if match is None else (match["code"] or _code_below(lines, at))
        if match is None or code is None or code in NOT_LOADING:
            continue
        message = match["message"] + (_required_from(lines, at) if not match["code"] else "")
        remedy = ""
        if code == "ERR_UNKNOWN_FILE_EXTENSION" and (ext := _EXTENSION.search(message)):
            remedy = _typescript(version, ext["extension"])
        elif code == "ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX":
            remedy = f"node strips types but transforms no other TypeScript syntax: {LOADER}"
        elif code in ("ERR_MODULE_NOT_FOUND", "MODULE_NOT_FOUND") and (
                missing := _MISSING.search(message)):
            remedy = _missing(missing["specifier"], cwd, user_root)
        cause = _relative(f"{match['kind']} [{code}]: {message}", cwd)[:400]
        return f"{cause}; remedy: {remedy}" if remedy else cause
    return ""
