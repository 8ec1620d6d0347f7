"""Candidates in JavaScript and TypeScript source, from its syntax tree (tree-sitter's
grammars): the operators of `candidates.Operator` on the lines a change touched, with what
reviewers do not want suppressed, each checked to parse after its splice."""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass
from pathlib import PurePosixPath

import tree_sitter
import tree_sitter_javascript
import tree_sitter_typescript

from mutharness.suggest.candidates import Candidate, Operator, narrowed_classes

SUFFIXES = frozenset({".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx"})
BOUNDARY = {"<": "<=", "<=": "<", ">": ">=", ">=": ">"}
NEGATED = {"===": "!==", "!==": "===", "==": "!=", "!=": "=="}
BOOLEAN = {"&&": "||", "||": "&&"}
# calls whose arguments are messages, not behaviour: nothing inside them is mutated
LOGGING_OWNERS = frozenset({"console", "logger", "log", "LOGGER", "LOG"})
DESCRIBING = frozenset({"toString", "toJSON", "inspect"})  # functions that only describe
QUIET_TYPES = frozenset({"type_annotation", "type_alias_declaration", "interface_declaration",
                         "type_arguments", "type_parameters", "comment", "decorator"})
FUNCTIONS = frozenset({"function_declaration", "function_expression", "method_definition",
                       "arrow_function", "generator_function_declaration"})
SAME_KIND = frozenset({"identifier", "number", "string", "member_expression"})
# calls whose result is no transformation of their argument: bypassing them changes its kind,
# which any test notices and no reviewer learns from; or loads a module
NOT_BYPASSED = frozenset({
    "require", "import", "String", "Number", "Boolean", "Symbol", "BigInt", "parseInt",
    "parseFloat", "isNaN", "isFinite", "get", "has", "set", "delete", "push", "pop", "shift",
    "unshift", "indexOf", "lastIndexOf", "includes", "find", "findIndex", "some", "every",
    "join", "split", "keys", "values", "entries", "isArray", "stringify", "parse", "resolve",
    "reject", "all", "race", "test", "exec", "match", "search", "then", "catch", "finally",
    "querySelector", "querySelectorAll", "getElementById", "call", "apply", "bind", "emit",
    "on", "once", "startsWith", "endsWith", "charAt", "charCodeAt", "at", "from", "of",
})
# methods that return their receiver transformed: bypassed, the receiver is the result
RECEIVER_KEPT = frozenset({"trim", "trimStart", "trimEnd", "toLowerCase", "toUpperCase",
                           "toLocaleLowerCase", "toLocaleUpperCase", "replace", "replaceAll",
                           "normalize", "filter"})
ATOMS = frozenset({"identifier", "member_expression", "subscript_expression",
                   "call_expression"})  # stand alone where a call stood


def _language(path: str) -> tree_sitter.Language:
    suffix = PurePosixPath(path).suffix
    if suffix == ".tsx":
        return tree_sitter.Language(tree_sitter_typescript.language_tsx())
    if suffix in {".ts", ".mts", ".cts"}:
        return tree_sitter.Language(tree_sitter_typescript.language_typescript())
    return tree_sitter.Language(tree_sitter_javascript.language())


@dataclass(frozen=True)
class _Found:
    start: int  # bytes
    end: int
    replacement: str
    operator: Operator
    shown: str
    line: int
    function: str


class _Finder:
    """Walks a tree and records each candidate's byte span and replacement."""

    def __init__(self, data: bytes, lines: Collection[int]) -> None:
        self.data = data
        self.lines = lines
        self.found: list[_Found] = []

    def text(self, node: tree_sitter.Node) -> str:
        return self.data[node.start_byte:node.end_byte].decode("utf-8")

    def walk(self, node: tree_sitter.Node, function: str = "", quiet: bool = False) -> None:
        quiet = quiet or node.type in QUIET_TYPES or self._logging(node)
        name = self._name(node)
        if node.type in FUNCTIONS:
            function = name or function
            quiet = quiet or name in DESCRIBING
        if not quiet:
            for found in self._candidates(node):
                self._add(node, function, *found)
        for child in node.children:
            self.walk(child, function, quiet)

    def _name(self, node: tree_sitter.Node) -> str:
        named = node.child_by_field_name("name")
        if named is not None:
            return self.text(named)
        parent = node.parent
        if node.type not in {"arrow_function", "function_expression"} or parent is None:
            return ""
        # `const f = () => ...`, `exports.f = () => ...`, `{ f: () => ... }`: the name given
        declared = {"variable_declarator": "name", "assignment_expression": "left",
                    "pair": "key"}.get(parent.type)
        named = None if declared is None else parent.child_by_field_name(declared)
        if named is None:
            return ""
        if named.type == "member_expression":
            named = named.child_by_field_name("property") or named
        return self.text(named)

    def _logging(self, node: tree_sitter.Node) -> bool:
        if node.type != "call_expression":
            return False
        callee = node.child_by_field_name("function")
        if callee is None or callee.type != "member_expression":
            return False
        owner = callee.child_by_field_name("object")
        while owner is not None and owner.type == "member_expression":
            owner = owner.child_by_field_name("property")
        return owner is not None and self.text(owner) in LOGGING_OWNERS

    def _add(self, node: tree_sitter.Node, function: str, target: tree_sitter.Node,
             replacement: str, operator: Operator, shown: str) -> None:
        line = target.start_point[0] + 1
        if line in self.lines:
            self.found.append(_Found(target.start_byte, target.end_byte, replacement, operator,
                                     shown, line, function))

    def _candidates(self, node: tree_sitter.Node) -> Iterator[
            tuple[tree_sitter.Node, str, Operator, str]]:
        kind = node.type
        if kind == "binary_expression":
            yield from self._binary(node)
        elif kind in {"if_statement", "while_statement"}:
            yield from self._condition(node)
            if kind == "if_statement":
                yield from self._guard(node)
        elif kind == "return_statement":
            value = node.named_children[0] if node.named_children else None
            if value is not None and self.text(value) not in {"undefined", "null"}:
                neutral = {"true": "false", "false": "true"}.get(self.text(value), "undefined")
                yield value, neutral, Operator.NEUTRAL_RETURN, f"returns {neutral}"
        elif kind == "expression_statement":
            [expression, *_] = node.named_children or [node]
            if expression.type == "call_expression" and not self._logging(expression):
                callee = expression.child_by_field_name("function")
                said = self.text(callee) if callee is not None else "the call"
                yield node, ";", Operator.CALL_REMOVED, f"{said}(...) removed"
        elif kind == "await_expression" and node.named_children:
            yield node, self.text(node.named_children[0]), Operator.AWAIT_DROPPED, \
                "await dropped"
        elif kind in {"assignment_pattern", "object_assignment_pattern"} and (
                self._in_parameters(node)):
            yield from self._default(node)
        elif kind == "call_expression":
            yield from self._swapped(node)
            yield from self._bypassed(node)
        elif kind == "regex":
            yield from self._narrowed(node)
        elif kind == "ternary_expression":
            yield from self._branches(node)
        if kind == "if_statement":
            yield from self._else(node)

    @staticmethod
    def _in_parameters(node: tree_sitter.Node) -> bool:
        """Whether a destructuring default is a parameter's: `function f({ retries = 3 })`."""
        parent = node.parent
        while parent is not None and parent.type in {"object_pattern", "assignment_pattern",
                                                     "pair_pattern", "array_pattern"}:
            parent = parent.parent
        return parent is not None and parent.type == "formal_parameters"

    def _bypassed(self, node: tree_sitter.Node) -> Iterator[
            tuple[tree_sitter.Node, str, Operator, str]]:
        """A call whose result is used, bypassed: `strip(x)` -> `x`, `x.trim()` -> `x`;
        never a conversion, a lookup, a module loaded, a class's method (a capital), nor an
        argument that is a literal."""
        parent = node.parent
        while parent is not None and parent.type in {"await_expression",
                                                     "parenthesized_expression"}:
            parent = parent.parent
        if parent is None or parent.type == "expression_statement" or (
                parent.type == "call_expression"
                and parent.child_by_field_name("function") == node):
            return
        callee = node.child_by_field_name("function")
        arguments = node.child_by_field_name("arguments")
        if callee is None or arguments is None or arguments.type != "arguments":
            return
        given = [each for each in arguments.named_children if each.type != "comment"]
        name = (self.text(callee) if callee.type == "identifier" else
                self.text(field) if callee.type == "member_expression" and (
                    field := callee.child_by_field_name("property")) is not None else "")
        kept: tree_sitter.Node | None = None
        receiver = callee.child_by_field_name("object")
        if callee.type == "member_expression" and name in RECEIVER_KEPT:
            kept = receiver
        elif len(given) == 1 and name and not name[0].isupper() and name not in NOT_BYPASSED:
            kept = given[0] if given[0].type in ATOMS else None
        if kept is None:
            return
        text = self.text(kept)
        yield node, text, Operator.CALL_BYPASSED, f"{self.text(node)} -> {text}"

    def _narrowed(self, node: tree_sitter.Node) -> Iterator[
            tuple[tree_sitter.Node, str, Operator, str]]:
        """A regular expression literal's character class without its last member (not
        under the `v` flag, whose classes nest)."""
        pattern = node.child_by_field_name("pattern")
        flags = node.child_by_field_name("flags")
        if pattern is None or (flags is not None and "v" in self.text(flags)):
            return
        said = self.text(pattern)
        for start, end, narrowed in narrowed_classes(said):
            yield pattern, said[:start] + narrowed + said[end:], Operator.CLASS_NARROWED, \
                f"{said[start:end]} -> {narrowed}"

    def _branches(self, node: tree_sitter.Node) -> Iterator[
            tuple[tree_sitter.Node, str, Operator, str]]:
        """A conditional expression that always takes one branch (an object literal kept in
        parentheses: an arrow function's body would read it as a block)."""
        for field in ("consequence", "alternative"):
            branch = node.child_by_field_name(field)
            if branch is not None:
                text = self.text(branch)
                if branch.type == "object":
                    text = f"({text})"
                yield node, text, Operator.BRANCH_FIXED, f"always {text}"

    def _else(self, node: tree_sitter.Node) -> Iterator[
            tuple[tree_sitter.Node, str, Operator, str]]:
        """An `else` (not an `else if`) taken out."""
        clause = node.child_by_field_name("alternative")
        if clause is None or clause.type != "else_clause":
            return
        body = [each for each in clause.named_children if each.type != "comment"]
        if len(body) == 1 and body[0].type != "if_statement":
            yield clause, "", Operator.ELSE_REMOVED, "else removed"

    def _binary(self, node: tree_sitter.Node) -> Iterator[
            tuple[tree_sitter.Node, str, Operator, str]]:
        left = node.child_by_field_name("left")
        right = node.child_by_field_name("right")
        operator = node.child_by_field_name("operator")
        if left is None or right is None or operator is None:
            return
        said = self.text(operator)
        if said in BOUNDARY or said in NEGATED:
            if self.text(left).strip() == self.text(right).strip():
                return  # a value compared with itself
            table, kind = ((BOUNDARY, Operator.BOUNDARY) if said in BOUNDARY
                           else (NEGATED, Operator.NEGATED_COMPARISON))
            yield operator, table[said], kind, f"{said} -> {table[said]}"
            number = self.text(right)
            if said in BOUNDARY and right.type == "number" and number.isdigit():
                yield right, str(int(number) + 1), Operator.CONSTANT_BOUNDARY, \
                    f"{number} -> {int(number) + 1}"
        elif said in BOOLEAN:
            yield operator, BOOLEAN[said], Operator.BOOLEAN_SWAP, f"{said} -> {BOOLEAN[said]}"

    def _condition(self, node: tree_sitter.Node) -> Iterator[
            tuple[tree_sitter.Node, str, Operator, str]]:
        condition = node.child_by_field_name("condition")
        if condition is None or condition.type != "parenthesized_expression" or (
                not condition.named_children):
            return
        inner = condition.named_children[0]
        if inner.type == "unary_expression" and self.text(inner).startswith("!"):
            argument = inner.child_by_field_name("argument")
            if argument is not None:
                yield inner, self.text(argument), Operator.NEGATED_CONDITION, "! dropped"
            return
        negated = f"!({self.text(inner)})"
        yield inner, negated, Operator.NEGATED_CONDITION, negated

    def _guard(self, node: tree_sitter.Node) -> Iterator[
            tuple[tree_sitter.Node, str, Operator, str]]:
        body = node.child_by_field_name("consequence")
        if body is None or node.child_by_field_name("alternative") is not None:
            return
        statements = body.named_children if body.type == "statement_block" else [body]
        statements = [each for each in statements if each.type != "comment"]
        if len(statements) == 1 and statements[0].type in {"throw_statement",
                                                            "return_statement"}:
            [statement] = statements
            word = statement.type.split("_")[0]
            yield statement, "{}" if statement is body else ";", Operator.GUARD_REMOVED, \
                f"{word} removed"

    def _default(self, node: tree_sitter.Node) -> Iterator[
            tuple[tree_sitter.Node, str, Operator, str]]:
        name, value = node.child_by_field_name("left"), node.child_by_field_name("right")
        if name is None or value is None:
            return
        said = self.text(value)
        if value.type == "number" and said.isdigit():
            yield value, str(int(said) + 1), Operator.DEFAULT_CHANGED, \
                f"{self.text(name)}={said} -> {int(said) + 1}"
        elif said in {"true", "false"}:
            flipped = "false" if said == "true" else "true"
            yield value, flipped, Operator.DEFAULT_CHANGED, \
                f"{self.text(name)}={said} -> {flipped}"
        elif value.type == "string" and len(said) > 2 and said[0] in {"'", '"'}:
            empty = said[0] * 2
            yield value, empty, Operator.DEFAULT_CHANGED, f"{self.text(name)}={said} -> {empty}"

    def _swapped(self, node: tree_sitter.Node) -> Iterator[
            tuple[tree_sitter.Node, str, Operator, str]]:
        arguments = node.child_by_field_name("arguments")
        if arguments is None or arguments.type != "arguments":
            return
        given = [each for each in arguments.named_children if each.type != "comment"]
        if len(given) != 2:
            return
        first, second = given
        one, two = self.text(first), self.text(second)
        if first.type != second.type or first.type not in SAME_KIND or one == two:
            return
        head = self.data[arguments.start_byte:first.start_byte].decode("utf-8")
        between = self.data[first.end_byte:second.start_byte].decode("utf-8")
        tail = self.data[second.end_byte:arguments.end_byte].decode("utf-8")
        yield arguments, f"{head}{two}{between}{one}{tail}", Operator.SWAPPED_ARGUMENTS, \
            f"({one}, {two}) -> ({two}, {one})"


def _parses(language: tree_sitter.Language, data: bytes) -> bool:
    return not tree_sitter.Parser(language).parse(data).root_node.has_error


def javascript_candidates(path: str, text: str, lines: Collection[int]) -> list[Candidate]:
    """Every candidate on `lines` (1-based) of the JavaScript or TypeScript source `text` of
    `path`, each exact and parsing after its splice. A file that does not parse has none."""
    language = _language(path)
    data = text.encode("utf-8")
    tree = tree_sitter.Parser(language).parse(data)
    if tree.root_node.has_error:
        return []
    finder = _Finder(data, lines)
    finder.walk(tree.root_node)
    made: list[Candidate] = []
    for found in finder.found:
        mutated = data[:found.start] + found.replacement.encode("utf-8") + data[found.end:]
        if mutated == data or not _parses(language, mutated):
            continue
        start = len(data[:found.start].decode("utf-8"))
        end = start + len(data[found.start:found.end].decode("utf-8"))
        made.append(Candidate(path, found.line, start, end, found.replacement, found.operator,
                              found.function, found.shown))
    return made
