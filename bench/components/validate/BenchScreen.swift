import PushHub

/// The bench's registry and screen: 20 components with realistic schemas (typed properties,
/// required members, enums, patterns on ids, URLs, colours, currencies and timestamps, arrays
/// of objects, closed objects), and a 10,001-node screen that uses all of them — a Screen, 100
/// Sections of 99 nodes each.
enum BenchScreen {
    static let id = #"{"type":"string","pattern":"^[a-z0-9]+(-[a-z0-9]+)*$","maxLength":64}"#
    static let url = #"{"type":"string","pattern":"^https://[^\\s/$.?#][^\\s]*$","maxLength":2048}"#
    static let colour = #"{"type":"string","pattern":"^#[0-9a-fA-F]{6}$"}"#
    static let text = #"{"type":"string","minLength":1,"maxLength":500}"#
    static let action =
        #"{"type":"object","required":["kind","target"],"additionalProperties":false,"properties":{"kind":{"enum":["open","deeplink","share","dismiss"]},"target":{"type":"string","minLength":1}}}"#

    /// Name → schema (JSON text).
    static let schemas: [(String, String)] = [
        (
            "Screen",
            #"{"type":"object","required":["id","children"],"properties":{"id":\#(id),"title":\#(text),"children":{"type":"array","items":{"type":"object"}}}}"#
        ),
        (
            "Section",
            #"{"type":"object","required":["id","children"],"properties":{"id":\#(id),"title":\#(text),"layout":{"enum":["list","grid","carousel","hero"]},"background":\#(colour),"children":{"type":"array","items":{"type":"object","required":["id"]}}}}"#
        ),
        (
            "Header",
            #"{"type":"object","required":["id","title"],"additionalProperties":false,"properties":{"id":\#(id),"title":\#(text),"subtitle":\#(text),"level":{"type":"integer","minimum":1,"maximum":6}}}"#
        ),
        (
            "Text",
            #"{"type":"object","required":["id","text"],"additionalProperties":false,"properties":{"id":\#(id),"text":\#(text),"style":{"enum":["body","caption","title","subtitle","footnote"]},"colour":\#(colour),"lines":{"type":"integer","minimum":0,"maximum":20}}}"#
        ),
        (
            "Image",
            #"{"type":"object","required":["id","url","alt"],"properties":{"id":\#(id),"url":\#(url),"alt":{"type":"string","maxLength":200},"aspect":{"type":"number","minimum":0.1,"maximum":10},"fit":{"enum":["cover","contain","fill"]}}}"#
        ),
        (
            "Button",
            #"{"type":"object","required":["id","label","action"],"additionalProperties":false,"properties":{"id":\#(id),"label":{"type":"string","minLength":1,"maxLength":40},"style":{"enum":["primary","secondary","link","destructive"]},"action":\#(action),"enabled":{"type":"boolean"}}}"#
        ),
        (
            "ListItem",
            #"{"type":"object","required":["id","title"],"properties":{"id":\#(id),"title":\#(text),"subtitle":{"type":["string","null"]},"icon":{"type":"string","pattern":"^[a-z][a-z0-9.]*$"},"badge":{"type":"integer","minimum":0},"action":\#(action)}}"#
        ),
        (
            "Price",
            #"{"type":"object","required":["id","amount","currency"],"additionalProperties":false,"properties":{"id":\#(id),"amount":{"type":"number","minimum":0},"currency":{"type":"string","pattern":"^[A-Z]{3}$"},"was":{"type":"number","minimum":0},"per":{"enum":["item","kg","month","year"]}}}"#
        ),
        (
            "Rating",
            #"{"type":"object","required":["id","value"],"properties":{"id":\#(id),"value":{"type":"number","minimum":0,"maximum":5},"count":{"type":"integer","minimum":0},"style":{"const":"stars"}}}"#
        ),
        (
            "Badge",
            #"{"type":"object","required":["id","label","tone"],"additionalProperties":false,"properties":{"id":\#(id),"label":{"type":"string","maxLength":20},"tone":{"enum":["info","success","warning","danger","neutral"]}}}"#
        ),
        (
            "Link",
            #"{"type":"object","required":["id","label","url"],"properties":{"id":\#(id),"label":\#(text),"url":\#(url),"external":{"type":"boolean"}}}"#
        ),
        (
            "Carousel",
            #"{"type":"object","required":["id","slides"],"properties":{"id":\#(id),"interval":{"type":"integer","minimum":1,"maximum":60},"slides":{"type":"array","items":{"type":"object","required":["image"],"additionalProperties":false,"properties":{"image":\#(url),"caption":{"type":"string","maxLength":80},"action":\#(action)}}}}}"#
        ),
        (
            "Video",
            #"{"type":"object","required":["id","url"],"properties":{"id":\#(id),"url":\#(url),"poster":\#(url),"autoplay":{"type":"boolean"},"duration":{"type":"integer","minimum":1}}}"#
        ),
        (
            "Divider",
            #"{"type":"object","required":["id"],"additionalProperties":false,"properties":{"id":\#(id),"inset":{"type":"integer","minimum":0,"maximum":64}}}"#
        ),
        (
            "Spacer",
            #"{"type":"object","required":["id","size"],"properties":{"id":\#(id),"size":{"enum":[4,8,12,16,24,32,48]}}}"#
        ),
        (
            "Countdown",
            #"{"type":"object","required":["id","until"],"properties":{"id":\#(id),"until":{"type":"string","pattern":"^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}Z$"},"label":\#(text)}}"#
        ),
        (
            "Banner",
            #"{"type":"object","required":["id","title","tone"],"properties":{"id":\#(id),"title":\#(text),"body":\#(text),"tone":{"enum":["info","promo","alert"]},"dismissible":{"type":"boolean"},"action":\#(action)}}"#
        ),
        (
            "Tabs",
            #"{"type":"object","required":["id","tabs"],"properties":{"id":\#(id),"selected":{"type":"integer","minimum":0},"tabs":{"type":"array","items":{"type":"object","required":["key","label"],"properties":{"key":\#(id),"label":{"type":"string","maxLength":24}}}}}}"#
        ),
        (
            "Grid",
            #"{"type":"object","required":["id","columns","cells"],"properties":{"id":\#(id),"columns":{"type":"integer","minimum":1,"maximum":6},"cells":{"type":"array","items":{"type":"object","required":["image","label"],"properties":{"image":\#(url),"label":{"type":"string"}}}}}}"#
        ),
        (
            "Avatar",
            #"{"type":"object","required":["id","initials"],"properties":{"id":\#(id),"initials":{"type":"string","pattern":"^[A-Z]{1,3}$"},"image":\#(url),"size":{"enum":["s","m","l"]}}}"#
        ),
    ]

    /// The 20 components, registered from their PUT bodies.
    static func components() -> [String: Component] {
        var registry: [String: Component] = [:]
        for (name, schema) in schemas {
            let body = #"{"versions":{"1":{"schema":\#(schema)}}}"#
            registry[name] = try! Component(name: name, body: JSONReader.parse(Array(body.utf8)))
        }
        return registry
    }

    /// One node of the 18 row kinds, chosen by `n`; `broken` gives it one violation.
    static func row(_ n: Int, section: Int, broken: Bool) -> JSONValue {
        let id = JSONValue.string("s\(section)-r\(n)")
        let action: JSONValue = .object(["kind": .string("open"), "target": .string("/product/\(n)")])
        let image = JSONValue.string("https://cdn.example.com/images/\(section)/\(n).jpg")
        var node: JSONObject
        switch n % 18 {
        case 0: node = ["type": .string("Header"), "id": id, "title": .string("Header \(n)"), "level": .number(2)]
        case 1:
            node = [
                "type": .string("Text"), "id": id,
                "text": .string("Some body text for row \(n), long enough to be a sentence."),
                "style": .string("body"), "colour": .string("#33aaFF"), "lines": .number(3),
            ]
        case 2:
            node = [
                "type": .string("Image"), "id": id, "url": image, "alt": .string("A product"), "aspect": .number(1.5),
                "fit": .string("cover"),
            ]
        case 3:
            node = [
                "type": .string("Button"), "id": id, "label": .string("Buy now"), "style": .string("primary"),
                "action": action, "enabled": .bool(true),
            ]
        case 4:
            node = [
                "type": .string("ListItem"), "id": id, "title": .string("Item \(n)"), "subtitle": .null,
                "icon": .string("cart.fill"),
                "badge": .number(2), "action": action,
            ]
        case 5:
            node = [
                "type": .string("Price"), "id": id, "amount": .number(19.99), "currency": .string("EUR"),
                "was": .number(24.5),
            ]
        case 6:
            node = [
                "type": .string("Rating"), "id": id, "value": .number(4.5), "count": .number(1234),
                "style": .string("stars"),
            ]
        case 7: node = ["type": .string("Badge"), "id": id, "label": .string("New"), "tone": .string("success")]
        case 8:
            node = [
                "type": .string("Link"), "id": id, "label": .string("More"), "url": image, "external": .bool(false),
            ]
        case 9:
            node = [
                "type": .string("Carousel"), "id": id, "interval": .number(5),
                "slides": .array(
                    (0..<3).map { .object(["image": image, "caption": .string("Slide \($0)"), "action": action]) }),
            ]
        case 10:
            node = [
                "type": .string("Video"), "id": id, "url": image, "poster": image, "autoplay": .bool(false),
                "duration": .number(90),
            ]
        case 11: node = ["type": .string("Divider"), "id": id, "inset": .number(16)]
        case 12: node = ["type": .string("Spacer"), "id": id, "size": .number(16)]
        case 13:
            node = [
                "type": .string("Countdown"), "id": id, "until": .string("2026-12-24T18:00:00Z"),
                "label": .string("Sale ends"),
            ]
        case 14:
            node = [
                "type": .string("Banner"), "id": id, "title": .string("Summer sale"), "tone": .string("promo"),
                "dismissible": .bool(true),
            ]
        case 15:
            node = [
                "type": .string("Tabs"), "id": id, "selected": .number(0),
                "tabs": .array((0..<3).map { .object(["key": .string("tab-\($0)"), "label": .string("Tab \($0)")]) }),
            ]
        case 16:
            node = [
                "type": .string("Grid"), "id": id, "columns": .number(2),
                "cells": .array((0..<4).map { .object(["image": image, "label": .string("Cell \($0)")]) }),
            ]
        default:
            node = [
                "type": .string("Avatar"), "id": id, "initials": .string("AB"), "image": image, "size": .string("m"),
            ]
        }
        if broken { node["id"] = .string("Not An Id") }
        return .object(node)
    }

    /// The screen: `sections` Sections of `rows` rows; every `brokenEvery`-th row (0: none)
    /// breaks its schema once.
    static func tree(sections: Int = 100, rows: Int = 99, brokenEvery: Int = 0) -> JSONValue {
        var count = 0
        return .object([
            "type": .string("Screen"), "id": .string("home"), "title": .string("Home"),
            "children": .array(
                (0..<sections).map { s in
                    .object([
                        "type": .string("Section"), "id": .string("section-\(s)"), "title": .string("Section \(s)"),
                        "layout": .string("list"), "background": .string("#ffffff"),
                        "children": .array(
                            (0..<rows).map { r in
                                count += 1
                                return row(r + s, section: s, broken: brokenEvery > 0 && count % brokenEvery == 0)
                            }),
                    ])
                }),
        ])
    }

    /// Objects with a string "type" in `value`.
    static func nodes(in value: JSONValue) -> Int {
        switch value {
        case .object(let members):
            return (members["type"]?.stringValue != nil ? 1 : 0) + members.values.reduce(0) { $0 + nodes(in: $1) }
        case .array(let elements):
            return elements.reduce(0) { $0 + nodes(in: $1) }
        case .null, .bool, .number, .string:
            return 0
        }
    }
}
