"""oeb: a benchmark harness for document-extraction systems."""

__version__ = "0.1.0"
