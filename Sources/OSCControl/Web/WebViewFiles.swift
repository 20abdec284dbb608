// Any thread. The web view's files (plain HTML, CSS, JS and SVG), shipped beside the binary as the
// module's resources and served read-only.
import FlyingFox
import Foundation

enum WebViewFiles {
    /// The folder holding `index.html`: SOUNDSTAGE_WEB_VIEW when set, else the resources bundle the
    /// build puts beside the executable.
    static let folder: URL? = {
        if let override = ProcessInfo.processInfo.environment["SOUNDSTAGE_WEB_VIEW"], !override.isEmpty {
            return URL(fileURLWithPath: override, isDirectory: true)
        }
        var places: [URL] = []
        if let executable = Bundle.main.executableURL?.resolvingSymlinksInPath() {
            places.append(executable.deletingLastPathComponent())
        }
        places.append(Bundle.main.bundleURL)
        places.append(Bundle.main.bundleURL.deletingLastPathComponent())
        for place in places {
            let folder = place.appendingPathComponent("Soundstage_OSCControl.resources/view", isDirectory: true)
            if FileManager.default.fileExists(atPath: folder.appendingPathComponent("index.html").path) {
                return folder
            }
        }
        return nil
    }()

    static func response(for path: String) -> HTTPResponse {
        var name = String(path.dropFirst("/view".count))
        if name.hasPrefix("/") { name.removeFirst() }
        if name.isEmpty { name = "index.html" }
        guard isSafe(name) else { return WebRequestHandler.text(.notFound, "no file \(path)") }
        guard let folder else {
            return WebRequestHandler.text(
                .notFound,
                "the web view's files are not installed: keep the Soundstage_OSCControl.resources folder beside "
                    + "the soundstage binary, or set SOUNDSTAGE_WEB_VIEW to its view folder")
        }
        guard let data = FileManager.default.contents(atPath: folder.appendingPathComponent(name).path) else {
            return WebRequestHandler.text(.notFound, "no file \(path)")
        }
        var headers: HTTPHeaders = [.contentType: contentType(name)]
        headers[.cacheControl] = "no-cache"
        return HTTPResponse(statusCode: .ok, headers: headers, body: data)
    }

    /// A plain file name of the folder: letters, digits, `.`, `_`, `-`, not starting with a dot.
    static func isSafe(_ name: String) -> Bool {
        guard !name.isEmpty, !name.hasPrefix("."), name.utf8.count <= 64 else { return false }
        return name.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0)
                || "._-".unicodeScalars.contains($0)
        }
    }

    static func contentType(_ name: String) -> String {
        switch name.split(separator: ".").last.map(String.init) ?? "" {
        case "html": return "text/html; charset=utf-8"
        case "css": return "text/css; charset=utf-8"
        case "js": return "text/javascript; charset=utf-8"
        case "svg": return "image/svg+xml"
        case "png": return "image/png"
        case "json": return "application/json"
        default: return "application/octet-stream"
        }
    }
}
