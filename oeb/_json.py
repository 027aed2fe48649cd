"""JSON text parsed the way every oeb reader needs: hostile text is a `JSONDecodeError`, never a crash.

`json.loads` raises two other errors on text a user or a system can hand oeb: `RecursionError` for
nesting deeper than Python's recursion limit (`[[[[...]]]]`, 1,000 levels) and a plain `ValueError`
for an integer longer than Python's digit limit (4,300 digits). Every reader already turns a
`JSONDecodeError` into its one-line refusal (or a document's failure), so both become one.
"""

from __future__ import annotations

import json
import sys
from typing import Any


def loads(text: str | bytes) -> Any:
    """`json.loads`, with nesting and number-length limits reported as a `json.JSONDecodeError`."""
    try:
        return json.loads(text)
    except RecursionError:
        problem = f"nested more than about {sys.getrecursionlimit()} levels deep, too deep to read"
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise
    except ValueError:  # the decoder's only other ValueError: int(digits) past the limit
        problem = f"holds an integer longer than {sys.get_int_max_str_digits()} digits, too long to read"
    error = json.JSONDecodeError(problem, text if isinstance(text, str) else "", 0)
    error.args = (problem,)  # no "line 1 column 1": the problem has no position
    raise error from None
