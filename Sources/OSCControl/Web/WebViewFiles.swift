// Any thread. The web view's files (plain HTML, CSS and JS), compiled into the binary and served
// read-only.
import FlyingFox
import Foundation

enum WebViewFiles {
    /// A folder to serve the files from instead of the binary's own copies: SOUNDSTAGE_WEB_VIEW, when set
    /// (for working on the page without rebuilding).
    static let folder: URL? = {
        guard let override = ProcessInfo.processInfo.environment["SOUNDSTAGE_WEB_VIEW"], !override.isEmpty else {
            return nil
        }
        return URL(fileURLWithPath: override, isDirectory: true)
    }()

    /// The page's files, compiled into the binary (`Resources/view`, embedded by the package manifest).
    static let embedded: [String: [UInt8]] = [
        "index.html": PackageResources.index_html, "osc.js": PackageResources.osc_js,
        "view.css": PackageResources.view_css, "view.js": PackageResources.view_js
    ]

    static func response(for path: String) -> HTTPResponse {
        var name = String(path.dropFirst("/view".count))
        if name.hasPrefix("/") { name.removeFirst() }
        if name.isEmpty { name = "index.html" }
        guard isSafe(name) else { return WebRequestHandler.text(.notFound, "no file \(path)") }
        let data: Data?
        if let folder {
            data = FileManager.default.contents(atPath: folder.appendingPathComponent(name).path)
        } else {
            data = embedded[name].map { Data($0) }
        }
        guard let data else { return WebRequestHandler.text(.notFound, "no file \(path)") }
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
