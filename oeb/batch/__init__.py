"""Provider batches in a run: a system whose options ask for batches (`Adapter.batching`) has its
documents sent as batches instead of one request each (docs/systems/llm.md).

`files` keeps each batch in the run folder (`batches/<name>.json`, written as an intent before its
create is sent and given the provider's id the moment it comes back, removed once every document in
it is saved or sent again), so a kill, Ctrl-C or a lost answer never sends a held document twice:
`intents` finds a batch whose create answer was lost in the provider's list, and `oeb resume`
collects the batches in flight. `sender`
cuts the documents into batches within the provider's limits and the budget, sends them, polls them
with a growing interval on one thread that sleeps between polls, and turns their results into
records. The run engine (`oeb.run.predict`) composes it; nothing here knows Ray.
"""
