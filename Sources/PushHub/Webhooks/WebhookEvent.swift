/// One event for webhooks (DESIGN §18): made once, with the change that caused it, and sent as
/// the same bytes on every attempt to every webhook that wants it.
///
/// Invariant: `id` is unique across the hub's (and its cluster's) life: "ev-" and 13 random
/// base-62 characters (77 bits).
struct WebhookEvent: Sendable, Equatable {
    let id: String
    let type: WebhookEventType
    /// What it is about; events of one subject reach a webhook in the order they were made
    /// ("screen:home", "sync:s-12", "experiment:checkout").
    let subject: String
    /// Unix milliseconds.
    let time: Int
    let data: JSONObject

    init(id: String = WebhookEvent.newID(), type: WebhookEventType, subject: String, time: Int, data: JSONObject) {
        self.id = id
        self.type = type
        self.subject = subject
        self.time = time
        self.data = data
    }

    /// The POST body: `{"id":…,"type":…,"time":…,"subject":…,"data":{…}}`, compact, in that
    /// order (what a person reading a delivery looks for first), `data` in RFC 8785 form.
    var body: [UInt8] {
        var out = Array(#"{"id":"#.utf8)
        JSONWriter.writeString(id, to: &out)
        out += Array(#","type":"#.utf8)
        JSONWriter.writeString(type.rawValue, to: &out)
        out += Array(#","time":\#(time),"subject":"#.utf8)
        JSONWriter.writeString(subject, to: &out)
        out += Array(#","data":"#.utf8)
        JSONWriter.write(.object(data), to: &out)
        out.append(UInt8(ascii: "}"))
        return out
    }

    var json: JSONValue {
        .object([
            "id": .string(id), "type": .string(type.rawValue), "subject": .string(subject),
            "time": .number(Double(time)), "data": .object(data),
        ])
    }

    init(json: JSONValue) throws(HubRecord.DecodingError) {
        guard let id = json["id"]?.stringValue, let typeName = json["type"]?.stringValue,
            let subject = json["subject"]?.stringValue, let time = json["time"]?.intValue,
            case .object(let data)? = json["data"]
        else { throw HubRecord.DecodingError(description: "a webhook event needs id, type, subject, time and data") }
        guard let type = WebhookEventType(rawValue: typeName) else {
            throw HubRecord.DecodingError(description: "unknown webhook event type \(typeName)")
        }
        self.init(id: id, type: type, subject: subject, time: time, data: data)
    }

    static func subject(screen: String) -> String { "screen:" + screen }

    /// "ev-" and 13 random base-62 characters (77 bits), as session ids are made.
    static func newID() -> String { "ev-" + Session.newSessionID().dropFirst(2) }
}
