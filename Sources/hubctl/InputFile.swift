import Foundation

/// A file argument: a path, or `-` for standard input (`cat home.json | hubctl screen publish
/// home -`). A file that cannot be read is a usage error naming it and why.
enum InputFile {
    static func read(_ path: String) -> Result<[UInt8], UsageError> {
        if path == "-" { return .success(Array(FileHandle.standardInput.readDataToEndOfFile())) }
        if let data = FileManager.default.contents(atPath: path) { return .success(Array(data)) }
        var isDirectory: ObjCBool = false
        let reason =
            !FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) ? "no such file"
            : isDirectory.boolValue ? "it is a directory" : "permission denied"
        return .failure(UsageError("cannot read \(path): \(reason)"))
    }
}
