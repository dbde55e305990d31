import Foundation
import PushHub

/// `hubctl clients [--user U]`: who is connected, with their attributes.
enum Clients: Command {
    static let name = "clients"
    static let abstract = "List connected clients (all, or one user's devices) with their attributes."
    static let usage = "hubctl clients [--user U]"
    static let options: [(String, String)] = [("--user U", "only this user's connections")]

    static func run(_ arguments: Arguments, client: AdminClient, output: Output) -> Int32 {
        var path = "/v1/clients"
        if let user = arguments.options["--user"]?.last { path += "?user=\(Screen.encode(user))" }
        return request(client, output, "GET", path) { answer in
            let rows = (answer["clients"]?.arrayValue ?? []).map { c in
                [
                    c["user"]?.stringValue ?? "(anonymous)", c["device"]?.stringValue ?? "",
                    c["platform"]?.stringValue ?? "",
                    c["app_version"]?.stringValue ?? "", c["session"]?.stringValue ?? "",
                ]
            }
            output.print("\(rows.count) connected")
            output.columns(rows)
        }
    }
}
