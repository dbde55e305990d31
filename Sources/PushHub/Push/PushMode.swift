/// Whether a sync also goes out as a silent push (DESIGN §17): not at all (the default), to the
/// targeted devices that are not connected when it is made, or to every targeted device.
public enum PushMode: String, CaseIterable, Sendable {
    case none
    case offline
    case always
}
