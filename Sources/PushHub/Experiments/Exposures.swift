import Glibc

/// The exposure log (DESIGN §6): `exposures.jsonl` in the data dir, one line per first exposure
/// of a session to an experiment's rendition (`served`) and per confirmation (`rendered`), and
/// the counts per variant of the distinct units served and confirmed. Owned by the control plane,
/// which receives exposures from the loops as events.
///
/// Invariant: counts are of distinct units, so a unit seen by many sessions counts once; a line
/// that cannot be written is logged and counted (`pushhub_persist_failures_total`), never dropped
/// silently.
final class Exposures {
    private var served: [String: [String: Set<String>]] = [:]  // experiment → variant → units
    private var confirmed: [String: [String: Set<String>]] = [:]
    private let fd: Int32
    private let metrics: Metrics

    init(dataDirectory: String?, metrics: Metrics) {
        self.metrics = metrics
        fd = dataDirectory.map { open($0 + "/exposures.jsonl", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600) } ?? -1
    }

    deinit { if fd >= 0 { close(fd) } }

    func record(_ exposure: Exposure) {
        switch exposure.event {
        case .served: served[exposure.experiment, default: [:]][exposure.variant, default: []].insert(exposure.unit)
        case .confirmed:
            confirmed[exposure.experiment, default: [:]][exposure.variant, default: []].insert(exposure.unit)
        }
        guard fd >= 0 else { return }
        let line =
            JSONWriter.write(
                .object([
                    "ts": .number(Double(exposure.at)), "event": .string(exposure.event.rawValue),
                    "experiment": .string(exposure.experiment), "variant": .string(exposure.variant),
                    "unit": .string(exposure.unit), "screen": .string(exposure.screen),
                    "version": .number(Double(exposure.version)),
                ])) + [0x0A]
        do {
            try FileBytes.writeAll(line, to: fd, path: "exposures.jsonl")
        } catch {
            metrics.persistFailures.add(1, ordering: .relaxed)
            Log.error("cannot append to the exposure log", [("error", "\(error)")])
        }
    }

    /// Served and confirmed distinct units per variant.
    func results(_ experiment: String) -> [String: (served: Int, confirmed: Int)] {
        var out: [String: (served: Int, confirmed: Int)] = [:]
        for (variant, units) in served[experiment] ?? [:] { out[variant, default: (0, 0)].served = units.count }
        for (variant, units) in confirmed[experiment] ?? [:] { out[variant, default: (0, 0)].confirmed = units.count }
        return out
    }
}
