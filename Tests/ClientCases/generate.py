#!/usr/bin/env python3
"""Rebuilds cases.json (RFC 8785 canonical forms + hashes, RFC 6902 patch cases) from the source
lists below and checks every expected value against tools that are not ours:

  canonical, hash   Python's `rfc8785` package and `hashlib` (and, for RFC 8785's own examples and
                    its Appendix B table, the strings printed in the RFC, which rfc8785 must agree with)
  patch expected    Python's `jsonpatch` package; where RFC 6902 and jsonpatch disagree the case
                    follows the RFC and names the disagreement in `JSONPATCH_DIFFERS` (checked: if
                    jsonpatch ever agrees, the generator says so and stops)

Usage (from the repository root):
  .venv/bin/python Tests/ClientCases/generate.py          rewrite cases.json
  .venv/bin/python Tests/ClientCases/generate.py --check  fail if cases.json is not what this writes
"""

import copy
import hashlib
import json
import math
import os
import struct
import sys

import jsonpatch
import jsonpointer
import rfc8785

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "cases.json")


# MARK: - canonical cases: (name, input JSON text[, the canonical text a spec prints])

def appendix_b(bits, expected, note):
    """One row of RFC 8785 Appendix B: the double with these IEEE 754 bits, written with 17
    significant digits (a spelling the parser must round to exactly that double)."""
    value = struct.unpack(">d", bytes.fromhex(bits))[0]
    return ("RFC 8785 Appendix B: %s %s%s" % (bits, expected, " (" + note + ")" if note else ""), "%.17e" % value, expected)


CANONICAL = [
    # RFC 8785 §3.2.2 (the example of §3.2.4 input/output) and §3.2.3 (sorting).
    ("RFC 8785 §3.2.2: numbers, string escapes, literals",
     '{\n  "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],\n'
     '  "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",\n  "literals": [null, true, false]\n}',
     '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],'
     '"string":"\u20ac$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}'),
    ("RFC 8785 §3.2.3: members sorted by UTF-16 code units",
     '{\n  "\\u20ac": "Euro Sign",\n  "\\r": "Carriage Return",\n  "\\ufb33": "Hebrew Letter Dalet With Dagesh",\n'
     '  "1": "One",\n  "\\ud83d\\ude00": "Emoji: Grinning Face",\n  "\\u0080": "Control",\n'
     '  "\\u00f6": "Latin Small Letter O With Diaeresis"\n}',
     '{"\\r":"Carriage Return","1":"One","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis",'
     '"\u20ac":"Euro Sign","\U0001f600":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}'),
    # RFC 8785 Appendix B (NaN and Infinity have no JSON text and are left out).
    appendix_b("0000000000000000", "0", "zero"),
    appendix_b("8000000000000000", "0", "minus zero"),
    appendix_b("0000000000000001", "5e-324", "min pos number"),
    appendix_b("8000000000000001", "-5e-324", "min neg number"),
    appendix_b("7fefffffffffffff", "1.7976931348623157e+308", "max pos number"),
    appendix_b("ffefffffffffffff", "-1.7976931348623157e+308", "max neg number"),
    appendix_b("4340000000000000", "9007199254740992", "max pos int"),
    appendix_b("c340000000000000", "-9007199254740992", "max neg int"),
    appendix_b("4430000000000000", "295147905179352830000", "~2**68"),
    appendix_b("44b52d02c7e14af5", "9.999999999999997e+22", ""),
    appendix_b("44b52d02c7e14af6", "1e+23", ""),
    appendix_b("44b52d02c7e14af7", "1.0000000000000001e+23", ""),
    appendix_b("444b1ae4d6e2ef4e", "999999999999999700000", ""),
    appendix_b("444b1ae4d6e2ef4f", "999999999999999900000", ""),
    appendix_b("444b1ae4d6e2ef50", "1e+21", ""),
    appendix_b("3eb0c6f7a0b5ed8c", "9.999999999999997e-7", ""),
    appendix_b("3eb0c6f7a0b5ed8d", "0.000001", ""),
    appendix_b("41b3de4355555553", "333333333.3333332", ""),
    appendix_b("41b3de4355555554", "333333333.33333325", ""),
    appendix_b("41b3de4355555555", "333333333.3333333", ""),
    appendix_b("41b3de4355555556", "333333333.3333334", ""),
    appendix_b("41b3de4355555557", "333333333.33333343", ""),
    appendix_b("becbf647612f3696", "-0.0000033333333333333333", ""),
    appendix_b("43143ff3c1cb0959", "1424953923781206.2", "round to even"),
    # Tests/ScreenTreeTests/JSONTests.swift, numbers() (spellings other than the ones above).
    ("JSONTests numbers: 0", "0", "0"),
    ("JSONTests numbers: -0", "-0", "0"),
    ("JSONTests numbers: 1", "1", "1"),
    ("JSONTests numbers: 4.50", "4.50", "4.5"),
    ("JSONTests numbers: 2e-3", "2e-3", "0.002"),
    ("JSONTests numbers: 1E30", "1E30", "1e+30"),
    ("JSONTests numbers: 333333333.33333329", "333333333.33333329", "333333333.3333333"),
    ("JSONTests numbers: 1e-27 written out", "0.000000000000000000000000001", "1e-27"),
    ("JSONTests numbers: 1e21", "1e21", "1e+21"),
    ("JSONTests numbers: 1e20", "1e20", "100000000000000000000"),
    ("JSONTests numbers: 123456789012345680000", "123456789012345680000", "123456789012345680000"),
    ("JSONTests numbers: 0.000001", "0.000001", "0.000001"),
    ("JSONTests numbers: 0.0000001", "0.0000001", "1e-7"),
    ("JSONTests numbers: -1.5e-7", "-1.5e-7", "-1.5e-7"),
    ("JSONTests numbers: 9007199254740993 rounds to even", "9007199254740993", "9007199254740992"),
    ("JSONTests numbers: 5e-324", "5e-324", "5e-324"),
    ("JSONTests numbers: 1.7976931348623157e308", "1.7976931348623157e308", "1.7976931348623157e+308"),
    # Tests/ScreenTreeTests/JSONTests.swift, canonical(), roundTrip(), hash().
    ("JSONTests canonical: keys by UTF-16, minimal escapes",
     '{"b":1,"a":[true,null,"x\\"\\\\\\/\\u0001\\n"],"\\u20ac":2,"\\ud83d\\ude00":3,"\\u00e9":4}', None),
    ("JSONTests roundTrip: a small screen",
     '{"type":"screen","children":[{"id":"a","n":-12.5e3,"s":"\u03ba\u1f79\u03c3\u03bc\u03b5"},[],{},""],"ok":false}', None),
    ("JSONTests hash: { }", "{ }", "{}"),
    ("JSONTests normalization: \u00e9 and e + U+0301 are two members", '{"\\u00e9":1,"e\\u0301":2}', None),
    # Tests/EndToEnd/test_js_client.py: the trees published to the JS client and the random numbers.
    ("test_js_client: keys whose UTF-16 order differs from code point order",
     '{"labels":{"\\uff61":1,"\\ud83d\\ude00":2,"\\u00e9":3,"e":4,"\\u20ac":5,"\\ufb01":6}}', None),
    ("test_js_client: the hard numbers",
     '{"numbers":[0.1,1e21,-0.0,5e-324,1e-7,123456789012345680000.0,-1.5,9007199254740991,0.000001]}', None),
    ("test_js_client: separators, quotes, controls, non-BMP, </script>",
     '{"text":"line\\u2028sep\\u2029par \\"q\\" \\\\ \\u0000\\u001f\\u007f \\ud7ff\\ue000 \\ud83d\\ude00 </script>"}', None),
    ("test_js_client: slash, tilde and empty keys",
     '{"a/b":{"m~n":"slash and tilde in keys"},"":"empty key"}', None),
    ("test_js_client: nested null and false",
     '{"nested":{"deep":[{"id":"x","v":[1,2,{"k":null}]}]},"flag":true,"other":{"deep":[{"k":false}]}}', None),
    ("test_js_client random numbers: 1e-6", "1e-6", None),
    ("test_js_client random numbers: -5e-324", "-5e-324", None),
    ("test_js_client random numbers: 2**53-1", "9007199254740991", None),
    ("test_js_client random numbers: -(2**53-1)", "-9007199254740991", None),
    ("test_js_client random numbers: 123e-20", "123e-20", None),
    ("test_js_client random numbers: 0.5", "0.5", None),
    ("test_js_client random numbers: 100", "100", None),
    ("test_js_client random numbers: 1e300", "1e300", None),
    ("test_js_client random numbers: 4.35", "4.35", None),
    ("test_js_client random numbers: 0.1", "0.1", None),
    # clients/js/test/storage.test.js
    ("storage.test.js: U+2028 raw and -0 under a non-ASCII key", '{"b":[1,"\\u2028"],"a":{"\u00e9":-0}}', None),
    # More of RFC 8785 §3.2.2.2 (strings) and §3.2.3 (sorting), and RFC 8259 grammar corners.
    ("strings: every control character", '"' + "".join("\\u%04x" % c for c in range(0x20)) + '"', None),
    ("strings: \\/ and uppercase hex escapes are written raw", '"\\/\\u00C9\\u00e9\\u0041"', None),
    ("strings: DEL, U+2028, U+2029 and U+FEFF stay raw", '"\\u007f\\u2028\\u2029\\ufeff"', None),
    ("strings: a surrogate pair escape is one non-BMP scalar", '"\\uD834\\uDD1E and \\ud83d\\ude00"', None),
    ("strings: raw non-ASCII in, raw out", '"\u03ba\u1f79\u03c3\u03bc\u03b5 \U0001f600 \u20ac"', None),
    ("keys: U+10000 sorts before U+FFFF (UTF-16, not code points)", '{"\\uffff":1,"\\ud800\\udc00":2}', None),
    ("keys: U+1F600 sorts before U+E000", '{"\\ue000":1,"\\ud83d\\ude00":2}', None),
    ("keys: ASCII order, case and the empty key", '{"b":1,"B":2,"a":3,"A":4,"aa":5,"":6,"_":7,"1":8}', None),
    ("keys: a prefix sorts first", '{"abc":1,"a":2,"ab":3}', None),
    ("keys: objects sorted at every depth", '{"z":[{"y":1,"x":[{"d":0,"c":0}]}],"a":{"c":{"b":1,"a":2}}}', None),
    ("whitespace of every kind is dropped", ' \t\n\r[ 1 ,\t{ "a" :\n2 } ,\r[ ] ]\n ', None),
    ("empty containers", '[[],{},[[]],{"a":{}}]', None),
    ("scalar: null", "null", None),
    ("scalar: true", "true", None),
    ("scalar: false", "false", None),
    ("scalar: empty string", '""', None),
    ("numbers: 1.0 and -1.0 are integers", "[1.0,-1.0,1e2,1E+2,0e10,-0.0]", None),
    ("numbers: 0.1 + 0.2", "0.30000000000000004", None),
    ("numbers: 2**64", "18446744073709551616", None),
    ("numbers: a 23-digit integer", "12345678901234567890123", None),
    ("numbers: 999999999999999999999 rounds to 1e21", "999999999999999999999", None),
    ("numbers: 2.5e-5 and 1.5e+300", "[2.5e-5,1.5e+300]", None),
    ("numbers: -0 in an array", "[-0]", None),
    ("numbers: 1e23 is not exactly representable", "1e23", None),
    ("numbers: the smallest normal double", "2.2250738585072014e-308", None),
    ("numbers: the largest subnormal double", "2.225073858507201e-308", None),
    ("numbers: 2.2250738585072011e-308 (a parser that once hung)", "2.2250738585072011e-308", None),
    ("numbers: halfway between 1 and the next double rounds to even",
     "1.00000000000000011102230246251565404236316680908203125", None),
    ("numbers: just above halfway rounds up", "1.00000000000000011102230246251565404236316680908203126", None),
    ("numbers: 7.038531e-26", "7.038531e-26", None),
    ("keys: integer-like names sort as strings", '{"10":1,"9":2,"1":3,"a":4,"01":5}', None),
    ("keys: __proto__ is an ordinary member", '{"b":1,"__proto__":{"x":1},"a":2}', None),
    # SHA-256 padding boundaries (the canonical text is the string plus its two quotes).
] + [("hash: a canonical text of %d bytes" % (n + 2), json.dumps("x" * n), None) for n in (53, 54, 62, 63, 64, 119)]


# MARK: - patch cases: (name, doc, ops, expected) or (name, doc, ops, Error(why))

class Error:
    def __init__(self, why):
        self.why = why


def J(text):
    """A value written as JSON text (keeps -0, escapes and non-BMP keys readable here)."""
    return json.loads(text, parse_int=lambda digits: -0.0 if digits == "-0" else int(digits))


FOO_BAR = {"foo": "bar"}
SLASH_TILDE = {"/": 9, "~1": 10}
AB = {"a": [1, 2], "b": {"c": 1}}  # JSONPatchDiffTests.apply()
ABCD = J('[{"id":"a","v":1},{"id":"b","v":2},{"id":"c","v":3},{"id":"d","v":4}]')

PATCH = [
    # RFC 6902 Appendix A (A.13, a patch with two "op" members, is not a JSON text a strict reader accepts).
    ("RFC 6902 A.1: adding an object member", FOO_BAR, [{"op": "add", "path": "/baz", "value": "qux"}],
     {"baz": "qux", "foo": "bar"}),
    ("RFC 6902 A.2: adding an array element", {"foo": ["bar", "baz"]}, [{"op": "add", "path": "/foo/1", "value": "qux"}],
     {"foo": ["bar", "qux", "baz"]}),
    ("RFC 6902 A.3: removing an object member", {"baz": "qux", "foo": "bar"}, [{"op": "remove", "path": "/baz"}],
     {"foo": "bar"}),
    ("RFC 6902 A.4: removing an array element", {"foo": ["bar", "qux", "baz"]}, [{"op": "remove", "path": "/foo/1"}],
     {"foo": ["bar", "baz"]}),
    ("RFC 6902 A.5: replacing a value", {"baz": "qux", "foo": "bar"}, [{"op": "replace", "path": "/baz", "value": "boo"}],
     {"baz": "boo", "foo": "bar"}),
    ("RFC 6902 A.6: moving a value", {"foo": {"bar": "baz", "waldo": "fred"}, "qux": {"corge": "grault"}},
     [{"op": "move", "from": "/foo/waldo", "path": "/qux/thud"}],
     {"foo": {"bar": "baz"}, "qux": {"corge": "grault", "thud": "fred"}}),
    ("RFC 6902 A.7: moving an array element", {"foo": ["all", "grass", "cows", "eat"]},
     [{"op": "move", "from": "/foo/1", "path": "/foo/3"}], {"foo": ["all", "cows", "eat", "grass"]}),
    ("RFC 6902 A.8: testing a value: success", {"baz": "qux", "foo": ["a", 2, "c"]},
     [{"op": "test", "path": "/baz", "value": "qux"}, {"op": "test", "path": "/foo/1", "value": 2}],
     {"baz": "qux", "foo": ["a", 2, "c"]}),
    ("RFC 6902 A.9: testing a value: error", {"baz": "qux"}, [{"op": "test", "path": "/baz", "value": "bar"}],
     Error("test fails: /baz is \"qux\", not \"bar\"")),
    ("RFC 6902 A.10: adding a nested member object", FOO_BAR, [{"op": "add", "path": "/child", "value": {"grandchild": {}}}],
     {"foo": "bar", "child": {"grandchild": {}}}),
    ("RFC 6902 A.11: ignoring unrecognized elements", FOO_BAR, [{"op": "add", "path": "/baz", "value": "qux", "xyz": 123}],
     {"foo": "bar", "baz": "qux"}),
    ("RFC 6902 A.12: adding to a nonexistent target", FOO_BAR, [{"op": "add", "path": "/baz/bat", "value": "qux"}],
     Error("the parent /baz does not exist")),
    ("RFC 6902 A.14: ~ escape ordering (~01 is ~1)", SLASH_TILDE, [{"op": "test", "path": "/~01", "value": 10}], SLASH_TILDE),
    ("RFC 6902 A.15: comparing strings and numbers", SLASH_TILDE, [{"op": "test", "path": "/~01", "value": "10"}],
     Error("test fails: 10 is a number, \"10\" a string")),
    ("RFC 6902 A.16: adding an array value", {"foo": ["bar"]}, [{"op": "add", "path": "/foo/-", "value": ["abc", "def"]}],
     {"foo": ["bar", ["abc", "def"]]}),
    # RFC 6902 §4.1 add
    ("§4.1 add: an existing member is replaced", {"a": 1}, [{"op": "add", "path": "/a", "value": 2}], {"a": 2}),
    ("§4.1 add: index == length appends", {"foo": [1, 2]}, [{"op": "add", "path": "/foo/2", "value": 3}], {"foo": [1, 2, 3]}),
    ("§4.1 add: index past the end is an error", {"foo": [1, 2]}, [{"op": "add", "path": "/foo/3", "value": 3}],
     Error("index 3 is out of range (2 elements)")),
    ("§4.1 add: the root replaces the document", {"a": 1}, [{"op": "add", "path": "", "value": [1]}], [1]),
    ("§4.1 add: missing objects are not created", {"q": {"bar": 2}}, [{"op": "add", "path": "/a/b/c", "value": 1}],
     Error("the parent /a/b does not exist")),
    ("§4.1 add: into a number is an error", {"a": 1}, [{"op": "add", "path": "/a/b", "value": 2}],
     Error("/a is a number, not a container")),
    ("§4.1 add: null is a value", {"a": 1}, [{"op": "add", "path": "/b", "value": None}], {"a": 1, "b": None}),
    ("§4.1 add: without a value is an error", {"a": 1}, [{"op": "add", "path": "/b"}], Error("add has no value")),
    ("§4.1 add: - on an object is a member name", {"a": 1}, [{"op": "add", "path": "/-", "value": 2}], {"a": 1, "-": 2}),
    ("§4.1 add: - appends to an empty array", {"a": []}, [{"op": "add", "path": "/a/-", "value": {"x": 1}}],
     {"a": [{"x": 1}]}),
    # RFC 6902 §4.2 remove, §4.3 replace
    ("§4.2 remove: a missing member is an error", {"a": 1}, [{"op": "remove", "path": "/x"}], Error("/x does not exist")),
    ("§4.2 remove: index == length is an error", {"foo": [1, 2]}, [{"op": "remove", "path": "/foo/2"}],
     Error("index 2 is out of range (2 elements)")),
    ("§4.2 remove: - is not an element", {"foo": [1, 2]}, [{"op": "remove", "path": "/foo/-"}],
     Error("- names no existing element")),
    ("§4.2 remove: a nested array element", {"a": [{"b": [1, 2, 3]}]}, [{"op": "remove", "path": "/a/0/b/0"}],
     {"a": [{"b": [2, 3]}]}),
    ("§4.3 replace: a missing member is an error", {"a": 1}, [{"op": "replace", "path": "/x", "value": 2}],
     Error("/x does not exist")),
    ("§4.3 replace: the root", "foo", [{"op": "replace", "path": "", "value": 42}], 42),
    ("§4.3 replace: an array element by an object", {"a": [1, 2]}, [{"op": "replace", "path": "/a/1", "value": {"x": []}}],
     {"a": [1, {"x": []}]}),
    ("§4.3 replace: - is not an element", {"a": [1]}, [{"op": "replace", "path": "/a/-", "value": 2}],
     Error("- names no existing element")),
    # RFC 6902 §4.4 move, §4.5 copy
    ("§4.4 move: a missing from is an error", {"a": 1}, [{"op": "move", "from": "/x", "path": "/b"}], Error("/x does not exist")),
    ("§4.4 move: into its own child is an error", {"a": {"b": 1}}, [{"op": "move", "from": "/a", "path": "/a/c"}],
     Error("a value cannot move into one of its children")),
    ("§4.4 move: to the same location changes nothing", {"a": {"b": 1}}, [{"op": "move", "from": "/a", "path": "/a"}],
     {"a": {"b": 1}}),
    ("§4.4 move: to the same location, but from does not exist", {"a": 1}, [{"op": "move", "from": "/x", "path": "/x"}],
     Error("from /x does not exist (RFC 6902 §4.4: it MUST exist)")),
    ("§4.4 move: an array element backwards", {"foo": ["all", "grass", "cows", "eat"]},
     [{"op": "move", "from": "/foo/3", "path": "/foo/1"}], {"foo": ["all", "eat", "grass", "cows"]}),
    ("§4.4 move: a member to a sibling prefix name", {"a": 1, "ab": 2}, [{"op": "move", "from": "/a", "path": "/abc"}],
     {"ab": 2, "abc": 1}),
    ("§4.4 move: without from is an error", {"a": 1}, [{"op": "move", "path": "/b"}], Error("move has no from")),
    ("§4.5 copy: a member", {"a": {"x": [1]}}, [{"op": "copy", "from": "/a", "path": "/b"}],
     {"a": {"x": [1]}, "b": {"x": [1]}}),
    ("§4.5 copy: is deep (changing the copy leaves the original)", {"a": {"x": [1]}},
     [{"op": "copy", "from": "/a", "path": "/b"}, {"op": "add", "path": "/b/x/-", "value": 2},
      {"op": "add", "path": "/b/y", "value": 3}], {"a": {"x": [1]}, "b": {"x": [1, 2], "y": 3}}),
    ("§4.5 copy: an array element to the end", {"a": [1, 2]}, [{"op": "copy", "from": "/a/0", "path": "/a/-"}], {"a": [1, 2, 1]}),
    ("§4.5 copy: a missing from is an error", {"a": 1}, [{"op": "copy", "from": "/x", "path": "/b"}], Error("/x does not exist")),
    # RFC 6902 §4.6 test
    ("§4.6 test: 1 equals 1.0", {"a": 1}, [{"op": "test", "path": "/a", "value": 1.0}], {"a": 1}),
    ("§4.6 test: -0 equals 0", J('{"a":-0}'), [{"op": "test", "path": "/a", "value": 0}], J('{"a":-0}')),
    ("§4.6 test: 1e21 and 5e-324", J('{"a":[1e21,5e-324]}'), [{"op": "test", "path": "/a", "value": J("[1000000000000000000000,5e-324]")}],
     J('{"a":[1e21,5e-324]}')),
    ("§4.6 test: true is not 1", {"a": 1}, [{"op": "test", "path": "/a", "value": True}],
     Error("test fails: a boolean is not a number")),
    ("§4.6 test: false is not 0", {"a": 0}, [{"op": "test", "path": "/a", "value": False}],
     Error("test fails: a boolean is not a number")),
    ("§4.6 test: null is not a missing member", {"a": 1}, [{"op": "test", "path": "/b", "value": None}], Error("/b does not exist")),
    ("§4.6 test: null equals null", {"a": None}, [{"op": "test", "path": "/a", "value": None}], {"a": None}),
    ("§4.6 test: objects compare without member order", {"a": {"x": 1, "y": [2]}},
     [{"op": "test", "path": "/a", "value": J('{"y":[2],"x":1}')}], {"a": {"x": 1, "y": [2]}}),
    ("§4.6 test: arrays compare in order", {"a": [1, 2]}, [{"op": "test", "path": "/a", "value": [2, 1]}],
     Error("test fails: [1,2] is not [2,1]")),
    ("§4.6 test: an extra member is a difference", {"a": {"x": 1}}, [{"op": "test", "path": "/a", "value": {"x": 1, "y": 2}}],
     Error("test fails: the objects have different members")),
    ("§4.6 test: \u00e9 is not e + U+0301 (code points, not normalization)", {"s": "\u00e9"},
     [{"op": "test", "path": "/s", "value": "e\u0301"}], Error("test fails: the strings have different code points")),
    ("§4.6 test: the whole document", {"a": [1, {"b": None}]}, [{"op": "test", "path": "", "value": {"a": [1, {"b": None}]}}],
     {"a": [1, {"b": None}]}),
    ("§4.6 test: - is not an element", {"a": [1]}, [{"op": "test", "path": "/a/-", "value": 1}],
     Error("- names no existing element")),
    ("§4.6 test: an inherited JavaScript property is not a member", {}, [{"op": "test", "path": "/toString", "value": {}}],
     Error("/toString does not exist")),
    # RFC 6901 pointers in patches
    ("RFC 6901: ~1 and ~0 in member names", {}, [{"op": "add", "path": "/a~1b", "value": 1}, {"op": "add", "path": "/m~0n", "value": 2}],
     {"a/b": 1, "m~n": 2}),
    ("RFC 6901: / names the empty member", {"": 0}, [{"op": "replace", "path": "/", "value": 1}], {"": 1}),
    ("RFC 6901: ~2 is not an escape", {"a": 1}, [{"op": "add", "path": "/~2", "value": 1}], Error("~ must be followed by 0 or 1")),
    ("RFC 6901: a pointer starts with /", {"a": 1}, [{"op": "add", "path": "a", "value": 1}], Error("a pointer is \"\" or starts with /")),
    ("RFC 6901: a trailing ~ is not an escape", {"a~": 1}, [{"op": "remove", "path": "/a~"}], Error("~ must be followed by 0 or 1")),
    ("RFC 6901: leading zeros are refused in array indexes", {"foo": [1, 2]}, [{"op": "add", "path": "/foo/01", "value": 3}],
     Error("01 is not an array index")),
    ("RFC 6901: leading zeros are fine in member names", {"01": 1}, [{"op": "replace", "path": "/01", "value": 2}], {"01": 2}),
    ("RFC 6901: -1 is not an array index", {"foo": [1, 2]}, [{"op": "remove", "path": "/foo/-1"}], Error("-1 is not an array index")),
    ("RFC 6901: 1e0 is not an array index", {"foo": [1, 2]}, [{"op": "remove", "path": "/foo/1e0"}], Error("1e0 is not an array index")),
    ("RFC 6901: - cannot be descended into", {"foo": [{"x": 1}]}, [{"op": "add", "path": "/foo/-/x", "value": 1}],
     Error("- names no existing element")),
    ("RFC 6901: non-BMP member names", J('{"\\ud83d\\ude00":1}'),
     [{"op": "add", "path": "/\U0001f600\U0001f600", "value": 2}, {"op": "remove", "path": "/\U0001f600"}],
     J('{"\\ud83d\\ude00\\ud83d\\ude00":2}')),
    ("RFC 6901: \u00e9 and e + U+0301 name different members", J('{"\\u00e9":1}'),
     [{"op": "add", "path": "/e\u0301", "value": 2}, {"op": "test", "path": "/\u00e9", "value": 1}],
     J('{"\\u00e9":1,"e\\u0301":2}')),
    ("RFC 6901: __proto__ is an ordinary member", {"a": 1}, [{"op": "add", "path": "/__proto__", "value": {"x": 1}}],
     {"a": 1, "__proto__": {"x": 1}}),
    ("§4.4 move: from /U+00E9 into /e U+0301/x is not a move into itself", J('{"\\u00e9":1,"e\\u0301":{}}'),
     [{"op": "move", "from": "/\u00e9", "path": "/e\u0301/x"}], J('{"e\\u0301":{"x":1}}')),
    ("§4.6 test: an array is not an object with index names", {"a": [1]}, [{"op": "test", "path": "/a", "value": {"0": 1}}],
     Error("test fails: an array is not an object")),
    ("§4.6 test: without a value is an error", {"a": 1}, [{"op": "test", "path": "/a"}], Error("test has no value")),
    ("§4.5 copy: without from is an error", {"a": 1}, [{"op": "copy", "path": "/b"}], Error("copy has no from")),
    ("§4.3 replace: without a value is an error", {"a": 1}, [{"op": "replace", "path": "/a"}], Error("replace has no value")),
    # RFC 6902 §3 and §5: the patch document, all-or-nothing
    ("§4: an unknown op is an error", {"a": 1}, [{"op": "frobnicate", "path": "/a"}], Error("unknown op")),
    ("§4: an op without a path is an error", {"a": 1}, [{"op": "remove"}], Error("remove has no path")),
    ("§4: a path that is not a string is an error", {"a": [1]}, [{"op": "remove", "path": 0}], Error("path is not a string")),
    ("§5: a failing op fails the whole patch", {"a": 1}, [{"op": "add", "path": "/b", "value": 1}, {"op": "remove", "path": "/x"}],
     Error("the second op fails, so the patch does")),
    ("§3: ops apply in order", {"a": [1, 2]},
     [{"op": "add", "path": "/a/-", "value": 3}, {"op": "test", "path": "/a", "value": [1, 2, 3]},
      {"op": "remove", "path": "/a/0"}, {"op": "move", "from": "/a", "path": "/b"}], {"b": [2, 3]}),
    ("§3: an empty patch changes nothing", {"a": 1}, [], {"a": 1}),
    # Tests/PushHubTests/JSONPatchDiffTests.swift: the patches the hub's diff makes, and apply()
    ("JSONPatchDiffTests oneLeaf: one replace deep in a keyed child",
     J('{"type":"screen","children":[{"id":"h","type":"header","title":"A"},{"id":"b","type":"list","items":[{"id":"x","label":"old"}]}]}'),
     [{"op": "replace", "path": "/children/1/items/0/label", "value": "new"}],
     J('{"type":"screen","children":[{"id":"h","type":"header","title":"A"},{"id":"b","type":"list","items":[{"id":"x","label":"new"}]}]}')),
    ("JSONPatchDiffTests keyedInsertRemove: insert", J('[{"id":"a"},{"id":"c"}]'), [{"op": "add", "path": "/1", "value": {"id": "b"}}],
     J('[{"id":"a"},{"id":"b"},{"id":"c"}]')),
    ("JSONPatchDiffTests keyedInsertRemove: remove", J('[{"id":"a"},{"id":"b"},{"id":"c"}]'), [{"op": "remove", "path": "/1"}],
     J('[{"id":"a"},{"id":"c"}]')),
    ("JSONPatchDiffTests reorder: the last to the front", ABCD, [{"from": "/3", "op": "move", "path": "/0"}],
     J('[{"id":"d","v":4},{"id":"a","v":1},{"id":"b","v":2},{"id":"c","v":3}]')),
    ("JSONPatchDiffTests reorder: the first to the end", ABCD, [{"from": "/0", "op": "move", "path": "/3"}],
     J('[{"id":"b","v":2},{"id":"c","v":3},{"id":"d","v":4},{"id":"a","v":1}]')),
    ("JSONPatchDiffTests reorder: a move then a replace", ABCD,
     [{"from": "/0", "op": "move", "path": "/1"}, {"op": "replace", "path": "/1/v", "value": 9}],
     J('[{"id":"b","v":2},{"id":"a","v":9},{"id":"c","v":3},{"id":"d","v":4}]')),
    ("JSONPatchDiffTests objects: remove, replace, add", {"a": 1, "b": 2},
     [{"op": "remove", "path": "/a"}, {"op": "replace", "path": "/b", "value": 3}, {"op": "add", "path": "/c", "value": 4}],
     {"b": 3, "c": 4}),
    ("JSONPatchDiffTests objects: a type change replaces", {"a": [1]}, [{"op": "replace", "path": "/a", "value": {"x": 1}}], {"a": {"x": 1}}),
    ("JSONPatchDiffTests objects: an escaped member name", {"a~b/c": 1}, [{"op": "replace", "path": "/a~0b~1c", "value": 2}], {"a~b/c": 2}),
    ("JSONPatchDiffTests positional: an insertion", [1, 2, 3, 4], [{"op": "add", "path": "/2", "value": 9}], [1, 2, 9, 3, 4]),
    ("JSONPatchDiffTests positional: two removals from the back", [1, 2, 3, 4],
     [{"op": "remove", "path": "/2"}, {"op": "remove", "path": "/1"}], [1, 4]),
    ("JSONPatchDiffTests normalization: strings and ids that change only their normalization",
     J('{"s":"\\u00e9","k":[{"id":"\\u00e9"},{"id":"b"}]}'),
     [{"op": "replace", "path": "/s", "value": "e\u0301"}, {"op": "replace", "path": "/k/0/id", "value": "e\u0301"}],
     J('{"s":"e\\u0301","k":[{"id":"e\\u0301"},{"id":"b"}]}')),
    ("JSONPatchDiffTests apply: add -, copy, move, test, replace", AB,
     [{"op": "add", "path": "/a/-", "value": 3}, {"op": "copy", "from": "/b", "path": "/d"},
      {"op": "move", "from": "/a/0", "path": "/b/e"}, {"op": "test", "path": "/a", "value": [2, 3]},
      {"op": "replace", "path": "/b/c", "value": None}],
     {"a": [2, 3], "b": {"c": None, "e": 1}, "d": {"c": 1}}),
    ("JSONPatchDiffTests apply: remove a missing member", AB, [{"op": "remove", "path": "/x"}], Error("/x does not exist")),
    ("JSONPatchDiffTests apply: add past the end", AB, [{"op": "add", "path": "/a/5", "value": 1}],
     Error("index 5 is out of range (2 elements)")),
    ("JSONPatchDiffTests apply: a failing test", AB, [{"op": "test", "path": "/a", "value": 1}], Error("test fails: /a is [1,2]")),
    ("JSONPatchDiffTests apply: move into its own child", AB, [{"op": "move", "from": "/b", "path": "/b/c/d"}],
     Error("a value cannot move into one of its children")),
    ("JSONPatchDiffTests apply: a leading zero", AB, [{"op": "add", "path": "/a/01", "value": 1}], Error("01 is not an array index")),
    # clients/js/test (client-session.test.js, pushhub.test.js)
    ("client-session.test.js: replace /a", {"a": 1}, [{"op": "replace", "path": "/a", "value": 2}], {"a": 2}),
    ("client-session.test.js: replace /title, the list unchanged", J('{"list":[{"id":"a"},{"id":"b"}],"title":"x"}'),
     [{"op": "replace", "path": "/title", "value": "y"}], J('{"list":[{"id":"a"},{"id":"b"}],"title":"y"}')),
    ("client-session.test.js: remove /nope fails", J('{"list":[{"id":"a"},{"id":"b"}],"title":"y"}'),
     [{"op": "remove", "path": "/nope"}], Error("/nope does not exist")),
    ("pushhub.test.js: replace /n", {"n": 1}, [{"op": "replace", "path": "/n", "value": 2}], {"n": 2}),
    ("test_js_client: the hard numbers arrive by patch", {"numbers": []},
     [{"op": "replace", "path": "/numbers", "value": J("[0.1,1e21,-0.0,5e-324,1e-7,123456789012345680000,-1.5,9007199254740991]")}],
     {"numbers": J("[0.1,1e21,-0.0,5e-324,1e-7,123456789012345680000,-1.5,9007199254740991]")}),
]

# Cases where Python's jsonpatch 1.33 does not do what RFC 6902 says; the file follows the RFC.
JSONPATCH_DIFFERS = {
    "§4.6 test: true is not 1": "Python compares True == 1, so jsonpatch's test passes",
    "§4.6 test: false is not 0": "Python compares False == 0, so jsonpatch's test passes",
}


# MARK: - checks

def strict_load(text):
    """RFC 8259 + I-JSON as the clients read it: no duplicate names, no NaN, no lone surrogates."""
    def no_duplicates(pairs):
        names = [name for name, _ in pairs]
        if len(names) != len(set(names)):
            raise ValueError("duplicate member name in %r" % text)
        return dict(pairs)

    def refuse(constant):
        raise ValueError("%s is not JSON" % constant)

    value = json.loads(text, parse_int=float, object_pairs_hook=no_duplicates, parse_constant=refuse)
    check_scalars(value)
    return value


def check_scalars(value):
    if isinstance(value, str):
        value.encode("utf-8")  # raises on a lone surrogate
    elif isinstance(value, float):
        assert math.isfinite(value)
    elif isinstance(value, list):
        for item in value:
            check_scalars(item)
    elif isinstance(value, dict):
        for name, item in value.items():
            check_scalars(name)
            check_scalars(item)


def same(a, b):
    """JSON equality: booleans are not numbers, numbers by value, objects without member order."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def canonical_case(name, text, printed):
    canonical = rfc8785.dumps(strict_load(text)).decode("utf-8")
    if printed is not None and canonical != printed:
        sys.exit("%s: rfc8785 writes %r, the source prints %r" % (name, canonical, printed))
    return {"name": name, "input": text, "canonical": canonical,
            "hash": hashlib.sha256(canonical.encode("utf-8")).hexdigest()}


def jsonpatch_result(doc, ops):
    try:
        return True, jsonpatch.apply_patch(copy.deepcopy(doc), copy.deepcopy(ops))
    except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException) as error:
        return False, error


def patch_case(name, doc, ops, outcome):
    applied, result = jsonpatch_result(doc, ops)
    differs = JSONPATCH_DIFFERS.get(name)
    if isinstance(outcome, Error):
        if applied and not differs:
            sys.exit("%s: jsonpatch applies it (-> %r), the case expects an error" % (name, result))
        if not applied and differs:
            sys.exit("%s: jsonpatch now refuses it too (%s): drop it from JSONPATCH_DIFFERS" % (name, result))
        return {"name": name, "doc": doc, "ops": ops, "error": outcome.why}
    if not applied:
        sys.exit("%s: jsonpatch refuses it: %s" % (name, result))
    if not same(result, outcome):
        sys.exit("%s: jsonpatch gives %r, the case expects %r" % (name, result, outcome))
    return {"name": name, "doc": doc, "ops": ops, "expected": outcome}


def build():
    canonical = [canonical_case(*source) for source in CANONICAL]
    patch = [patch_case(*source) for source in PATCH]
    for kind, cases in (("canonical", canonical), ("patch", patch)):
        names = [case["name"] for case in cases]
        duplicates = {n for n in names if names.count(n) > 1}
        if duplicates:
            sys.exit("duplicate %s case names: %s" % (kind, sorted(duplicates)))
    for name in JSONPATCH_DIFFERS:
        if name not in {case["name"] for case in patch}:
            sys.exit("JSONPATCH_DIFFERS names no case: %s" % name)
    return {"canonical": canonical, "patch": patch}


def render(cases):
    """One case per line, so a diff shows which cases changed."""
    def line(case):
        return "    " + json.dumps(case, ensure_ascii=False)

    return ('{\n  "canonical": [\n' + ",\n".join(line(c) for c in cases["canonical"]) + "\n  ],\n"
            '  "patch": [\n' + ",\n".join(line(c) for c in cases["patch"]) + "\n  ]\n}\n")


def main():
    text = render(build())
    reread = json.loads(text)
    for case in reread["canonical"]:
        strict_load(case["input"])
    if "--check" in sys.argv[1:]:
        with open(OUT, encoding="utf-8") as f:
            if f.read() != text:
                sys.exit("cases.json is not what generate.py writes: run it and commit the result")
        print("cases.json is up to date")
        return
    with open(OUT, "w", encoding="utf-8") as f:
        f.write(text)
    print("wrote %s: %d canonical, %d patch cases" % (OUT, len(reread["canonical"]), len(reread["patch"])))


if __name__ == "__main__":
    main()
