"""Shell scripts (bash/sh) → IR.

A word's IR is the value the script's own shell gives it: quotes removed, escapes resolved,
`$x`/`${x}` as names, `$(...)` as a call of its command. An unquoted expansion used as a
separate word is word-split (a `<word-split>` tokenizer call). A command is a call of its
name with its words as arguments; as a sink, `sink_expr` gives its argv (role `argv`), the
process it starts (role `receiver`), or the text it prints (role `value`: `echo`, `printf`,
`cat` with a heredoc or here-string). Functions take positional parameters `$1`..`$9`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import tree_sitter as ts

from boundary_audit.static.extract.base import Extractor
from boundary_audit.static.extract.strings import split_percent_format, unescape
from boundary_audit.static.ir import (
    Call,
    Def,
    Expr,
    Function,
    Index,
    Lit,
    Op,
    Ref,
    Seq,
    Span,
    Spread,
    Tmpl,
    Unknown,
)

_DQ_ESCAPE = re.compile(r'\\([$`"\\\n])')
_WORD_ESCAPE = re.compile(r"\\(.)", re.S)
_EXPANSIONS = frozenset({"simple_expansion", "expansion"})
POSITIONAL = tuple(str(i) for i in range(1, 10))


class ShellExtractor(Extractor):
    """IR extraction for shell scripts."""

    FUNCTION_TYPES = frozenset({"function_definition"})
    BLOCK_TYPES = frozenset(
        {
            "if_statement",
            "elif_clause",
            "else_clause",
            "for_statement",
            "while_statement",
            "case_item",
            "c_style_for_statement",
        }
    )
    SCOPE_STOP = frozenset({"function_definition"})
    CALL_TYPES = frozenset({"command"})
    CALLEE_FIELD = "name"
    FUNCTION_QUERY = "(function_definition) @fn"
    DESCEND = frozenset(
        {
            "program",
            "compound_statement",
            "if_statement",
            "elif_clause",
            "else_clause",
            "for_statement",
            "c_style_for_statement",
            "while_statement",
            "do_group",
            "case_statement",
            "case_item",
            "list",
            "pipeline",
            "subshell",
            "redirected_statement",
            "declaration_command",
            "negated_command",
        }
    )

    # -- words ------------------------------------------------------------------------------
    def convert(self, node: ts.Node) -> Expr:
        span = Span.of(node)
        t = node.type
        if t in ("word", "number", "command_name", "special_variable_name"):
            if t == "command_name" and node.named_children:
                return self.expr(node.named_children[0])
            return Lit(span, _WORD_ESCAPE.sub(r"\1", self.text(node)))
        if t == "raw_string":
            return Lit(span, self.text(node)[1:-1])
        if t == "ansi_c_string":
            return Lit(span, unescape(self.text(node)[2:-1]))
        if t == "string":
            return self.dquote(node)
        if t == "concatenation":
            return Tmpl(span, tuple(self.expr(c) for c in node.named_children), "concat")
        if t in _EXPANSIONS:
            return self.expansion(node)
        if t == "command_substitution":
            inner = [c for c in node.named_children if c.type != "comment"]
            return self.expr(inner[-1]) if inner else Unknown(span)
        if t == "command":
            return self.command(node)
        if t in ("pipeline", "list", "subshell", "redirected_statement"):
            return Op(
                span,
                tuple(
                    self.expr(c)
                    for c in node.named_children
                    if c.type not in ("comment", "file_redirect")
                ),
            )
        return Op(span, tuple(self.expr(c) for c in node.named_children if c.type != "comment"))

    def dquote(self, node: ts.Node) -> Expr:
        parts: list[Expr] = []
        for c in node.named_children:
            if c.type == "string_content":
                parts.append(Lit(Span.of(c), _DQ_ESCAPE.sub(r"\1", self.text(c))))
            else:
                parts.append(self.expr(c))
        if not node.named_children:
            return Lit(Span.of(node), "")
        if all(isinstance(p, Lit) for p in parts):
            return Lit(Span.of(node), "".join(p.text for p in parts if isinstance(p, Lit)))
        return Tmpl(Span.of(node), tuple(parts), "dquote")

    def expansion(self, node: ts.Node) -> Expr:
        span = Span.of(node)
        names = [
            c for c in node.named_children if c.type in ("variable_name", "special_variable_name")
        ]
        name = self.text(names[0]) if names else self.text(node).strip("${}").split(":")[0]
        ref: Expr = Ref(span, name)
        if self.text(node).endswith("@Q}"):
            return Call(span, Ref(span, "bash @Q"), "bash @Q", (ref,))
        return ref

    def command(self, node: ts.Node) -> Expr:
        name_node = node.child_by_field_name("name")
        name = self.text(name_node)
        args = tuple(self.word(a) for a in node.children_by_field_name("argument"))
        if (
            name == "printf"
            and len(args) >= 3
            and isinstance(args[0], Lit)
            and args[0].text == "-v"
        ):
            return Op(Span.of(node))
        if name == "printf" and args and isinstance(args[0], Lit) and "%q" in args[0].text:
            return Call(Span.of(node), Ref(Span.of(node), "printf %q"), "printf %q", args[1:])
        return Call(Span.of(node), self.expr(name_node), name, args)

    def word(self, node: ts.Node) -> Expr:
        """An argument word; an unquoted expansion alone is word-split."""
        value = self.expr(node)
        if node.type in _EXPANSIONS and isinstance(value, Ref) and value.name not in ("@", "*"):
            return Spread(
                value.span,
                Call(value.span, Ref(value.span, "<word-split>"), "<word-split>", (value,)),
            )
        if node.type in _EXPANSIONS and isinstance(value, Ref):
            return Spread(value.span, value)
        return value

    # -- sink roles -------------------------------------------------------------------------
    def argv_of(self, node: ts.Node) -> Seq:
        """The argv a command node runs."""
        name_node = node.child_by_field_name("name")
        items = [
            self.word(name_node.named_children[0])
            if name_node is not None and name_node.named_children
            else self.expr(name_node)
        ]
        items.extend(self.word(a) for a in node.children_by_field_name("argument"))
        return Seq(Span.of(node), tuple(items))

    def sink_expr(self, node: ts.Node, role: str) -> Expr:
        """The IR of a sink's node in `role` (argv, receiver, value)."""
        if node.type != "command":
            return self.expr(node)
        if role == "argv":
            return self.argv_of(node)
        if role == "receiver":
            return Call(
                Span.of(node), Ref(Span.of(node), "<spawn>"), "<spawn>", (self.argv_of(node),)
            )
        return self.output_of(node)

    def output_of(self, node: ts.Node) -> Expr:
        """The text a producer command prints: echo/printf arguments, a heredoc, a here-string."""
        span = Span.of(node)
        name = self.text(node.child_by_field_name("name"))
        args = [self.expr(a) for a in node.children_by_field_name("argument")]
        if name == "echo":
            words = [a for a in args if not (isinstance(a, Lit) and a.text in ("-n", "-e", "-E"))]
            parts: list[Expr] = []
            for i, w in enumerate(words):
                if i:
                    parts.append(Lit(span, " "))
                parts.append(w)
            return Tmpl(span, tuple(parts), "echo")
        if name == "printf" and args and isinstance(args[0], Lit):
            parts = []
            for piece in split_percent_format(unescape(args[0].text)):
                if isinstance(piece, str):
                    parts.append(Lit(span, piece))
                elif isinstance(piece, int):
                    parts.append(args[1 + piece] if 1 + piece < len(args) else Lit(span, ""))
            return Tmpl(span, tuple(parts), "printf")
        body = self.redirect_body(node)
        return body if body is not None else Op(span, tuple(args))

    def redirect_body(self, node: ts.Node) -> Expr | None:
        """The heredoc or here-string fed to `node` (its redirected_statement parent)."""
        redirects = list(node.children_by_field_name("redirect"))
        parent = node.parent
        if parent is not None and parent.type == "redirected_statement":
            redirects += parent.children_by_field_name("redirect")
        for r in redirects:
            if r.type == "herestring_redirect" and r.named_children:
                return self.expr(r.named_children[-1])
            if r.type == "heredoc_redirect":
                bodies = [c for c in r.named_children if c.type == "heredoc_body"]
                if bodies:
                    return self.heredoc(bodies[0], quoted=("'" in self.text(r).split("\n")[0]))
        return None

    def heredoc(self, body: ts.Node, quoted: bool) -> Expr:
        if quoted or not body.named_children:
            return Lit(Span.of(body), self.text(body))
        parts: list[Expr] = []
        pos = body.start_byte
        for c in body.named_children:
            if c.start_byte > pos:
                parts.append(
                    Lit(Span.of(body), self.data[pos : c.start_byte].decode("utf-8", "replace"))
                )
            parts.append(self.expr(c))
            pos = c.end_byte
        if pos < body.end_byte:
            parts.append(
                Lit(Span.of(body), self.data[pos : body.end_byte].decode("utf-8", "replace"))
            )
        return Tmpl(Span.of(body), tuple(parts), "heredoc")

    # -- functions and definitions ----------------------------------------------------------
    def describe_function(self, node: ts.Node) -> Function:
        name = self.text(node.child_by_field_name("name"))
        fn = Function(
            node.start_byte, name, Span.of(node), node, parent=self.enclosing_function(node)
        )
        span_node = node.child_by_field_name("name") or node
        fn.params = tuple(self.new_param(p, i, span_node) for i, p in enumerate(POSITIONAL))
        return fn

    def defs_of(self, node: ts.Node) -> Iterator[Def]:
        t = node.type
        if t == "variable_assignment":
            name = node.child_by_field_name("name")
            value = node.child_by_field_name("value")
            expr = self.expr(value) if value is not None else Lit(Span.of(node), "")
            if name is not None:
                yield Def(self.text(name), expr, node.end_byte, Span.of(node))
        elif t == "for_statement":
            var = node.child_by_field_name("variable")
            values = node.children_by_field_name("value")
            body = node.child_by_field_name("body")
            if var is not None:
                seq = Seq(Span.of(node), tuple(self.word(v) for v in values))
                yield Def(
                    self.text(var),
                    Index(Span.of(node), seq, None),
                    body.start_byte if body is not None else node.end_byte,
                    Span.of(node),
                    "loop",
                )
        elif t == "command" and self.text(node.child_by_field_name("name")) in ("read", "mapfile"):
            for a in node.children_by_field_name("argument"):
                text = self.text(a)
                if a.type == "word" and not text.startswith("-") and text.isidentifier():
                    yield Def(text, Unknown(Span.of(node)), node.end_byte, Span.of(node), "read")

    def unqualified_call_ok(self, call: Call) -> bool:
        """Shell functions are only called by bare name."""
        return False
