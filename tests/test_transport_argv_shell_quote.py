"""`argv-shell-quote`'s tokenizer against test vectors recorded from npm `shell-quote` 1.12.0.

Each vector is `(input, parse(input))` as the real package returned it (or the message it
threw). They were recorded with node 20 (`npm install shell-quote@1.12.0` in a scratch dir,
then `require("shell-quote/parse")` over the inputs) and are checked here without node or the
network. To re-record after a shell-quote release, run this module:
`python -m tests.test_transport_argv_shell_quote /path/to/node_modules` prints every input
whose live result differs from the port. The first 80 inputs were written by hand (operators,
quoting, ANSI-C strings, variables, comments, globs, Unicode spaces, unterminated quotes);
the other 60 come from a random hazard-alphabet fuzz of 23,000 inputs that all matched.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from boundary_audit.transports.shell_quote import Entry, ShellQuoteError, argv, parse

VECTORS: list[tuple[str, list[Entry] | ShellQuoteError]] = [
    ("a | b", ["a", {"op": "|"}, "b"]),
    ("a > out", ["a", {"op": ">"}, "out"]),
    ("ls *.txt", ["ls", {"op": "glob", "pattern": "*.txt"}]),
    ("cmd # c", ["cmd", {"comment": " c"}]),
    ("a $B c", ["a", "", "c"]),
    ("x$B", ["x"]),
    ('bash -c "echo hello world"', ["bash", "-c", "echo hello world"]),
    ("a || b && c", ["a", {"op": "||"}, "b", {"op": "&&"}, "c"]),
    ("a &> f", ["a", {"op": "&>"}, "f"]),
    ("a &>> f", ["a", {"op": "&>>"}, "f"]),
    ("x ;; y", ["x", {"op": ";;"}, "y"]),
    ("x ;;& y", ["x", {"op": ";;&"}, "y"]),
    ("a |& b", ["a", {"op": "|&"}, "b"]),
    ("a ;& b", ["a", {"op": ";&"}, "b"]),
    ("diff <(a) >(b)", ["diff", {"op": "<("}, "a", {"op": ")"}, {"op": ">("}, "b", {"op": ")"}]),
    ("cat <<< word", ["cat", {"op": "<<<"}, "word"]),
    ("cat <<- EOF", ["cat", {"op": "<<-"}, "EOF"]),
    ("cat <<EOF", ["cat", {"op": "<<"}, "EOF"]),
    ("a << (b)", ["a", {"op": "<<"}, {"op": "("}, "b", {"op": ")"}]),
    ("a >> f", ["a", {"op": ">>"}, "f"]),
    ("a >& 2", ["a", {"op": ">&"}, "2"]),
    ("a >| f", ["a", {"op": ">|"}, "f"]),
    ("a <& 3", ["a", {"op": "<&"}, "3"]),
    ("a <> f", ["a", {"op": "<>"}, "f"]),
    ("printf '%s\\n' 'it'\\''s'", ["printf", "%s\\n", "it's"]),
    ('echo "a\\"b" \'c\\d\'', ["echo", 'a"b', "c\\d"]),
    ("echo \\$HOME \\\\ \\ x", ["echo", "$HOME", "\\", " x"]),
    ("echo $'a\\tb\\x41\\u00e9\\101\\cA'", ["echo", "a\tbAéA\x01"]),
    ("echo $'unterminated", ["echo", "$", "unterminated"]),
    ("echo $'a\\'b'", ["echo", "a'b"]),
    ("echo ${HOME}", ["echo", ""]),
    ("echo ${A:-x}y", ["echo", "y"]),
    ("echo ${a${b}c}", ["echo", ""]),
    ("echo $", ["echo", "$"]),
    ("echo $$ $? $# $@ $* $! $-", ["echo", "", "", "", "", "", "", ""]),
    ('echo "$"', ["echo", "$"]),
    ("echo \"${X}z\" '$Y'", ["echo", "z", "$Y"]),
    ("x=1 y='2 3' cmd", ["x=1", "y=2 3", "cmd"]),
    ('git commit -m "fix: it\'s done"', ["git", "commit", "-m", "fix: it's done"]),
    (
        "find . -name '*.py' -exec rm {} \\;",
        ["find", ".", "-name", "*.py", "-exec", "rm", "{}", ";"],
    ),
    ("grep -c 'a.b' f.txt", ["grep", "-c", "a.b", "f.txt"]),
    ("sed -i 's/a/b/g' f", ["sed", "-i", "s/a/b/g", "f"]),
    ("awk -F: '{print $1}' /etc/passwd", ["awk", "-F:", "{print $1}", "/etc/passwd"]),
    ("echo a#b c #d e", ["echo", "a", {"comment": "b c #d e"}]),
    ("echo 'a #b' c", ["echo", "a #b", "c"]),
    ("ls [ab]?.txt", ["ls", {"op": "glob", "pattern": "[ab]?.txt"}]),
    ("echo \"*\" '?'", ["echo", "*", "?"]),
    ("echo \\*", ["echo", {"op": "glob", "pattern": "*"}]),
    ("tab\there", ["tab", "here"]),
    ("new\nline", ["new", "line"]),
    ("echo é ü 日本", ["echo", "é", "ü", "日本"]),
    ("  leading and trailing  ", ["leading", "and", "trailing"]),
    ("", []),
    ("   ", []),
    ("a\xa0b", ["a", "b"]),
    ("a\u2003b", ["a", "b"]),
    ("a\x1cb", ["a\x1cb"]),
    ("a\ufeffb", ["a", "b"]),
    ('echo "multi\nline"', ["echo", "multi\nline"]),
    ("echo 'multi\nline'", ["echo", "multi\nline"]),
    ("(cd x && ls)", [{"op": "("}, "cd", "x", {"op": "&&"}, "ls", {"op": ")"}]),
    ("{ a; b; }", ["{", "a", {"op": ";"}, "b", {"op": ";"}, "}"]),
    ("echo `date`", ["echo", "`date`"]),
    ("echo $(pwd)", ["echo", "$", {"op": "("}, "pwd", {"op": ")"}]),
    ('a="$(echo x)"', ["a=$(echo x)"]),
    ('echo "\\$x" "\\n"', ["echo", "$x", "\\n"]),
    (
        "cat > out.txt <<'EOF'\nhello $x\nEOF",
        ["cat", {"op": ">"}, "out.txt", {"op": "<<"}, "EOF", "hello", "", "EOF"],
    ),
    ("echo ${}", ShellQuoteError("Bad substitution: ${}")),
    ("echo ${unclosed", ShellQuoteError("Bad substitution: unclosed")),
    ('echo "${unclosed"', ShellQuoteError('Bad substitution: unclosed"')),
    ('ssh host "cd /tmp && ls"', ["ssh", "host", "cd /tmp && ls"]),
    ('echo -- -n --flag="a b"', ["echo", "--", "-n", "--flag=a b"]),
    ("echo \\'x\\'", ["echo", "'x'"]),
    ('echo "\'"', ["echo", "'"]),
    ("echo '\"'", ["echo", '"']),
    ("echo a\\\nb", ["echo", "a", "b"]),
    ("x\\", ["x"]),
    ("\\", [""]),
    ("'unterminated", ["unterminated"]),
    ('"unterminated', ["unterminated"]),
    (")\\u00!> '=${!\\\n$)$<", ShellQuoteError("Bad substitution: !\\")),
    ("*\\u00]", [{"op": "glob", "pattern": "*u00]"}]),
    ("#)", [{"comment": ")"}]),
    ("~?;b", [{"op": "glob", "pattern": "~?"}, {"op": ";"}, "b"]),
    ("($-$$'", [{"op": "("}, ""]),
    ("$'`\\u00&;\\x4`é", ["$", "`u00", {"op": "&"}, {"op": ";"}, "x4`é"]),
    ("=\n=\n%`\t*\"\\'$'|;#$'!$'", ["=", "=", "%`", {"op": "glob", "pattern": "*"}, "'|;#$!$"]),
    (
        '" b\t|\t"?(*(?',
        [
            {"op": "glob", "pattern": " b\t|\t?"},
            {"op": "("},
            {"op": "glob", "pattern": "*"},
            {"op": "("},
            {"op": "glob", "pattern": "?"},
        ],
    ),
    ('\t "{*', [{"op": "glob", "pattern": "{*"}]),
    ("\\x4;", ["x4", {"op": ";"}]),
    ("\\'*!\t", [{"op": "glob", "pattern": "'*!"}]),
    ("<$bx*$'b\\u00~\\'%;", [{"op": "<"}, {"op": "glob", "pattern": "*$b\\u00~\\%"}, {"op": ";"}]),
    (
        ") x\\x4$][\n\n-$x|?",
        [{"op": ")"}, "xx4$][", "-", {"op": "|"}, {"op": "glob", "pattern": "?"}],
    ),
    (">", [{"op": ">"}]),
    (
        ")<-*<}!=$ ~\\x4é=b*",
        [
            {"op": ")"},
            {"op": "<"},
            {"op": "glob", "pattern": "-*"},
            {"op": "<"},
            "}!=$",
            {"op": "glob", "pattern": "~x4é=b*"},
        ],
    ),
    (
        '}"|-ab -`\n< %?',
        ["}", {"op": "|"}, "-ab", "-`", {"op": "<"}, {"op": "glob", "pattern": "%?"}],
    ),
    ("\\$$)-)};", ["$$", {"op": ")"}, "-", {"op": ")"}, "}", {"op": ";"}]),
    ("|", [{"op": "|"}]),
    ('"$$${>é$\\x4xb"`!\t', ShellQuoteError('Bad substitution: >é$\\x4xb"`!')),
    ("b>>\\u00<`\t\\\\' *$'\\b", ["b", {"op": ">>"}, "u00", {"op": "<"}, "`", "\\ *$b"]),
    ("!$')${)\\u00$';$\\(]\\u00a\\'\"", ["!)${)", {"op": ";"}, "$(]u00a'"]),
    ("{#a", ["{", {"comment": "a"}]),
    ("éb]*\\u00~\\u00", [{"op": "glob", "pattern": "éb]*u00~u00"}]),
    ("!\n]]-}-$'${*|*&$\\u00?}?", ShellQuoteError("Bad substitution: *")),
    ("\n<-=\\=$'>bba%?'`$\\x4\n", [{"op": "<"}, "-==>bba%?`$x4"]),
    (")'>$\\')#\"$'{\\'", [{"op": ")"}, ">$\\", {"op": ")"}, {"comment": "\"$'{\\'"}]),
    ("?$'", [{"op": "glob", "pattern": "?$"}]),
    ("\\\\x4?==`[\\\\x4##??$'&", ["\\x4?==`[\\x4", {"comment": "#??$'&"}]),
    ("}x=x\\|'%];é\na~${\\}\\x4", ["}x=x|", "%]", {"op": ";"}, "é", "a~x4"]),
    ("*>>\t", [{"op": "glob", "pattern": "*"}, {"op": ">>"}]),
    (' "`b|}>"\\x4|;#a=\\\'x', ["`b|}>x4", {"op": "|"}, {"op": ";"}, {"comment": "a=\\'x"}]),
    (
        "\t<é\\ ?-|a~&\\x4`>",
        [
            {"op": "<"},
            {"op": "glob", "pattern": "é ?-"},
            {"op": "|"},
            "a~",
            {"op": "&"},
            "x4`",
            {"op": ">"},
        ],
    ),
    ("$\"a|\n\t\n=>![$'\\x4", ["$", "a", {"op": "|"}, "=", {"op": ">"}, "![$", "x4"]),
    ("*)-\\'\t$'!é\\]$}\\x4", [{"op": "glob", "pattern": "*"}, {"op": ")"}, "-'", "$", "!é]$}x4"]),
    (
        "\\u00$'\\x4é\téx`=?;a~?b",
        [
            "u00$",
            "x4é",
            {"op": "glob", "pattern": "éx`=?"},
            {"op": ";"},
            {"op": "glob", "pattern": "a~?b"},
        ],
    ),
    ("->?~ ", ["-", {"op": ">"}, {"op": "glob", "pattern": "?~"}]),
    ("\")\n\\'${$'", ShellQuoteError("Bad substitution: $")),
    ("$ $'?\\]\\x4\\u00", ["$", "$", {"op": "glob", "pattern": "?]x4u00"}]),
    ("]%)`%*", ["]%", {"op": ")"}, {"op": "glob", "pattern": "`%*"}]),
    (" \\'%$'{}x~&$\n\\x4#\"{;", ["'%$", "{}x~", {"op": "&"}, "$", "x4", {"comment": '"{;'}]),
    ("x!$'\n<a\t", ["x!$", {"op": "<"}, "a"]),
    ("*-!'$`{\\x4& ~", [{"op": "glob", "pattern": "*-!"}, "$`{x4", {"op": "&"}, "~"]),
    ("<{~\té;", [{"op": "<"}, "{~", "é", {"op": ";"}]),
    ("(;~%]'&", [{"op": "("}, {"op": ";"}, "~%]", {"op": "&"}]),
    (" \\'*${ab%|><>\"", ShellQuoteError("Bad substitution: ab%")),
    ("\\u00", ["u00"]),
    ("é~$", ["é~$"]),
    ("[", ["["]),
    ("\\x4a$'{> '$'\\xx\"", ["x4a{> $", "xx"]),
    ("`", ["`"]),
    ("x-\\'[[", ["x-'[["]),
    ("\ta=é", ["a=é"]),
    ("\\u00[$';#`[é!|$'!\n]\t", ["u00[;#`[é!|$!", "]"]),
    ("\n$$[}", ["[}"]),
    ("", []),
    ("'}\"%|$*\\'$", ['}"%|$*\\$']),
    ('"`\n$\\u00{', ["`", "$u00{"]),
    ("\\`$'\"$' ~\n{ \t\"", ['`"$', "~", "{"]),
    ("~~\\x4", ["~~x4"]),
    ("$ `%$", ["$", "`%$"]),
]


@pytest.mark.parametrize(("text", "expected"), VECTORS, ids=range(len(VECTORS)))
def test_parse_matches_the_recorded_npm_result(
    text: str, expected: list[Entry] | ShellQuoteError
) -> None:
    if isinstance(expected, ShellQuoteError):
        with pytest.raises(ShellQuoteError) as err:
            parse(text)
        assert str(err.value) == str(expected)
    else:
        assert parse(text) == expected


def test_argv_keeps_only_the_strings_like_openhands_parse_command() -> None:
    assert argv("a | b") == ["a", "b"]
    assert argv("a > out") == ["a", "out"]
    assert argv("ls *.txt") == ["ls"]
    assert argv("cmd # c") == ["cmd"]
    assert argv("a $B c") == ["a", "", "c"]
    assert argv("x$B") == ["x"]
    assert argv('bash -c "echo hello world"') == ["bash", "-c", "echo hello world"]


def test_env_values_replace_variables() -> None:
    assert parse('echo $A ${B}c "$A"', {"A": "x y", "B": "b"}) == ["echo", "x y", "bc", "x y"]


def _live(node_modules: str) -> int:  # pragma: no cover - a maintenance tool, not a test
    script = (
        "const p=require('shell-quote/parse');const xs=JSON.parse(require('fs')"
        ".readFileSync(0,'utf8'));process.stdout.write(JSON.stringify(xs.map(s=>{try{return "
        "{entries:p(s)}}catch(e){return {error:e.message}}})))"
    )
    node = shutil.which("node") or "node"
    done = subprocess.run(
        [node, "-e", script],
        input=json.dumps([t for t, _ in VECTORS]).encode(),
        capture_output=True,
        check=True,
        env={"NODE_PATH": node_modules},
    )
    bad = 0
    for (text, _), live in zip(VECTORS, json.loads(done.stdout), strict=True):
        try:
            got: dict[str, object] = {"entries": parse(text)}
        except ShellQuoteError as exc:
            got = {"error": str(exc)}
        if got != live:
            bad += 1
            print(f"{text!r}: npm {live} port {got}")
    print(f"{bad} of {len(VECTORS)} differ")
    return 1 if bad else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(_live(sys.argv[1]))
