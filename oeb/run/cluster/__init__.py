"""The cluster plumbing: where the work of a command runs and what workers are handed (`session`:
in this process, a private local Ray or a running one), and what a run shows while it works
(`progress`, with the counters of `metrics`).

It may import `oeb.storage`, `oeb.errors` and `oeb._sigterm`, nothing else of `oeb.run`: `import oeb`
and every `oeb` command load part of it, so it stays light (Ray is imported only when used).
"""
