"""Component schemas (DESIGN §16, issue 28) against an independent peer: Python's `jsonschema`.

For each (schema, instance) case a real hub registers the schema as a component's version 1
(`PUT /v1/components/{name}`), then a screen whose tree holds one node of that component — the
instance's members plus `"type"` (and, in some cases, the other hub keys) — is published
(`PUT /v1/screens/{name}`). The hub's verdict (200, or 422 `invalid_tree`) must be
`jsonschema.Draft202012Validator(schema).is_valid(instance)`: the node without its hub keys.

Python's `re` (which `jsonschema` uses for `pattern`) is not ECMA-262: its `\\d`, `\\w` and `\\s`
are Unicode, its `$` also matches before a final newline, its `.` matches `\\r` and U+2028. The
peer cases keep to strings on which both dialects agree; DIALECT holds the others, with the hub's
verdict as ECMA-262 gives it (checked against node's RegExp in SchemaPatternTests).
"""
import json

import jsonschema
import pytest

from admin import call
from conftest import Hub

HUB_KEYS = ("type", "v", "fallback", "min_app_version")

# (id, schema, instance): each schema once valid and once not, at least, over every keyword.
CASES = [
    # type, with 2020-12's integers (1.0 is one)
    ("type-integer", {"properties": {"n": {"type": "integer"}}}, {"n": 1}),
    ("type-integer-1.0", {"properties": {"n": {"type": "integer"}}}, {"n": 1.0}),
    ("type-integer-100.0", {"properties": {"n": {"type": "integer"}}}, {"n": 1e2}),
    ("type-integer-1.5", {"properties": {"n": {"type": "integer"}}}, {"n": 1.5}),
    ("type-integer-string", {"properties": {"n": {"type": "integer"}}}, {"n": "1"}),
    ("type-integer-bool", {"properties": {"n": {"type": "integer"}}}, {"n": True}),
    ("type-number-int", {"properties": {"n": {"type": "number"}}}, {"n": -3}),
    ("type-number-null", {"properties": {"n": {"type": "number"}}}, {"n": None}),
    ("type-boolean-0", {"properties": {"b": {"type": "boolean"}}}, {"b": 0}),
    ("type-boolean", {"properties": {"b": {"type": "boolean"}}}, {"b": False}),
    ("type-array", {"properties": {"a": {"type": "array"}}}, {"a": []}),
    ("type-array-object", {"properties": {"a": {"type": "array"}}}, {"a": {}}),
    ("type-object-top", {"type": "object"}, {"anything": [1]}),
    ("type-list-null", {"properties": {"s": {"type": ["string", "null"]}}}, {"s": None}),
    ("type-list-number", {"properties": {"s": {"type": ["string", "null"]}}}, {"s": 3}),
    ("type-list-integer", {"properties": {"s": {"type": ["integer", "string"]}}}, {"s": 2.0}),
    ("type-list-fraction", {"properties": {"s": {"type": ["integer", "string"]}}}, {"s": 2.5}),
    # properties, nested
    ("nested-valid", {"properties": {"a": {"properties": {"b": {"properties": {"c": {"type": "string"}}}}}}},
     {"a": {"b": {"c": "x"}}}),
    ("nested-invalid", {"properties": {"a": {"properties": {"b": {"properties": {"c": {"type": "string"}}}}}}},
     {"a": {"b": {"c": 1}}}),
    ("nested-other-type", {"properties": {"a": {"properties": {"b": {"type": "string"}}}}}, {"a": [1, 2]}),
    ("property-escaped-names", {"properties": {"a/b": {"type": "string"}, "c~d": {"type": "number"}}},
     {"a/b": "x", "c~d": "y"}),
    # required
    ("required-present", {"required": ["items", "title"]}, {"items": [], "title": None}),
    ("required-missing", {"required": ["items", "title"]}, {"title": "x"}),
    ("required-empty", {"required": []}, {}),
    ("required-nested", {"properties": {"meta": {"required": ["id"]}}}, {"meta": {"name": "x"}}),
    # additionalProperties
    ("additional-false-ok", {"properties": {"color": {"type": "string"}}, "additionalProperties": False},
     {"color": "red"}),
    ("additional-false-extra", {"properties": {"color": {"type": "string"}}, "additionalProperties": False},
     {"color": "red", "colour": "red"}),
    ("additional-schema-ok", {"properties": {"id": {"type": "string"}}, "additionalProperties": {"type": "number"}},
     {"id": "x", "a": 1, "b": 2.5}),
    ("additional-schema-bad", {"properties": {"id": {"type": "string"}}, "additionalProperties": {"type": "number"}},
     {"id": "x", "a": "1"}),
    ("additional-true", {"additionalProperties": True}, {"x": {"y": 1}}),
    ("additional-nested-schema", {"properties": {"meta": {"additionalProperties": {"type": "string"}}}},
     {"meta": {"a": "x", "b": 1}}),
    ("additional-nested-false", {"properties": {"meta": {"properties": {"k": {}}, "additionalProperties": False}}},
     {"meta": {"k": 1}}),
    # items
    ("items-strings", {"properties": {"tags": {"type": "array", "items": {"type": "string"}}}}, {"tags": ["a", "b"]}),
    ("items-one-number", {"properties": {"tags": {"type": "array", "items": {"type": "string"}}}}, {"tags": ["a", 2]}),
    ("items-empty", {"properties": {"tags": {"items": {"type": "string"}}}}, {"tags": []}),
    ("items-objects", {"properties": {"slides": {"items": {"required": ["image"], "properties": {
        "image": {"type": "string", "pattern": "^https://"}}}}}},
     {"slides": [{"image": "https://a/1.png"}, {"image": "https://a/2.png", "alt": "x"}]}),
    ("items-objects-bad", {"properties": {"slides": {"items": {"required": ["image"], "properties": {
        "image": {"type": "string", "pattern": "^https://"}}}}}},
     {"slides": [{"image": "https://a/1.png"}, {"image": "http://a/2.png"}]}),
    ("items-false-empty", {"properties": {"none": {"items": False}}}, {"none": []}),
    ("items-false", {"properties": {"none": {"items": False}}}, {"none": [1]}),
    # enum
    ("enum-string", {"properties": {"style": {"enum": ["body", "title"]}}}, {"style": "title"}),
    ("enum-string-bad", {"properties": {"style": {"enum": ["body", "title"]}}}, {"style": "Title"}),
    ("enum-objects-order", {"properties": {"o": {"enum": [{"a": 1, "b": [True, None]}, "x"]}}},
     {"o": {"b": [True, None], "a": 1}}),
    ("enum-objects-extra", {"properties": {"o": {"enum": [{"a": 1}]}}}, {"o": {"a": 1, "b": 2}}),
    ("enum-number-1.0", {"properties": {"n": {"enum": [1, 2]}}}, {"n": 1.0}),
    ("enum-number-true", {"properties": {"n": {"enum": [1, 2]}}}, {"n": True}),
    ("enum-zero-false", {"properties": {"n": {"enum": [0]}}}, {"n": False}),
    ("enum-null", {"properties": {"n": {"enum": [None, "x"]}}}, {"n": None}),
    ("enum-array-order", {"properties": {"n": {"enum": [[1, 2]]}}}, {"n": [2, 1]}),
    ("enum-whole-node", {"enum": [{"kind": "new"}, {"kind": "sale"}]}, {"kind": "sale"}),
    # const
    ("const-object", {"properties": {"c": {"const": {"b": 1, "a": 2}}}}, {"c": {"a": 2, "b": 1}}),
    ("const-number", {"properties": {"c": {"const": 2}}}, {"c": 2.0}),
    ("const-number-bad", {"properties": {"c": {"const": 2}}}, {"c": 2.5}),
    ("const-composed", {"properties": {"c": {"const": "\u00e9"}}}, {"c": "e\u0301"}),
    ("const-null-false", {"properties": {"c": {"const": None}}}, {"c": False}),
    # minimum, maximum
    ("bounds-low-edge", {"properties": {"n": {"minimum": -1.5, "maximum": 10}}}, {"n": -1.5}),
    ("bounds-high-edge", {"properties": {"n": {"minimum": -1.5, "maximum": 10}}}, {"n": 10}),
    ("bounds-below", {"properties": {"n": {"minimum": -1.5, "maximum": 10}}}, {"n": -2}),
    ("bounds-above", {"properties": {"n": {"minimum": -1.5, "maximum": 10}}}, {"n": 10.000001}),
    ("bounds-negative-zero", {"properties": {"n": {"minimum": 0}}}, {"n": -0.0}),
    ("bounds-not-a-number", {"properties": {"n": {"minimum": 5}}}, {"n": "3"}),
    # minLength, maxLength: Unicode scalars (Python: code points)
    ("length-emoji", {"properties": {"s": {"maxLength": 1}}}, {"s": "\U0001F600"}),
    ("length-combining", {"properties": {"s": {"maxLength": 1}}}, {"s": "e\u0301"}),
    ("length-composed", {"properties": {"s": {"maxLength": 1}}}, {"s": "\u00e9"}),
    ("length-short", {"properties": {"s": {"minLength": 3}}}, {"s": "ab"}),
    ("length-exact", {"properties": {"s": {"minLength": 3, "maxLength": 3}}}, {"s": "a\U0001F600c"}),
    ("length-not-a-string", {"properties": {"s": {"minLength": 3}}}, {"s": 5}),
    ("length-empty", {"properties": {"s": {"maxLength": 0}}}, {"s": ""}),
    # pattern: our own ECMA-262 subset; an unanchored search
    ("pattern-anchored", {"properties": {"s": {"pattern": "^[a-z]+$"}}}, {"s": "abc"}),
    ("pattern-anchored-bad", {"properties": {"s": {"pattern": "^[a-z]+$"}}}, {"s": "abC"}),
    ("pattern-unanchored", {"properties": {"s": {"pattern": "b"}}}, {"s": "abc"}),
    ("pattern-unanchored-bad", {"properties": {"s": {"pattern": "b"}}}, {"s": "ac"}),
    ("pattern-alternation", {"properties": {"s": {"pattern": "^(cat|dog)s?$"}}}, {"s": "dogs"}),
    ("pattern-alternation-bad", {"properties": {"s": {"pattern": "^(cat|dog)s?$"}}}, {"s": "cow"}),
    ("pattern-negated-class", {"properties": {"s": {"pattern": "^[^0-9]*$"}}}, {"s": "no digits"}),
    ("pattern-negated-class-bad", {"properties": {"s": {"pattern": "^[^0-9]*$"}}}, {"s": "route 66"}),
    ("pattern-counted", {"properties": {"s": {"pattern": "^a{2,3}$"}}}, {"s": "aaa"}),
    ("pattern-counted-bad", {"properties": {"s": {"pattern": "^a{2,3}$"}}}, {"s": "aaaa"}),
    ("pattern-lazy", {"properties": {"s": {"pattern": "^a+?b??c*?$"}}}, {"s": "aabcc"}),
    ("pattern-empty-string", {"properties": {"s": {"pattern": "^$"}}}, {"s": ""}),
    ("pattern-phone", {"properties": {"s": {"pattern": "^\\d{3}-\\d{4}$"}}}, {"s": "555-1234"}),
    ("pattern-phone-bad", {"properties": {"s": {"pattern": "^\\d{3}-\\d{4}$"}}}, {"s": "555-12345"}),
    ("pattern-colour", {"properties": {"s": {"pattern": "^#[0-9a-fA-F]{6}$"}}}, {"s": "#00ff7F"}),
    ("pattern-colour-bad", {"properties": {"s": {"pattern": "^#[0-9a-fA-F]{6}$"}}}, {"s": "#00ff7G"}),
    ("pattern-escaped-dot", {"properties": {"s": {"pattern": "^v\\d+\\.\\d+$"}}}, {"s": "v1x2"}),
    ("pattern-email", {"properties": {"s": {"pattern": "^[\\w.-]+@[\\w-]+\\.[a-z]{2,}$"}}}, {"s": "a.b-c@x-y.org"}),
    ("pattern-no-space", {"properties": {"s": {"pattern": "^\\S+$"}}}, {"s": "a b"}),
    ("pattern-group-repeat", {"properties": {"s": {"pattern": "^(?:ab)+$"}}}, {"s": "ababab"}),
    ("pattern-group-repeat-bad", {"properties": {"s": {"pattern": "^(?:ab)+$"}}}, {"s": "ababa"}),
    ("pattern-two-scalars", {"properties": {"s": {"pattern": "^.{2}$"}}}, {"s": "\u00e9\U0001F600"}),
    ("pattern-unicode-escape", {"properties": {"s": {"pattern": "caf\\u00e9"}}}, {"s": "un caf\u00e9"}),
    ("pattern-unicode-escape-bad", {"properties": {"s": {"pattern": "caf\\u00e9"}}}, {"s": "un cafe\u0301"}),
    ("pattern-slug", {"properties": {"s": {"pattern": "^[a-z0-9]+(-[a-z0-9]+)*$"}}}, {"s": "summer-sale-2"}),
    ("pattern-slug-bad", {"properties": {"s": {"pattern": "^[a-z0-9]+(-[a-z0-9]+)*$"}}}, {"s": "summer--sale"}),
    ("pattern-word-boundary", {"properties": {"s": {"pattern": "\\bsale\\b"}}}, {"s": "big sale!"}),
    ("pattern-word-boundary-bad", {"properties": {"s": {"pattern": "\\bsale\\b"}}}, {"s": "wholesale"}),
    ("pattern-not-a-string", {"properties": {"s": {"pattern": "^x$"}}}, {"s": 12}),
    ("pattern-zero-count", {"properties": {"s": {"pattern": "^ab{0}c$"}}}, {"s": "ac"}),
    # hub keys are not data: removed before validation
    ("hub-keys-removed", {"properties": {"text": {"type": "string"}}, "required": ["text"],
                          "additionalProperties": False},
     {"text": "hi", "v": 1, "fallback": {"type": "Plain", "text": "hi"}, "min_app_version": "5.0.0"}),
    # boolean schemas, annotations
    ("schema-true", True, {"x": 1}),
    ("schema-false-property", {"properties": {"x": False}}, {"x": 1}),
    ("schema-false-property-absent", {"properties": {"x": False}}, {"y": 1}),
    ("annotations", {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "urn:pushhub:case",
                     "$comment": "c", "title": "T", "description": "D", "default": {}, "examples": [{}],
                     "properties": {"n": {"type": "integer", "title": "N", "default": 0}}},
     {"n": 0.5}),
    # several keywords at once
    ("realistic-carousel", {
        "type": "object", "required": ["slides"], "additionalProperties": False,
        "properties": {"id": {"type": "string"}, "interval": {"type": "integer", "minimum": 1, "maximum": 60},
                       "slides": {"type": "array", "items": {"type": "object", "required": ["image"],
                                  "properties": {"image": {"type": "string", "pattern": "^https://[^ ]+$"},
                                                 "caption": {"type": "string", "maxLength": 40}}}}}},
     {"id": "c1", "interval": 5, "slides": [{"image": "https://cdn/x.png", "caption": "Hello"}]}),
    ("realistic-carousel-bad", {
        "type": "object", "required": ["slides"], "additionalProperties": False,
        "properties": {"id": {"type": "string"}, "interval": {"type": "integer", "minimum": 1, "maximum": 60},
                       "slides": {"type": "array", "items": {"type": "object", "required": ["image"],
                                  "properties": {"image": {"type": "string", "pattern": "^https://[^ ]+$"},
                                                 "caption": {"type": "string", "maxLength": 40}}}}}},
     {"id": "c1", "interval": 61.0, "slides": [{"image": "https://cdn/x.png", "caption": "x" * 41}]}),
]

# Where Python's `re` is not ECMA-262: (id, schema, instance, the hub's verdict).
DIALECT = [
    ("dialect-digit", {"properties": {"s": {"pattern": "^\\d$"}}}, {"s": "\u0663"}, False),  # re: Unicode digit
    ("dialect-word", {"properties": {"s": {"pattern": "^\\w+$"}}}, {"s": "caf\u00e9"}, False),  # re: Unicode word
    ("dialect-dollar", {"properties": {"s": {"pattern": "^a$"}}}, {"s": "a\n"}, False),  # re: $ before a final \n
    ("dialect-dot-cr", {"properties": {"s": {"pattern": "^a.b$"}}}, {"s": "a\rb"}, False),  # re: . matches \r
    ("dialect-space-bom", {"properties": {"s": {"pattern": "\\s"}}}, {"s": "\ufeff"}, True),  # re: BOM no space
]


@pytest.fixture(scope="module")
def schema_hub():
    hub = Hub()
    yield hub
    hub.stop()


def verdict(hub, index, schema, instance):
    """Registers `schema` as component C<index>, publishes a screen holding one node of it made
    of `instance`'s members; returns (status, answer) of the publish."""
    name = "C%d" % index
    status, answer = call(hub, "PUT", "/v1/components/" + name, {"versions": {"1": {"schema": schema}}})
    assert status == 200, (name, schema, answer)
    assert answer["name"] == name and answer["versions"]["1"]["schema"] == schema
    node = dict(instance)
    node["type"] = name
    tree = {"type": "screen", "children": [node]}
    return call(hub, "PUT", "/v1/screens/schemas/case-%d" % index, tree)


def node_data(instance):
    return {key: value for key, value in instance.items() if key not in HUB_KEYS}


def test_the_corpus_is_broad():
    assert len(CASES) >= 60
    expected = [jsonschema.Draft202012Validator(schema).is_valid(node_data(instance)) for _, schema, instance in CASES]
    assert 25 <= sum(expected) <= len(CASES) - 25, "both verdicts, often"
    keywords = json.dumps([schema for _, schema, _ in CASES])
    for keyword in ("type", "properties", "required", "additionalProperties", "items", "enum", "const", "minimum",
                    "maximum", "minLength", "maxLength", "pattern"):
        assert '"%s"' % keyword in keywords, keyword


@pytest.mark.parametrize("index", range(len(CASES)), ids=[case[0] for case in CASES])
def test_hub_agrees_with_jsonschema(schema_hub, index):
    _, schema, instance = CASES[index]
    jsonschema.Draft202012Validator.check_schema(schema)
    expected = jsonschema.Draft202012Validator(schema).is_valid(node_data(instance))
    status, answer = verdict(schema_hub, index, schema, instance)
    if expected:
        assert status == 200, (schema, instance, answer)
        return
    assert status == 422, (schema, instance, answer)
    error = answer["error"]
    assert error["code"] == "invalid_tree" and error["message"]
    assert error["errors"], answer
    for violation in error["errors"]:
        assert set(violation) == {"pointer", "message"}, violation
        assert violation["pointer"].startswith("/children/0"), violation
        assert violation["message"], violation


@pytest.mark.parametrize("index", range(len(DIALECT)), ids=[case[0] for case in DIALECT])
def test_hub_follows_ecma_262_where_python_re_differs(schema_hub, index):
    _, schema, instance, valid = DIALECT[index]
    status, answer = verdict(schema_hub, 1000 + index, schema, instance)
    assert status == (200 if valid else 422), (schema, instance, answer)


def test_violations_name_the_place_and_what_to_fix(schema_hub):
    schema = {"properties": {"colour": {"enum": ["red", "green"]}, "items": {"items": {"type": "string"}}},
              "required": ["items"], "additionalProperties": False}
    status, answer = verdict(schema_hub, 2000, schema, {"colour": "blue", "size": 1, "items": ["a", 2]})
    assert status == 422, answer
    assert answer["error"]["errors"] == [
        {"pointer": "/children/0/colour", "message": 'must be one of "red", "green", not "blue"'},
        {"pointer": "/children/0/items/1", "message": "must be a string, not a number"},
        {"pointer": "/children/0", "message": 'property "size" is not allowed (additionalProperties is false)'},
    ]
    status, answer = verdict(schema_hub, 2001, schema, {})
    assert answer["error"]["errors"] == [{"pointer": "/children/0", "message": 'missing required property "items"'}]


def test_versions_and_nodes_inside_fallbacks(schema_hub):
    body = {"versions": {"1": {"schema": {"required": ["a"]}}, "2": {"schema": {"required": ["b"]}}}}
    status, answer = call(schema_hub, "PUT", "/v1/components/Versioned", body)
    assert status == 200, answer
    ok = {"type": "screen", "children": [{"type": "Versioned", "a": 1}, {"type": "Versioned", "v": 2, "b": 1},
                                         {"type": "Chart", "min_app_version": "6.0.0",
                                          "fallback": {"type": "Versioned", "a": 1}}]}
    status, answer = call(schema_hub, "PUT", "/v1/screens/schemas/versions", ok)
    assert status == 200, answer
    bad = {"type": "screen", "children": [{"type": "Versioned", "v": 3, "a": 1}, {"type": "Versioned", "v": 2, "a": 1},
                                          {"type": "Chart", "fallback": {"type": "Versioned"}}]}
    status, answer = call(schema_hub, "PUT", "/v1/screens/schemas/versions", bad)
    assert status == 422, answer
    assert answer["error"]["errors"] == [
        {"pointer": "/children/0", "message": "Versioned has no version 3 (registered: 1, 2)"},
        {"pointer": "/children/1", "message": 'missing required property "b"'},
        {"pointer": "/children/2/fallback", "message": 'missing required property "a"'},
    ]


@pytest.mark.parametrize("schema, words", [
    ({"oneOf": [{"type": "string"}]}, ['"oneOf" is not supported', "pattern"]),
    ({"properties": {"s": {"pattern": "(?=a)"}}}, ["/versions/1/schema/properties/s/pattern", "lookahead"]),
    ({"properties": {"s": {"pattern": "(a)\\1"}}}, ["backreference"]),
    ({"properties": {"s": {"pattern": "a{1001}"}}}, ["1000"]),
    ({"type": "str"}, ["/versions/1/schema/type", '"str" is not a type name']),
])
def test_schemas_outside_the_subset_are_refused(schema_hub, schema, words):
    status, answer = call(schema_hub, "PUT", "/v1/components/Refused", {"versions": {"1": {"schema": schema}}})
    assert status == 400, answer
    assert answer["error"]["code"] == "bad_schema"
    for word in words:
        assert word in answer["error"]["message"], answer
