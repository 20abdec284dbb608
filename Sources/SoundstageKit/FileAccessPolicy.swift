// Control side. Confines file paths that arrive from the network (OSC) to configured folders.
import Foundation

/// A path was refused or could not be resolved.
public struct FileAccessError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}

/// The folders remote clients may read and write. Paths are resolved (`..` and symbolic links
/// included) before they are checked, so `root/../etc/passwd` or a link out of a root is refused.
public struct FileAccessPolicy: Sendable, Equatable {
    /// Resolved absolute root folders.
    public let roots: [String]

    /// `roots` may be relative (to the working directory); they are resolved now.
    public init(roots: [String]) {
        self.roots = roots.map { Self.resolve(URL(fileURLWithPath: $0)).path }
    }

    /// The default: the patch's folder (when there is one) and the working directory.
    public static func defaults(patchPath: String?) -> FileAccessPolicy {
        var roots: [String] = []
        if let patchPath {
            roots.append(URL(fileURLWithPath: patchPath).deletingLastPathComponent().standardizedFileURL.path)
        }
        let workingDirectory = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).standardizedFileURL.path
        // The patch's folder is often the working directory: name it once.
        if !roots.contains(workingDirectory) { roots.append(workingDirectory) }
        return FileAccessPolicy(roots: roots)
    }

    /// The absolute, resolved form of `path` if it lies inside a root. A relative path is taken relative
    /// to the first root. The file itself need not exist (for saving), but its folder must.
    public func resolve(_ path: String) throws(FileAccessError) -> String {
        guard !path.isEmpty, !path.contains("\0") else {
            throw FileAccessError(message: "'\(path)' is not a usable path")
        }
        guard let first = roots.first else { throw FileAccessError(message: "no file roots are configured") }
        let url =
            path.hasPrefix("/") ? URL(fileURLWithPath: path) : URL(fileURLWithPath: first).appendingPathComponent(path)
        let resolved = Self.resolve(url).path
        for root in roots where resolved == root || resolved.hasPrefix(root.hasSuffix("/") ? root : root + "/") {
            return resolved
        }
        throw FileAccessError(message: "'\(path)' is outside the allowed file roots (\(roots.joined(separator: ", ")))")
    }

    /// Resolves symbolic links of the longest existing prefix, then appends the rest, normalised.
    private static func resolve(_ url: URL) -> URL {
        let standardized = url.standardizedFileURL
        var existing = standardized
        var rest: [String] = []
        while !FileManager.default.fileExists(atPath: existing.path) && existing.path != "/" {
            rest.insert(existing.lastPathComponent, at: 0)
            existing = existing.deletingLastPathComponent()
        }
        var result = existing.resolvingSymlinksInPath()
        for component in rest { result.appendPathComponent(component) }
        return result.standardizedFileURL
    }
}
