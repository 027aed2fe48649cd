"""Document traits (docs/slices.md): what each document of a dataset is like (its pages, text layer,
language, gold size, schema depth, suite and the manifest's own columns), computed once per dataset
version and cached, so reports can slice runs by them."""

from oeb.traits.buckets import parse as parse_buckets
from oeb.traits.table import BUILTIN, Traits, document_traits

__all__ = ["BUILTIN", "Traits", "document_traits", "parse_buckets"]
