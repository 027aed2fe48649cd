"""Which columns of a rich table fit a terminal's width with every figure whole.

Rich squeezes a table wider than its console by cutting cells (`86.82–94.8`, `d…`); a figure cut is a
wrong figure. So a table is given only the columns whose widest cell fits, dropping the least
important first; the caller names the dropped ones in one line (`dropped_line`).
"""

from __future__ import annotations

from dataclasses import dataclass

ALWAYS = 0
"""The priority of a column never dropped (a leaderboard's system, headline and CI)."""


@dataclass(frozen=True)
class Column:
    """A column's header, the width its cells need whole, and its priority: higher numbers are
    dropped first, then the later of equal ones; `ALWAYS` never."""

    header: str
    need: int
    priority: int = ALWAYS
    natural: int = 0
    """The width it takes with its header on one line (given room)."""


def table_width(needs: list[int]) -> int:
    """A rich table's width with these column widths: a padding of 1 each side and a rule between
    and around the columns (the default box, padding (0, 1))."""
    return sum(needs) + 3 * len(needs) + 1


def cells_need(header: str, cells: list[str], *, wrap_header: bool = True) -> int:
    """The width a column needs to show every cell whole: its longest cell line, and its header's
    longest word (or whole header when headers do not wrap)."""
    head = max((len(word) for word in header.split()), default=0) if wrap_header else len(header)
    return max([head, *(len(line) for cell in cells for line in cell.splitlines())])


def column(header: str, cells: list[str], priority: int = ALWAYS, most: int | None = None) -> Column:
    """A column of these cells; `most` caps what it needs (a long label folds onto more lines)."""
    need = cells_need(header, cells)
    natural = max(need, len(header), *(len(line) for cell in cells for line in cell.splitlines()))
    return Column(header, need if most is None else min(most, need), priority, natural)


def fit(columns: list[Column], width: int) -> list[Column]:
    """The columns that fit `width`, in their order: the least important dropped first."""
    kept = list(columns)
    droppable = sorted(
        (column for column in columns if column.priority != ALWAYS),
        key=lambda column: (-column.priority, -columns.index(column)),
    )
    for column in droppable:
        if table_width([c.need for c in kept]) <= width:
            break
        kept.remove(column)
    return kept


def widths(columns: list[Column], width: int, later: frozenset[int] = frozenset()) -> list[int]:
    """Each column's width: what it needs, then the room left given in order until each has its
    natural width, the `later` columns (names that fold) last (rich's own squeezing ignores a
    column's minimum and cuts figures)."""
    out = [column.need for column in columns]
    spare = width - table_width(out)
    order = [i for i in range(len(columns)) if i not in later] + sorted(later)
    for i in order:
        column = columns[i]
        grow = max(0, min(spare, column.natural - column.need))
        out[i] += grow
        spare -= grow
    return out


def dropped_line(dropped: list[str], width: int, how: str) -> str:
    """The line naming the columns left out and how to see them."""
    return f"not shown at {width} columns: {', '.join(dropped)}; {how}"
