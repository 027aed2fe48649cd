"""Gold you can dispute, fix, measure and trace (docs/adjudication.md): the adjudication file
(`entries`), oeb's grading rule under accepted entries (`apply`), their checks against a dataset
(`check`, with `validate` for values against their schema), proposals from the gold audit's findings
(`propose`), a seeded sample of gold values (`sample`) and the gold's own error rate (`error`).

Nothing here changes the scorer (`oeb.scoring`): entries change verdicts after it has scored. The
package imports neither the engine nor the reports, so grading (`oeb.run.grade`) can use it; graded
runs under a file and the diff are `oeb.report.adjudicated` and `oeb.report.gold_diff`.
"""
