"""Grounding and confidence (docs/grounding.md): where a system says each value came from, how sure it
says it is, and whether either can be trusted. Pure functions over values and tables; no files, no
network, no Ray. Adapters put what a vendor returned in the one shape of `oeb.grounding.cite`; the
grade stage writes it to `grounding.parquet`; the reports read it.
"""
