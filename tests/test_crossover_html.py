"""The HTML crossover report, opened in a real headless browser (Debian's chromium).

The page is built by the command from the study's eight configurations (Table 15's per-family
breakdown, read back with `--runs`) and the committed Table-8 report. It must be
self-contained (no script, no link, no fetched resource), load with no console error, and its
screenshot must show the heat map: the image element is where the page says, decoded, and its
region of the screenshot holds the heat map's colours. A page with a console error and a
missing image shows that the same check fails where it should.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from PIL import Image

from boundary_audit import cli
from tests.support.browser import open_page
from tests.test_crossover_cli import study_runs

REPO = Path(__file__).resolve().parent.parent


def build(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    runs = study_runs(tmp_path / "study.json")
    page = tmp_path / "report.html"
    code = cli.main(["crossover", "--runs", str(runs), "--table8", str(REPO / "reports" /
                     "table8.json"), "--format", "html", "-o", str(page)])  # fmt: skip
    _, err = capsys.readouterr()
    assert code == 0, err
    return page


def test_the_page_is_self_contained_and_deterministic(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = build(tmp_path, capsys)
    html = page.read_text()
    assert html.startswith("<!DOCTYPE html>") and html.endswith("</html>\n")
    assert "<script" not in html and "<link" not in html and "url(" not in html
    sources = re.findall(r'\b(?:src|href)="([^"]*)"', html)
    assert len(sources) == 2 and all(s.startswith("data:image/png;base64,") for s in sources)
    assert re.findall(r'<img id="([^"]+)"', html) == ["heatmap-0", "bars-0"]
    # The Table-15 row and a Table-8 row, HTML-escaped.
    assert "<td>GPT-5.6-sol</td>" in html and ".001465" in html
    assert "<td>SWE-agent</td>" in html and "sweagent/agent/agents.py:936-967@3ea751c" in html
    first = page.read_bytes()
    assert build(tmp_path, capsys).read_bytes() == first


def _share(img: Image.Image, test: object) -> float:
    rgb = img.convert("RGB")
    pixels = [rgb.getpixel((x, y)) for y in range(0, rgb.height, 2) for x in range(0, rgb.width, 2)]
    return sum(1 for p in pixels if test(p)) / len(pixels)  # type: ignore[operator]


def test_the_browser_shows_the_heat_map_without_console_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    visit = open_page(build(tmp_path, capsys), ids=("heatmap-0", "bars-0"))
    assert visit.errors == []
    box = visit.boxes["heatmap-0"]
    assert box["complete"] and box["natural_width"] > 600 and box["height"] > 200
    assert visit.boxes["bars-0"]["natural_width"] > 600
    shot = Image.open(io.BytesIO(visit.screenshot))
    assert shot.format == "PNG" and shot.width == 1280
    region = shot.crop(
        (int(box["x"]), int(box["y"]), int(box["x"] + box["width"]), int(box["y"] + box["height"]))
    )
    # The heat map: red (low success) and blue (high success) cells, not a blank box.
    red = _share(region, lambda p: p[0] > 150 and p[1] < 80 and p[2] < 80)
    blue = _share(region, lambda p: p[2] > 140 and p[0] < 90)
    white = _share(region, lambda p: min(p) > 240)
    assert red > 0.03 and blue > 0.10 and white < 0.6, (red, blue, white)


def test_the_check_sees_console_errors_and_missing_images(tmp_path: Path) -> None:
    bad = tmp_path / "bad.html"
    bad.write_text(
        '<!DOCTYPE html><html><body><img id="gone" src="missing.png">'
        '<script>console.error("boom")</script></body></html>'
    )
    visit = open_page(bad, ids=("gone",))
    assert sorted(visit.errors) == [
        "error: Failed to load resource: net::ERR_FILE_NOT_FOUND",
        "error: boom",
    ]
    assert visit.boxes["gone"]["natural_width"] == 0
