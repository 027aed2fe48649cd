"""The run folder, the single source of truth of a run (docs/architecture.md): its layout, records and
settings (`run_folder`) and the lock one writer holds on it (`lock`).

It may import the plan (`oeb.run.plan`, to write config.yaml), `oeb.storage` and `oeb.errors`; never
predicting, grading, the cluster plumbing nor the engine, which all write through it.
"""
