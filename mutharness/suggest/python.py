"""Candidates in Python source, from its syntax tree (libcst, which keeps every byte): the
operators of `candidates.Operator` on the lines a change touched, with what reviewers do not
want suppressed, each checked to parse after its splice."""

from __future__ import annotations

import ast
import re
from collections.abc import Collection
from typing import Any

import libcst as cst
from libcst.metadata import ByteSpanPositionProvider, MetadataWrapper, PositionProvider

from mutharness.suggest.candidates import Candidate, Operator, narrowed_classes

BOUNDARY = {cst.LessThan: cst.LessThanEqual, cst.LessThanEqual: cst.LessThan,
            cst.GreaterThan: cst.GreaterThanEqual, cst.GreaterThanEqual: cst.GreaterThan}
NEGATED = {cst.Equal: cst.NotEqual, cst.NotEqual: cst.Equal, cst.Is: cst.IsNot,
           cst.IsNot: cst.Is, cst.In: cst.NotIn, cst.NotIn: cst.In}
# calls whose arguments are messages, not behaviour: nothing inside them is mutated
LOGGING_OWNERS = frozenset({"logging", "logger", "log", "LOGGER", "LOG", "warnings"})
QUIET_CALLS = frozenset({"print"})
# functions that only describe an object: a mutant there is noise
DESCRIBING = frozenset({"__repr__", "__str__", "__format__", "__rich_repr__"})
# calls whose result is no transformation of their argument: bypassing them changes its kind
# (a length for a list), which any test notices and no reviewer learns from
NOT_BYPASSED = frozenset({
    "len", "repr", "str", "bytes", "int", "float", "bool", "type", "id", "hash", "iter",
    "next", "range", "enumerate", "zip", "open", "super", "vars", "dir", "print", "list",
    "tuple", "set", "frozenset", "dict", "isinstance", "issubclass", "getattr", "callable",
    "get", "pop", "setdefault", "index", "count", "find", "rfind", "join", "split", "rsplit",
    "splitlines", "partition", "startswith", "endswith", "format", "append", "extend", "add",
    "remove", "discard", "update", "copy", "keys", "values", "items", "encode", "decode",
    "read", "write", "readline", "readlines", "match", "search", "fullmatch", "compile",
})
# methods that return their receiver transformed: bypassed, the receiver is the result
RECEIVER_KEPT = frozenset({"strip", "lstrip", "rstrip", "lower", "upper", "casefold",
                           "replace", "translate", "removeprefix", "removesuffix"})
REGEX_OWNERS = frozenset({"re", "regex"})
REGEX_FUNCTIONS = frozenset({"compile", "match", "search", "fullmatch", "sub", "subn",
                             "split", "findall", "finditer"})
ATOMS = (cst.Name, cst.Attribute, cst.Subscript, cst.Call)  # stand alone where a call stood


def _owner(call: cst.Call) -> str | None:
    """`logging` of `logging.info(...)`, `logger` of `self.logger.warning(...)`."""
    func = call.func
    if isinstance(func, cst.Attribute):
        value = func.value
        if isinstance(value, cst.Name):
            return value.value
        if isinstance(value, cst.Attribute):
            return value.attr.value
    return None


def _quiet(call: cst.Call) -> bool:
    return _owner(call) in LOGGING_OWNERS or (
        isinstance(call.func, cst.Name) and call.func.value in QUIET_CALLS)


class _Finder(cst.CSTVisitor):
    """Walks the module and records (node, replacement node or text, operator, function)."""

    METADATA_DEPENDENCIES = (ByteSpanPositionProvider, PositionProvider)

    def __init__(self, module: cst.Module, lines: Collection[int]) -> None:
        super().__init__()
        self.module = module
        self.lines = lines
        # (node replaced, node whose line it is on, replacement, operator, function, shown)
        self.found: list[tuple[cst.CSTNode, cst.CSTNode, str, Operator, str, str]] = []
        self.statements: set[int] = set()  # calls made for their effect (ids): not bypassed
        self.functions: list[str] = []
        self.classes: list[str] = []
        self.quiet = 0  # inside a logging call, an annotation, an assert, a describing method

    # -- where we are --
    def _function(self) -> str:
        return ".".join([*self.classes, *self.functions][-2:]) if self.functions else ""

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.classes.append(node.name.value)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.classes.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.functions.append(node.name.value)
        if node.name.value in DESCRIBING:
            self.quiet += 1
        self._defaults(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        if original_node.name.value in DESCRIBING:
            self.quiet -= 1
        self.functions.pop()

    def _enter_quiet(self) -> bool:
        self.quiet += 1
        return True

    def _leave_quiet(self) -> None:
        self.quiet -= 1

    def visit_Annotation(self, node: cst.Annotation) -> bool:
        return self._enter_quiet()

    def leave_Annotation(self, original_node: cst.Annotation) -> None:
        self._leave_quiet()

    def visit_Assert(self, node: cst.Assert) -> bool:
        return self._enter_quiet()

    def leave_Assert(self, original_node: cst.Assert) -> None:
        self._leave_quiet()

    def visit_Decorator(self, node: cst.Decorator) -> bool:
        return self._enter_quiet()

    def leave_Decorator(self, original_node: cst.Decorator) -> None:
        self._leave_quiet()

    def visit_Call(self, node: cst.Call) -> bool:
        if _quiet(node):
            self.quiet += 1
        else:
            self._swapped(node)
            self._bypassed(node)
            self._regex(node)
        return True

    def leave_Call(self, original_node: cst.Call) -> None:
        if _quiet(original_node):
            self.quiet -= 1

    # -- what we record --
    def _on_a_line(self, node: cst.CSTNode) -> bool:
        position = self.get_metadata(PositionProvider, node)
        return not self.quiet and position.start.line in self.lines

    def _add(self, node: cst.CSTNode, replacement: cst.CSTNode | str, operator: Operator,
             shown: str, where: cst.CSTNode | None = None) -> None:
        """A candidate replacing `node`, on the line `where` (else `node`) starts."""
        if self._on_a_line(where or node):
            text = (replacement if isinstance(replacement, str)
                    else self.module.code_for_node(_bare(replacement)))
            self.found.append((node, where or node, text, operator, self._function(), shown))

    def visit_Comparison(self, node: cst.Comparison) -> None:
        if len(node.comparisons) != 1:
            return
        [target] = node.comparisons
        left, right = self.module.code_for_node(node.left), self.module.code_for_node(
            target.comparator)
        if left.strip() == right.strip():
            return  # a value compared with itself: flipping it is equivalent or noise
        kind = type(target.operator)
        for table, operator in ((BOUNDARY, Operator.BOUNDARY),
                                (NEGATED, Operator.NEGATED_COMPARISON)):
            if kind in table:
                swapped = table[kind](
                    whitespace_before=target.operator.whitespace_before,  # type: ignore[attr-defined]
                    whitespace_after=target.operator.whitespace_after)  # type: ignore[attr-defined]
                was = self.module.code_for_node(target.operator).strip()
                now = self.module.code_for_node(swapped).strip()
                self._add(node, node.with_changes(comparisons=[
                    target.with_changes(operator=swapped)]), operator, f"{was} -> {now}")
        if isinstance(target.comparator, cst.Integer) and kind in BOUNDARY:
            value = target.comparator.evaluated_value
            self._add(target.comparator, str(value + 1), Operator.CONSTANT_BOUNDARY,
                      f"{value} -> {value + 1}")

    def visit_BooleanOperation(self, node: cst.BooleanOperation) -> None:
        swapped: cst.BaseBooleanOp
        if isinstance(node.operator, cst.And):
            swapped, shown = cst.Or(whitespace_before=node.operator.whitespace_before,
                                    whitespace_after=node.operator.whitespace_after), "and -> or"
        else:
            swapped, shown = cst.And(whitespace_before=node.operator.whitespace_before,
                                     whitespace_after=node.operator.whitespace_after), "or -> and"
        self._add(node, node.with_changes(operator=swapped), Operator.BOOLEAN_SWAP, shown)

    def _condition(self, test: cst.BaseExpression) -> None:
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            inner = self.module.code_for_node(test.expression)
            self._add(test, inner, Operator.NEGATED_CONDITION, "not dropped")
        else:
            text = self.module.code_for_node(_bare(test))
            self._add(test, f"not ({text})", Operator.NEGATED_CONDITION, f"not ({text})")

    def visit_If(self, node: cst.If) -> None:
        self._condition(node.test)
        self._else(node)
        body = node.body
        if isinstance(body, cst.IndentedBlock) and len(body.body) == 1:
            [line] = body.body
            if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1:
                [statement] = line.body
                if isinstance(statement, cst.Raise | cst.Return):
                    word = "raise" if isinstance(statement, cst.Raise) else "return"
                    self._add(statement, "pass", Operator.GUARD_REMOVED, f"{word} removed")

    def _else(self, node: cst.If) -> None:
        """The `else` of an `if` (not an `elif`) whose body never runs: it becomes `pass`."""
        orelse = node.orelse
        if not isinstance(orelse, cst.Else):
            return
        body = orelse.body
        if isinstance(body, cst.IndentedBlock) and body.body:
            self._add(body, "pass", Operator.ELSE_REMOVED, "else removed", body.body[0])
        elif isinstance(body, cst.SimpleStatementSuite) and len(body.body) == 1:
            self._add(body.body[0], "pass", Operator.ELSE_REMOVED, "else removed")

    def visit_IfExp(self, node: cst.IfExp) -> None:
        for branch in (node.body, node.orelse):
            text = self.module.code_for_node(branch)
            self._add(node, text, Operator.BRANCH_FIXED, f"always {text}")

    def visit_While(self, node: cst.While) -> None:
        self._condition(node.test)

    def visit_Return(self, node: cst.Return) -> None:
        value = node.value
        if value is None or (isinstance(value, cst.Name) and value.value == "None"):
            return
        neutral = "None"
        if isinstance(value, cst.Name) and value.value in {"True", "False"}:
            neutral = "False" if value.value == "True" else "True"
        self._add(value, neutral, Operator.NEUTRAL_RETURN, f"returns {neutral}")

    def visit_Expr(self, node: cst.Expr) -> None:
        value = node.value
        called = value.expression if isinstance(value, cst.Await) else value
        if isinstance(called, cst.Call):
            self.statements.add(id(called))  # its result is not used: never bypassed
        if isinstance(value, cst.Call) and not _quiet(value):
            callee = self.module.code_for_node(_bare(value.func))
            self._add(node, "pass", Operator.CALL_REMOVED, f"{callee}(...) removed")

    def _defaults(self, node: cst.FunctionDef) -> None:
        for param in [*node.params.params, *node.params.kwonly_params]:
            default = param.default
            if isinstance(default, cst.SimpleString) and "f" not in default.prefix.lower():
                said = default.value
                empty = default.prefix + default.quote * 2
                if said != empty:
                    self._add(default, empty, Operator.DEFAULT_CHANGED,
                              f"{param.name.value}={said} -> {empty}")
                continue
            if isinstance(default, cst.Integer):
                value = default.evaluated_value
                self._add(default, str(value + 1), Operator.DEFAULT_CHANGED,
                          f"{param.name.value}={value} -> {value + 1}")
            elif isinstance(default, cst.Name) and default.value in {"True", "False"}:
                flipped = "False" if default.value == "True" else "True"
                self._add(default, flipped, Operator.DEFAULT_CHANGED,
                          f"{param.name.value}={default.value} -> {flipped}")

    def _swapped(self, node: cst.Call) -> None:
        positional = [arg for arg in node.args if arg.keyword is None and not arg.star]
        if len(positional) != 2 or len(node.args) != 2:
            return
        first, second = (arg.value for arg in positional)
        same_kind = type(first) is type(second) and isinstance(
            first, cst.Name | cst.Integer | cst.SimpleString | cst.Float)
        if not same_kind:
            return
        one, two = self.module.code_for_node(first), self.module.code_for_node(second)
        if one == two:
            return
        swapped = node.with_changes(args=[positional[0].with_changes(value=second),
                                          positional[1].with_changes(value=first)])
        self._add(node, swapped, Operator.SWAPPED_ARGUMENTS, f"({one}, {two}) -> ({two}, {one})")


    def _bypassed(self, node: cst.Call) -> None:
        """A call whose result is used, bypassed: `strip(x)` -> `x`, `x.strip()` -> `x`,
        `PATTERN.sub("", x)` -> `x`; never a conversion, a lookup or a class made (a name
        starting with a capital), nor an argument that is a literal."""
        if id(node) in self.statements or any(arg.star for arg in node.args):
            return
        func = node.func
        name = (func.value if isinstance(func, cst.Name)
                else func.attr.value if isinstance(func, cst.Attribute) else "")
        positional = [arg.value for arg in node.args if arg.keyword is None]
        kept: cst.BaseExpression | None = None
        if isinstance(func, cst.Attribute) and name in RECEIVER_KEPT:
            kept = func.value
        elif isinstance(func, cst.Attribute) and name == "sub" and len(node.args) == len(
                positional):
            owner = func.value
            regex_module = isinstance(owner, cst.Name) and owner.value in REGEX_OWNERS
            if len(positional) == (3 if regex_module else 2):
                kept = positional[-1]
        elif (len(node.args) == len(positional) == 1 and name and not name[0].isupper()
              and name not in NOT_BYPASSED):
            kept = positional[0]
        if kept is None or not isinstance(kept, ATOMS):
            return
        text = self.module.code_for_node(kept)
        self._add(node, text, Operator.CALL_BYPASSED,
                  f"{self.module.code_for_node(_bare(node))} -> {text}")

    def _regex(self, node: cst.Call) -> None:
        """A character class of a regular expression `re.compile`, `re.sub`... is given (a
        plain or raw string literal, as its first argument) without its last member; only
        where the narrowed expression still compiles."""
        func = node.func
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
                and func.value.value in REGEX_OWNERS and func.attr.value in REGEX_FUNCTIONS):
            return
        given = next((arg.value for arg in node.args
                      if arg.keyword is None or arg.keyword.value == "pattern"), None)
        if not isinstance(given, cst.SimpleString) or "f" in given.prefix.lower():
            return
        literal = given.value
        head = len(given.prefix) + len(given.quote)
        body = literal[head:len(literal) - len(given.quote)]
        for start, end, narrowed in narrowed_classes(body):
            text = literal[:head] + body[:start] + narrowed + body[end:] + literal[
                len(literal) - len(given.quote):]
            if _compiles(text):
                self._add(given, text, Operator.CLASS_NARROWED,
                          f"{body[start:end]} -> {narrowed}")


def _compiles(literal: str) -> bool:
    """Whether the string literal's value is a regular expression `re` compiles."""
    try:
        value = ast.literal_eval(literal)
        re.compile(value)
    except (ValueError, SyntaxError, re.error, TypeError, RecursionError):
        return False
    return True


def _bare(node: cst.CSTNode) -> cst.CSTNode:
    """`node` without the parentheses and the `;` it owns: the text its span covers."""
    changes: dict[str, Any] = {}
    if getattr(node, "lpar", None):
        changes["lpar"], changes["rpar"] = [], []
    if isinstance(getattr(node, "semicolon", None), cst.Semicolon):
        changes["semicolon"] = cst.MaybeSentinel.DEFAULT
    return node.with_changes(**changes) if changes else node


def python_candidates(path: str, text: str, lines: Collection[int]) -> list[Candidate]:
    """Every candidate on `lines` (1-based) of the Python source `text` of `path`, each exact
    (its span is the file's own text) and parsing after its splice. A file that does not parse
    has none; a byte order mark is kept out of the tree and counted in the offsets."""
    bom = 1 if text.startswith("\ufeff") else 0
    body = text[bom:]
    try:
        module = cst.parse_module(body)
    except cst.ParserSyntaxError:
        return []
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    finder = _Finder(wrapper.module, lines)
    wrapper.visit(finder)
    spans = wrapper.resolve(ByteSpanPositionProvider)
    positions = wrapper.resolve(PositionProvider)
    data = body.encode("utf-8")
    found: list[Candidate] = []
    for node, where, replacement, operator, function, shown in finder.found:
        span = spans[node]
        start = len(data[:span.start].decode("utf-8"))
        end = start + len(data[span.start:span.start + span.length].decode("utf-8"))
        # a block's span runs from its first statement to its last: its code has its indents
        exact = isinstance(node, cst.IndentedBlock) or (
            body[start:end] == wrapper.module.code_for_node(_bare(node)))
        if not exact or start == end or body[start:end] == replacement:
            continue
        if not _parses(body[:start] + replacement + body[end:]):
            continue
        found.append(Candidate(path, positions[where].start.line, start + bom, end + bom,
                               replacement, operator, function, shown))
    return found


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return True
