/// What a client is sent to bring it from the version it has to the current one (DESIGN §4):
/// nothing when its rendered tree did not change, a `patch` when that is smaller, else a
/// `snapshot`. Frames are made once per (from, to) rendition pair and cached in the target
/// version, so every subscriber of a rendition gets the same bytes.
public enum Fanout {
    /// The frame for a client of `target` going from `old` (nil: it has nothing) to `new`.
    /// - Returns: nil when the client's rendered tree is unchanged.
    public static func update(from old: ScreenVersion?, to new: ScreenVersion, for target: RenderTarget) -> [UInt8]? {
        update(from: old, oldTarget: target, to: new, newTarget: target)
    }

    /// The same when what the client is rendered as changed too (an experiment changed).
    public static func update(
        from old: ScreenVersion?, oldTarget: RenderTarget, to new: ScreenVersion, newTarget target: RenderTarget
    ) -> [UInt8]? {
        let rendered = new.rendered(for: target)
        let key = new.renditionKey(for: target)
        guard let old else { return snapshot(new, rendition: key, rendered: rendered) }
        let before = old.rendered(for: oldTarget)
        if before.hash == rendered.hash { return nil }
        let oldKey = old.renditionKey(for: oldTarget)
        return new.message(.patch(fromVersion: old.version, fromRendition: oldKey, rendition: key)) {
            let ops = JSONPatchDiff.diff(before.tree, rendered.tree)
            let patch = ServerMessage.patch(
                screen: new.name, from: old.version, version: new.version, hash: rendered.hash, ops: ops)
            let snapshotSize = ServerMessage.snapshotSize(screen: new.name, version: new.version, rendered: rendered)
            // Not `snapshot(...)`: that would ask `new` for a message from inside this one.
            guard patch.count < snapshotSize else {
                Metrics.snapshotsEncoded.add(1, ordering: .relaxed)
                return ServerMessage.snapshot(screen: new.name, version: new.version, rendered: rendered)
            }
            Metrics.patchesEncoded.add(1, ordering: .relaxed)
            return patch
        }
    }

    public static func snapshot(_ version: ScreenVersion, for target: RenderTarget) -> [UInt8] {
        snapshot(version, rendition: version.renditionKey(for: target), rendered: version.rendered(for: target))
    }

    static func snapshot(_ version: ScreenVersion, rendition: RenditionKey, rendered: RenderedTree) -> [UInt8] {
        version.message(.snapshot(rendition: rendition)) {
            Metrics.snapshotsEncoded.add(1, ordering: .relaxed)
            return ServerMessage.snapshot(screen: version.name, version: version.version, rendered: rendered)
        }
    }
}

extension Fanout {
    /// Who a change from `old` to `new` reaches among subscribers rendered as `targets` (with
    /// their counts): those whose rendered tree changes, and the distinct renditions of `new`.
    static func reach(from old: ScreenVersion?, to new: ScreenVersion, targets: [RenderTarget: Int]) -> (
        sent: Int, renditions: Int
    ) {
        var sent = 0
        var renditions = Set<RenditionKey>()
        for (target, count) in targets {
            renditions.insert(new.renditionKey(for: target))
            if old?.rendered(for: target).hash != new.rendered(for: target).hash { sent += count }
        }
        return (sent, renditions.count)
    }
}
