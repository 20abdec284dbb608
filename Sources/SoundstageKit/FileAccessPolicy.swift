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
        self.roots = roots.map { Self.resolve(URL(fileURLWithPath: $0))?.path ?? $0 }
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
        guard let resolved = Self.resolve(url)?.path else {
            throw FileAccessError(message: "'\(path)' cannot be resolved (a loop of symbolic links, or one unreadable)")
        }
        for root in roots where resolved == root || resolved.hasPrefix(root.hasSuffix("/") ? root : root + "/") {
            return resolved
        }
        throw FileAccessError(message: "'\(path)' is outside the allowed file roots (\(roots.joined(separator: ", ")))")
    }

    /// The path the kernel would reach for `url`, component by component: `.` skipped, `..` taken from
    /// the folder reached so far (after `link/..` the link's target's parent, as the kernel does), every
    /// symbolic link followed, a dangling one too (a write through it creates its target, so the target
    /// is what must lie inside a root). The components after the first that does not exist are appended
    /// as they are. Nil after more than 40 links (a loop) or a link that cannot be read.
    static func resolve(_ url: URL) -> URL? {
        resolve(path: url.path, links: 0).map { URL(fileURLWithPath: $0) }
    }

    private static func resolve(path: String, links: Int) -> String? {
        guard links <= 40 else { return nil }
        var components = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        if !path.hasPrefix("/") {
            components = FileManager.default.currentDirectoryPath.split(separator: "/").map(String.init) + components
        }
        var reached: [String] = []
        var index = 0
        while index < components.count {
            let component = components[index]
            index += 1
            if component == "." { continue }
            if component == ".." {
                _ = reached.popLast()
                continue
            }
            let candidate = "/" + (reached + [component]).joined(separator: "/")
            var info = stat()
            guard lstat(candidate, &info) == 0 else {
                // Nothing exists from here on: the rest is a name to create, taken literally but for `.`/`..`.
                reached.append(component)
                for rest in components[index...] {
                    if rest == "." { continue }
                    if rest == ".." { _ = reached.popLast() } else { reached.append(rest) }
                }
                return "/" + reached.joined(separator: "/")
            }
            guard info.st_mode & S_IFMT == S_IFLNK else {
                reached.append(component)
                continue
            }
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let count = readlink(candidate, &buffer, buffer.count - 1)
            guard count > 0 else { return nil }
            let target = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let base = target.hasPrefix("/") ? target : "/" + (reached + [target]).joined(separator: "/")
            let rest = components[index...].joined(separator: "/")
            return resolve(path: rest.isEmpty ? base : base + "/" + rest, links: links + 1)
        }
        return "/" + reached.joined(separator: "/")
    }
}
