"""Grading: the grade stage (`stage`, with the tasks it runs in `task` and Ray's warm workers in
`workers`), the verdicts cache and results files (`results`: verdicts.parquet, scores, summary),
grading a folder again (`regrade`), the grading pages of a dataset (`pages`) and the provenance a
graded folder records (`provenance`).

It may import the plan (`oeb.run.plan`), the run folder (`oeb.run.folder`), the cluster plumbing
(`oeb.run.cluster`), `oeb.scoring`, `oeb.dataset` and the adjudication rule (`oeb.gold`); never
predicting (`oeb.run.predict`) nor the engine.
"""
