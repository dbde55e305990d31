import PushHub

/// The `components` part of a publish's dry run (`screen diff`; DESIGN §16 "Questions ops can
/// ask"), for people: each node that some connected clients cannot render, whether they get its
/// fallback or lose the node, and how many of them, by platform and app version.
///
/// ```
/// components: 2 of 7 connected clients cannot render every node
///   /children/1  Carousel v2  fallback  2 clients  ios 5.0.3: 1, android 4.1.0: 1
/// ```
/// A client whose hello named no app reads `(no app)`. Prints nothing for a dry run without the
/// member (a hub before components).
enum ComponentFallbacks {
    static func present(_ components: JSONValue?, output: Output) {
        guard let components, let fallbacks = components["fallbacks"]?.arrayValue else { return }
        let total = components["clients"]?.intValue ?? 0
        guard total > 0 else { return output.print("components: no client is connected") }
        guard !fallbacks.isEmpty else {
            return output.print("components: all \(clients(total)) connected can render every node")
        }
        output.print("components: who cannot render a node, of \(clients(total)) connected:")
        output.columns(
            fallbacks.map { node in
                let pointer = node["pointer"]?.stringValue ?? ""
                let byApp = (node["by_app"]?.arrayValue ?? []).map { app in
                    let build = [app["platform"]?.stringValue, app["app_version"]?.stringValue].compactMap { $0 }
                    let name = build.isEmpty ? "(no app)" : build.joined(separator: " ")
                    return "\(name): \(app["clients"]?.intValue ?? 0)"
                }
                return [
                    pointer.isEmpty ? "(root)" : pointer,
                    "\(node["type"]?.stringValue ?? "-") v\(node["v"]?.intValue ?? 1)",
                    node["outcome"]?.stringValue ?? "-", clients(node["clients"]?.intValue ?? 0),
                    byApp.joined(separator: ", "),
                ]
            }, indent: "  ")
    }

    private static func clients(_ count: Int) -> String { "\(count) client\(count == 1 ? "" : "s")" }
}
