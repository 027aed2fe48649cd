"""Predicting: asking the systems and saving each answer the moment it comes back. The driver loop
(`stage`) drives each system's state (`system_run`) over the Ray actors and their pool (`actors`),
books starts under the rate limiter (`limiter`), writes records off the loop (`saver`), writes and
collects vendor jobs' handles (`jobs`, `jobs/<id>.json` of the run folder), takes answers of earlier
runs instead of buying them again (`reuse`) and keeps what storage refused on local disk (`spill`).

It may import the plan (`oeb.run.plan`), the run folder (`oeb.run.folder`), the cluster plumbing
(`oeb.run.cluster`), `oeb.systems` and `oeb.batch`; never the grading (`oeb.run.grade`) nor the engine.
"""
