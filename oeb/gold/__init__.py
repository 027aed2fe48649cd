"""Gold you can dispute, fix, measure and trace (docs/adjudication.md): the adjudication file
(`entries`), oeb's grading rule under accepted entries (`apply`), their checks against a dataset
(`check`), graded runs under a file (`runs`, `diff`), proposals from the gold audit (`propose`), and
the gold's own error from a checked random sample (`sample`, `error`).

Nothing here changes the scorer (`oeb.scoring`): entries change verdicts after it has scored.
"""
