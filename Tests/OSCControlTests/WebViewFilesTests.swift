// The web view's files come from the binary itself: a binary installed alone (as docs/SERVICE.md installs
// it) serves the whole page, byte for byte the files in Sources/OSCControl/Resources/view.
import Foundation
@testable import OSCControl
import Testing

@Suite struct WebViewFilesTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/OSCControl/Resources/view")

    @Test func everyFileOfThePageIsServedFromTheBinary() async throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.folder.path).sorted()
        #expect(names == WebViewFiles.embedded.keys.sorted(), "a file of the page is not embedded (Package.swift)")
        for name in names {
            let response = WebViewFiles.response(for: "/view/\(name)")
            #expect(response.statusCode == .ok, "\(name)")
            let served = try await response.bodyData
            #expect(served == (try Data(contentsOf: Self.folder.appendingPathComponent(name))), "\(name)")
        }
        let index = WebViewFiles.response(for: "/view")
        #expect(try await index.bodyData == Data(WebViewFiles.embedded["index.html"] ?? []))
        #expect(WebViewFiles.response(for: "/view/missing.js").statusCode == .notFound)
        #expect(WebViewFiles.response(for: "/view/../Package.swift").statusCode == .notFound)
    }
}
