extension SyncRoutes {
    /// `GET /v1/clients/summary`: how many signed-in clients there are by platform and by
    /// platform and app version (the console's Hub view), without listing them — a hub with
    /// 100,000 clients answers a few hundred bytes, not megabytes, to a page that asks every few
    /// seconds. Gathered from every loop like `GET /v1/clients`.
    func clientSummary() {
        call.gather(.clients(user: nil)) { [reply] answers in
            var count = 0
            var platforms: [String: Int] = [:]
            var versions: [String: [String: Int]] = [:]
            for case .clients(let some) in answers {
                count += some.count
                for client in some {
                    let platform = client.platform ?? ""
                    platforms[platform, default: 0] += 1
                    versions[platform, default: [:]][client.appVersion?.description ?? "", default: 0] += 1
                }
            }
            let byVersion = versions.sorted { $0.key < $1.key }.flatMap { platform, counts in
                counts.sorted { $0.key < $1.key }.map { version, clients -> JSONValue in
                    .object([
                        "platform": platform.isEmpty ? .null : .string(platform),
                        "app_version": version.isEmpty ? .null : .string(version), "clients": .number(Double(clients)),
                    ])
                }
            }
            let byPlatform = platforms.sorted { $0.key < $1.key }.map { platform, clients -> JSONValue in
                .object(["platform": platform.isEmpty ? .null : .string(platform), "clients": .number(Double(clients))])
            }
            reply.json(
                200,
                .object([
                    "count": .number(Double(count)), "by_platform": .array(byPlatform),
                    "by_app_version": .array(byVersion),
                ]))
        }
    }
}
