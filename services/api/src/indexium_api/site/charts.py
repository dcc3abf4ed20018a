"""Charts drawn on the server as inline SVG: no script, readable by screen readers (a title,
a description and a data table beside each chart)."""

from __future__ import annotations

from xml.sax.saxutils import escape

WIDTH, HEIGHT, PAD_L, PAD_B, PAD_T = 640, 200, 44, 24, 10


def _nice_max(value: int) -> int:
    """The axis top: 1, 2 or 5 times a power of ten, at least the value (and at least 1)."""
    if value <= 1:
        return 1
    magnitude = 1
    while magnitude * 10 <= value:
        magnitude *= 10
    for step in (1, 2, 5, 10):
        if step * magnitude >= value:
            return step * magnitude
    return 10 * magnitude  # pragma: no cover - the loop always returns


def servers_chart(days: list[tuple[str, int]], *, title: str) -> str:
    """An area chart of (ISO day, servers), oldest first."""
    t = escape(title)
    if not days:
        return ""
    top = _nice_max(max(n for _, n in days))
    inner_w, inner_h = WIDTH - PAD_L - 8, HEIGHT - PAD_B - PAD_T
    step = inner_w / max(len(days) - 1, 1)

    def x(i: int) -> float:
        return PAD_L + i * step

    def y(n: int) -> float:
        return PAD_T + inner_h - inner_h * n / top

    points = " ".join(f"{x(i):.1f},{y(n):.1f}" for i, (_, n) in enumerate(days))
    base = PAD_T + inner_h
    area = f"{x(0):.1f},{base:.1f} {points} {x(len(days) - 1):.1f},{base:.1f}"
    total_last = days[-1][1]
    desc = escape(f"{len(days)} days from {days[0][0]} to {days[-1][0]}; last day {total_last} servers, "
                  f"peak {max(n for _, n in days)}.")
    grid = "".join(
        f'<line x1="{PAD_L}" x2="{WIDTH - 8}" y1="{y(v):.1f}" y2="{y(v):.1f}" class="grid"/>'
        f'<text x="{PAD_L - 6}" y="{y(v) + 4:.1f}" text-anchor="end" class="axis">{v}</text>'
        for v in (0, top // 2, top) if v or v == 0)
    labels = (f'<text x="{x(0):.1f}" y="{HEIGHT - 6}" class="axis">{escape(days[0][0])}</text>'
              f'<text x="{x(len(days) - 1):.1f}" y="{HEIGHT - 6}" text-anchor="end" class="axis">'
              f'{escape(days[-1][0])}</text>')
    return (f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-labelledby="chart-t chart-d" '
            f'xmlns="http://www.w3.org/2000/svg" preserveAspectRatio="xMidYMid meet">'
            f'<title id="chart-t">{t}</title><desc id="chart-d">{desc}</desc>{grid}'
            f'<polygon points="{area}" class="area"/><polyline points="{points}" class="line"/>{labels}</svg>')


def bars(items: list[tuple[str, int]]) -> list[dict]:
    """A breakdown as rows with a percentage width (drawn as CSS bars in the template)."""
    total = sum(n for _, n in items) or 1
    return [{"label": label, "count": n, "pct": round(100 * n / total, 1)}
            for label, n in sorted(items, key=lambda kv: (-kv[1], kv[0]))]
