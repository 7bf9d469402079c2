"""A deterministic synthetic source tree for the static benchmark, built without network.

A share of the generated files (`sink_share`, default 0.25) carries one of the check
fixtures or specimens (all seven languages) with its identifiers varied, embedded in ordinary
filler code of the same language (functions, classes, loops, dicts); the other files are
filler only. Real harnesses are in that range: 13% of AutoGen@027ecf0's and 26% of
SWE-agent@3ea751c's source files have any sink candidate at all. Files are spread over nested
package folders. Same seed, same tree.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [ROOT / "tests" / "fixtures" / "checks", ROOT / "specimens"]
EXT_LANG = {
    ".py": "python",
    ".js": "javascript",
    ".ts": "typescript",
    ".tsx": "tsx",
    ".rs": "rust",
    ".go": "go",
    ".sh": "shell",
}
MIX = {"python": 40, "typescript": 18, "javascript": 10, "go": 10, "rust": 10, "shell": 6, "tsx": 6}
WORDS = ["alpha", "beta", "gamma", "delta", "kappa", "sigma", "omega", "tau", "rho", "zeta"]


def filler(lang: str, rng: random.Random, n: int) -> str:
    """One block of ordinary code (no sinks) in `lang`, numbered `n`."""
    k, m, w = rng.randint(2, 97), rng.randint(2, 9), rng.choice(WORDS)
    if lang == "python":
        return f'''

def helper_{n}(items, factor={k}):
    """Fold {w} values."""
    total = 0
    for i, item in enumerate(items):
        if item % {m} == 0:
            total += item * factor
        else:
            total -= len(str(item)) + i
    return {{"name": "{w}-{n}", "total": total, "values": [x * {k} for x in items if x]}}


class Model{n}:
    def __init__(self, name, size={k}):
        self.name = name
        self.size = size
        self.cache = {{}}

    def get(self, key, default="{w}"):
        value = self.cache.get(key, default)
        return f"{{self.name}}:{{value}}:{{self.size * {m}}}"
'''
    if lang in ("javascript", "typescript", "tsx"):
        typed = lang != "javascript"
        ann = ": number[]" if typed else ""
        ret = ": number" if typed else ""
        return f'''

export function helper{n}(items{ann}, factor = {k}){ret} {{
  let total = 0;
  for (const [i, item] of items.entries()) {{
    if (item % {m} === 0) {{
      total += item * factor;
    }} else {{
      total -= String(item).length + i;
    }}
  }}
  const label = `{w}-${{total}}-{n}`;
  return label.length + total;
}}

export class Store{n} {{
  private_cache = new Map();
  get(key, fallback = "{w}") {{
    return this.private_cache.has(key) ? this.private_cache.get(key) : fallback + {k};
  }}
}}
'''
    if lang == "rust":
        return f'''

pub fn helper_{n}(items: &[i64], factor: i64) -> i64 {{
    let mut total = 0;
    for (i, item) in items.iter().enumerate() {{
        if item % {m} == 0 {{
            total += item * factor;
        }} else {{
            total -= format!("{{}}", item).len() as i64 + i as i64;
        }}
    }}
    total + {k}
}}

pub struct Store{n} {{
    name: String,
    size: usize,
}}

impl Store{n} {{
    pub fn label(&self) -> String {{
        format!("{w}:{{}}:{{}}", self.name, self.size * {m})
    }}
}}
'''
    if lang == "go":
        return f'''

func helper{n}(items []int, factor int) int {{
	total := 0
	for i, item := range items {{
		if item%{m} == 0 {{
			total += item * factor
		}} else {{
			total -= len(fmt.Sprint(item)) + i
		}}
	}}
	return total + {k}
}}

type Store{n} struct {{
	Name string
	Size int
}}

func (s *Store{n}) Label() string {{
	return fmt.Sprintf("{w}:%s:%d", s.Name, s.Size*{m})
}}
'''
    return f'''

helper_{n}() {{
  local total=0
  for item in "$@"; do
    if [ $((item % {m})) -eq 0 ]; then
      total=$((total + item * {k}))
    else
      total=$((total - ${{#item}}))
    fi
  done
  printf '%s-%d\\n' "{w}" "$total"
}}
'''


def _vary(text: str, suffix: str) -> str:
    """Rename top-level definitions so each copy is a distinct program."""
    text = re.sub(r"\b(def|function|fn|func|class)\s+([A-Za-z_]\w*)", rf"\1 \2{suffix}", text)
    return re.sub(r"^([a-z_]+)\(\) \{", rf"\1{suffix}() {{", text, flags=re.M)


def _go_prelude(text: str) -> tuple[str, str]:
    """Go files keep their package/imports first and gain "fmt" for the filler."""
    header, _, body = text.partition("\nfunc ")
    if "import (" in header:
        header = header.replace("import (", 'import (\n\t"fmt"', 1)
    elif "import " in header:
        header = header.replace("import ", 'import "fmt"\nimport ', 1)
    else:
        header += '\nimport "fmt"\n'
    return header, ("\nfunc " + body) if body else ""


def load_sources() -> dict[str, list[str]]:
    """Fixture and specimen texts by language."""
    out: dict[str, list[str]] = {lang: [] for lang in MIX}
    for base in SOURCES:
        for path in sorted(base.rglob("*")):
            lang = EXT_LANG.get(path.suffix)
            if lang and path.is_file():
                out[lang].append(path.read_text(encoding="utf-8"))
    return out


def generate(
    dest: Path, size_mb: float = 10.0, seed: int = 2, sink_share: float = 0.25
) -> dict[str, int]:
    """Write the tree under `dest`; returns files per language."""
    rng = random.Random(seed)
    sources = load_sources()
    langs = [lang for lang, weight in MIX.items() for _ in range(weight)]
    target = int(size_mb * 1024 * 1024)
    total = 0
    counts: dict[str, int] = {}
    n = 0
    while total < target:
        lang = rng.choice(langs)
        seeded = rng.random() < sink_share
        seed_text = (
            _vary(rng.choice(sources[lang]), f"_{n}")
            if seeded
            else (f"package pkg{n}\n" if lang == "go" else "")
        )
        blocks = [filler(lang, rng, n * 100 + b) for b in range(rng.randint(12, 40))]
        if lang == "go":
            header, body = _go_prelude(seed_text)
            text = header + "".join(blocks) + body
        elif lang == "shell":
            text = seed_text + "".join(blocks)
        else:
            cut = rng.randint(0, len(blocks))
            text = "".join(blocks[:cut]) + "\n" + seed_text + "".join(blocks[cut:])
        ext = next(e for e, lg in EXT_LANG.items() if lg == lang)
        folder = dest / f"pkg{n % 17}" / f"mod{n % 5}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"file_{n}{ext}"
        path.write_text(text, encoding="utf-8")
        total += len(text.encode("utf-8"))
        counts[lang] = counts.get(lang, 0) + 1
        n += 1
    return dict(sorted(counts.items()))
