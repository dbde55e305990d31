import Foundation
import Testing

@testable import PushHubClient

@Suite struct FileStorageTests {
    @Test("keys holding '/' and long screen names (200 characters) are stored, read back, replaced and removed")
    func longAndSlashedKeys() throws {
        let directory = URL(fileURLWithPath: NSTemporaryDirectory() + "filestorage-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }  // the test's own folder: nothing to report
        let storage = try FileStorage(directory: directory)
        let long = "user:d-1:screen:" + String(repeating: "a/", count: 100)
        for key in ["device", "user:d-1:screen:promo/summer", long, long + "b"] {
            #expect(try storage.value(forKey: key) == nil)
            try storage.set("one " + key, forKey: key)
            try storage.set("two " + key, forKey: key)
            #expect(try storage.value(forKey: key) == "two " + key)
        }
        // Another instance on the same folder reads what the first wrote.
        #expect(try FileStorage(directory: directory).value(forKey: long) == "two " + long)
        try storage.removeValue(forKey: long)
        #expect(try storage.value(forKey: long) == nil)
        #expect(try storage.value(forKey: long + "b") == "two " + long + "b")
    }
}
