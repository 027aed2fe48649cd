"""The one hierarchy of errors oeb reports to its users.

Every class says when it is raised. The message of an `OebError` is the single line a user sees:
it names what is wrong and how to fix it. The CLI prints it as `oeb <command>: <message>` and
exits with the class's `exit_code`; anything that is not an `OebError` is a bug and keeps its
traceback.
"""

from __future__ import annotations


class OebError(Exception):
    """Base class: a problem with the user's input or environment, not a bug in oeb."""

    exit_code: int = 1


class UsageError(OebError):
    """The command line itself is wrong (a missing or conflicting flag)."""

    exit_code = 2


class InputFileError(OebError):
    """A file named by the user is missing, unreadable, not JSON or not the JSON it should be."""


class ScoreArgumentError(OebError, TypeError):
    """`score()` got an argument of the wrong type (a prediction that is a list, no schema, ...).

    It is a `TypeError` because the reference scorer raises `TypeError` for these inputs.
    """


class ScoreOptionError(OebError, ValueError):
    """`score()` got an option value that cannot apply (an unknown `order_matters` array name)."""


class SchemaError(OebError, ValueError):
    """A JSON Schema cannot be used for scoring (an unresolvable or external `$ref`)."""
