"""The plan of a run, before anything is asked: the config (`config`, checked by `_problems`, with
`--set` in `_set`), the documents chosen (`selection`) and the spending estimate and budget (`spending`).

It owns no file of a run folder and starts nothing. It may import `oeb.systems`, `oeb.dataset`,
`oeb.storage` and `oeb.errors`, never another part of `oeb.run`: every other stage reads the plan.
"""
