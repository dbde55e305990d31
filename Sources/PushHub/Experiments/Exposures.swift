import Glibc
import Synchronization

/// The exposure log (DESIGN §6): a JSONL file in the data dir with one line per first exposure
/// of a session to an experiment's rendition (`served`) and per confirmation (`rendered`), and
/// the counts per variant of the distinct units served and confirmed.
///
/// Invariant: counts are of distinct units, so a unit seen by many sessions counts once.
public final class Exposures: Sendable {
    struct State {
        var served: [String: [String: Set<String>]] = [:]  // experiment → variant → units
        var confirmed: [String: [String: Set<String>]] = [:]
        var fd: Int32 = -1
    }

    private let state: Mutex<State>

    public init(dataDirectory: String?) {
        var state = State()
        if let dataDirectory {
            state.fd = open(dataDirectory + "/exposures.jsonl", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        }
        self.state = Mutex(state)
    }

    public func served(experiment: String, variant: String, unit: String, screen: String, version: Int, now: Int) {
        record(
            "served", experiment: experiment, variant: variant, unit: unit, screen: screen, version: version, now: now
        ) {
            $0.served[experiment, default: [:]][variant, default: []].insert(unit)
        }
    }

    public func confirmed(experiment: String, variant: String, unit: String, screen: String, version: Int, now: Int) {
        record(
            "confirmed", experiment: experiment, variant: variant, unit: unit, screen: screen, version: version,
            now: now
        ) {
            $0.confirmed[experiment, default: [:]][variant, default: []].insert(unit)
        }
    }

    private func record(
        _ event: String, experiment: String, variant: String, unit: String, screen: String, version: Int, now: Int,
        _ count: (inout State) -> Void
    ) {
        let line =
            JSONWriter.write(
                .object([
                    "ts": .number(Double(now)), "event": .string(event), "experiment": .string(experiment),
                    "variant": .string(variant),
                    "unit": .string(unit), "screen": .string(screen), "version": .number(Double(version)),
                ])) + [0x0A]
        state.withLock { state in
            count(&state)
            if state.fd >= 0 { _ = line.withUnsafeBytes { write(state.fd, $0.baseAddress, $0.count) } }
        }
    }

    /// Served and confirmed distinct units per variant.
    public func results(_ experiment: String) -> [String: (served: Int, confirmed: Int)] {
        state.withLock { state in
            var out: [String: (served: Int, confirmed: Int)] = [:]
            for (variant, units) in state.served[experiment] ?? [:] {
                out[variant, default: (0, 0)].served = units.count
            }
            for (variant, units) in state.confirmed[experiment] ?? [:] {
                out[variant, default: (0, 0)].confirmed = units.count
            }
            return out
        }
    }
}

@available(*, unavailable)
extension Exposures.State: Sendable {}
