"""AutoGen (microsoft/autogen 027ecf0, autogen-ext 0.7.5): from the model's markdown to a file.

The shell path is a raw contract: the model writes markdown and `CodeExecutorAgent.
_extract_markdown_code_blocks` (python/packages/autogen-agentchat/src/autogen_agentchat/agents/
_code_executor_agent.py:733-741@027ecf0) pulls fenced blocks out with a lazy regex over the
supported languages (`python`, `sh`, line 423). `silence_pip` (python/packages/autogen-ext/src/
autogen_ext/code_executors/_common.py:114-131@027ecf0) then appends ` -qqq` to lines that start
with `pip install`. Each block is written verbatim to a file and run as `sh FILE`.

A task reply R is a command, so `autogen.markdown-blocks` first writes the message the model
would send (R in a ```sh fence) and extracts from that: a reply that itself contains three
backticks ends its block early, and the extracted code keeps the newline before the fence.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from boundary_audit.adapters.preprocess.interface import Context, Preprocessor, Staged

SUPPORTED_LANGUAGES = ("python", "sh")
"""`DEFAULT_SUPPORTED_LANGUAGES` (_code_executor_agent.py:423@027ecf0)."""


def extract_blocks(
    markdown: str, languages: tuple[str, ...] = SUPPORTED_LANGUAGES
) -> list[tuple[str, str]]:
    """(language, code) of every fenced block the agent's regex finds, in order."""
    alternatives = "|".join(re.escape(lang) for lang in languages)
    pattern = re.compile(rf"```(?:\s*({alternatives}))\n([\s\S]*?)```", re.IGNORECASE)
    return [(lang.strip(), code) for lang, code in pattern.findall(markdown)]


def silence_pip(code: str, lang: str) -> str:
    """` -qqq` after a line-initial `pip install` (`! pip install` for python)."""
    if lang == "python":
        regex = r"^! ?pip install"
    elif lang in ("bash", "shell", "sh", "pwsh", "powershell", "ps1"):
        regex = r"^pip install"
    else:
        return code
    lines = code.split("\n")
    for i, line in enumerate(lines):
        match = re.search(regex, line)
        if match is not None and "-qqq" not in line:
            lines[i] = line.replace(match.group(0), match.group(0) + " -qqq")
    return "\n".join(lines)


class MarkdownBlocks(Preprocessor):
    """Frame R as the model's ```sh block, then extract blocks as the agent does."""

    name = "autogen.markdown-blocks"
    cite = (
        "python/packages/autogen-agentchat/src/autogen_agentchat/agents/"
        "_code_executor_agent.py:423,733-741@027ecf0"
    )
    summary = "R framed as a ```sh block, then pulled out by the agent's lazy fence regex"
    defaults: ClassVar[dict[str, Any]] = {"fence": "sh", "run": "sh"}

    def apply(self, text: str, ctx: Context | None) -> Staged:
        message = f"```{self.params['fence']}\n{text}\n```"
        blocks = extract_blocks(message)
        if not blocks:
            return Staged.refuse("no code block found in the message")
        wanted = self.params["run"]
        others = sorted({lang for lang, _ in blocks if lang.lower() != wanted})
        if others:
            return Staged.refuse(
                f"the message holds {', '.join(others)} block(s) this path "
                f"does not run (only {wanted})"
            )
        notes = (f"{len(blocks)} code blocks",) if len(blocks) > 1 else ()
        return Staged(parts=tuple(code for _, code in blocks), notes=notes)


class SilencePip(Preprocessor):
    """Append ` -qqq` to line-initial `pip install` commands."""

    name = "autogen.silence-pip"
    cite = "python/packages/autogen-ext/src/autogen_ext/code_executors/_common.py:114-131@027ecf0"
    summary = "` -qqq` appended to lines starting with `pip install`"
    defaults: ClassVar[dict[str, Any]] = {"lang": "sh"}

    def apply(self, text: str, ctx: Context | None) -> Staged:
        out = silence_pip(text, self.params["lang"])
        return Staged.one(out, *(("pip silenced",) if out != text else ()))
