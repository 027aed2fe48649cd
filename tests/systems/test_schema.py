"""Schema conventions (step A) and the vendor dialects (step B), on the reference's worked example."""

from __future__ import annotations

import copy

from oeb.systems.schema import (
    CONVENTIONS,
    azure_field_schema,
    extend_dialect,
    inline_refs,
    llama_dialect,
    optional_by_omission,
    question_schema,
)

EXAMPLE = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "title": "Doc",
    "required": ["id", "total", "note", "items"],
    "properties": {
        "id": {"type": "string", "description": "doc id"},
        "total": {"type": ["number", "null"], "description": "total"},
        "note": {"anyOf": [{"type": "string"}, {"type": "null"}], "description": "a note"},
        "sev": {"enum": ["MILD", "SEVERE", None]},
        "tags": {"type": "array", "items": {"type": ["string", "null"], "minLength": 1}},
        "extra": {"type": "object", "additionalProperties": {"type": "string"}},
        "items": {"type": "array", "items": {"$ref": "#/$defs/Item"}},
        "flag": {"type": "boolean", "format": "x"},
    },
    "$defs": {
        "Item": {
            "type": "object",
            "properties": {"id": {"type": "integer"}, "qty": {"type": ["integer", "null"]}},
            "required": ["id"],
        }
    },
}
SENTENCE = {c.id: c.sentence for c in CONVENTIONS}


def test_datalab_makes_nullables_optional_and_leaves_unions_and_defs() -> None:
    sent = optional_by_omission(EXAMPLE)
    assert sent["required"] == ["id", "note", "items"]
    assert sent["properties"]["total"]["type"] == "number"
    assert sent["properties"]["tags"]["items"] == {"type": "string", "minLength": 1}
    assert sent["properties"]["note"] == EXAMPLE["properties"]["note"]
    assert sent["$defs"] == EXAMPLE["$defs"]


def test_extend_dialect_matches_the_reference_output() -> None:
    assert extend_dialect(EXAMPLE) == {
        "type": "object",
        "properties": {
            "id__": {"type": ["string", "null"], "description": "doc id"},
            "total": {"type": ["number", "null"], "description": "total"},
            "note": {"type": ["string", "null"], "description": "a note"},
            "sev": {"enum": ["MILD", "SEVERE", None]},
            "tags": {"type": "array", "items": {"type": "string"}},
            "extra": {"type": "object"},
            "items": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"id__": {"type": ["integer", "null"]}, "qty": {"type": ["integer", "null"]}},
                    "required": ["id__"],
                },
            },
            "flag": {"type": ["boolean", "null"]},
        },
        "required": ["id__", "total", "note", "items"],
    }


def test_extend_dialect_keeps_the_reference_edge_cases() -> None:
    schema = {
        "type": "object",
        "properties": {
            "codes": {"type": "array", "items": {"enum": ["A", "B"]}},
            "nothing": {"anyOf": [{"type": "null"}]},
            "level": {"type": "string", "enum": ["low", "high"]},
        },
    }
    properties = extend_dialect(schema)["properties"]
    assert properties["codes"] == {"type": "array", "items": {}}
    assert properties["nothing"] == {}
    assert properties["level"] == {"type": ["string", "null"], "enum": ["low", "high", None]}


def test_llamaextract_dialect_inlines_types_enums_and_opens_maps() -> None:
    sent = llama_dialect(EXAMPLE)
    assert "$schema" not in sent and "$defs" not in sent
    assert sent["properties"]["items"]["items"] == EXAMPLE["$defs"]["Item"]
    assert sent["properties"]["sev"] == {"enum": ["MILD", "SEVERE", None], "type": ["string", "null"]}
    assert sent["properties"]["extra"]["additionalProperties"] is True
    assert sent["title"] == "Doc"
    assert sent["properties"]["note"]["anyOf"] == EXAMPLE["properties"]["note"]["anyOf"]
    assert sent["properties"]["tags"]["items"]["minLength"] == 1
    assert sent["properties"]["flag"]["format"] == "x"


def test_azure_field_schema_matches_the_reference_output() -> None:
    assert azure_field_schema(EXAMPLE) == {
        "fields": {
            "id": {"type": "string", "description": "doc id"},
            "total": {"type": "number", "description": "total"},
            "note": {"type": "string", "description": "a note"},
            "sev": {"type": "string", "description": ""},
            "tags": {"type": "array", "description": "", "items": {"type": "string"}},
            "extra": {"type": "object", "description": "", "properties": {}},
            "items": {"type": "array", "description": "", "items": {"type": "string"}},
            "flag": {"type": "boolean", "description": ""},
        }
    }


def test_dialects_leave_their_input_alone() -> None:
    before = copy.deepcopy(EXAMPLE)
    for dialect in (optional_by_omission, extend_dialect, llama_dialect, azure_field_schema, question_schema):
        dialect(EXAMPLE)
    assert before == EXAMPLE


def test_inline_refs_stops_at_a_cycle_and_keeps_unresolvable_refs() -> None:
    tree = {
        "type": "object",
        "properties": {"root": {"$ref": "#/$defs/Node"}, "other": {"$ref": "#/$defs/Missing"}},
        "$defs": {
            "Node": {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}}
        },
    }
    inlined = inline_refs(tree)
    assert inlined["properties"]["root"]["properties"]["kids"]["items"] == {"$ref": "#/$defs/Node"}
    assert inlined["properties"]["other"] == {"$ref": "#/$defs/Missing"}


def test_conventions_append_once_to_matching_names_and_inherit_names() -> None:
    schema = {
        "type": "object",
        "properties": {
            "capex": {"type": "number", "description": "Capital spend."},
            "capex_pct": {"type": "number"},
            "report_authors": {"type": "array", "items": {"type": "string"}},
            "author_count": {"type": "integer"},
            "affiliation": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "paper": {"$ref": "#/$defs/author"},
        },
        "$defs": {"author": {"type": "string"}},
    }
    sent = question_schema(schema)
    props = sent["properties"]
    assert props["capex"]["description"] == f"Capital spend. {SENTENCE['monetary_sign_magnitude']}"
    assert "description" not in props["capex_pct"] and "description" not in props["author_count"]
    assert props["report_authors"]["items"]["description"] == SENTENCE["author_name_as_printed"]
    assert props["affiliation"]["anyOf"][0]["description"] == SENTENCE["affiliation_org_only"]
    assert sent["$defs"]["author"]["description"] == SENTENCE["author_name_as_printed"]
    assert props["paper"] == {"$ref": "#/$defs/author"}
    assert question_schema(sent) == sent  # not appended twice


def test_step_a_strips_annotations_but_keeps_a_property_named_default() -> None:
    schema = {
        "type": "object",
        "evaluation_config": {"weights": {}},
        "properties": {
            "total": {"type": "number", "default": 0, "evaluation_config": {"tolerance": 0.01}},
            "default": {"type": "string"},
        },
    }
    assert question_schema(schema) == {
        "type": "object",
        "properties": {"total": {"type": "number"}, "default": {"type": "string"}},
    }
