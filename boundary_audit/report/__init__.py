"""Report stage: pure renderers, one folder per report family (see `interface.Renderer`).

- `scan/`: the static-scan report (terminal, JSON v1, SARIF 2.1.0, Markdown);
- `probe/`: `boundary-audit probe` (terminal, JSON, Markdown);
- `table8/`: the Table-8 report (terminal, Markdown, JSON);
- `harness/`: `boundary-audit harness` (text, Markdown, JSON);
- `tasks/`: `boundary-audit tasks` (list, show, check);
- `console.py`: the one rich console recipe; `progress.py`: the terminal progress bar.

Renderers read `boundary_audit.results` only; they never run anything.
"""
