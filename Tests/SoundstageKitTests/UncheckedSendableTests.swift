// Every `@unchecked Sendable` in Sources is one of the kinds docs/DECISIONS.md allows, on a type named
// there, with its reason written beside it; the engine and its control state are checked by the compiler.
import Foundation
import Testing

@Suite struct UncheckedSendableTests {
    /// The types DECISIONS.md lists ("The control-side redesign, second half"), by kind.
    static let allowed: [String: String] = [
        "SPSCQueue": "queue", "StreamRing": "queue", "TapRing": "queue", "HRIRExchange": "queue",
        "RenderEngine": "render side", "RenderProgram": "render side",
        "Lock": "lock", "Locked": "lock", "ReentrantLocked": "lock",
        "JackInsertPorts": "C handle", "JackLatencyPorts": "C handle", "LoAddress": "C handle",
        "SampleBuffer": "raw memory", "Spare": "raw memory", "AudioFileStreamReader": "C handle",
        "StreamHandle": "hand-over", "LoadedHRTFSet": "hand-over", "ClientRef": "hand-over",
        "InboxItem": "hand-over", "OSCServiceCore": "hand-over"
    ]

    /// (type name, file, the declaration and the lines just above it) for every `@unchecked Sendable`.
    static func declarations() throws -> [(name: String, file: String, context: String)] {
        let sources = Fixtures.root.appendingPathComponent("Sources")
        guard let walker = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil) else {
            return []
        }
        var found: [(String, String, String)] = []
        let pattern = try NSRegularExpression(pattern: #"(?:class|struct|enum)\s+(\w+)[^{]*@unchecked Sendable"#)
        for case let url as URL in walker where url.pathExtension == "swift" {
            let lines = try String(contentsOf: url, encoding: .utf8).components(separatedBy: "\n")
            for (index, line) in lines.enumerated() where line.contains("@unchecked Sendable") {
                let range = NSRange(line.startIndex..., in: line)
                guard let match = pattern.firstMatch(in: line, range: range),
                    let name = Range(match.range(at: 1), in: line)
                else { continue }
                let context = lines[max(0, index - 4)...min(lines.count - 1, index + 2)].joined(separator: "\n")
                found.append((String(line[name]), url.lastPathComponent, context))
            }
        }
        return found
    }

    @Test func everyUncheckedSendableIsAnAllowedKindWithItsReason() throws {
        let found = try Self.declarations()
        #expect(found.count >= 10, "the scan found only \(found.map(\.name))")
        for d in found {
            #expect(
                Self.allowed[d.name] != nil,
                "\(d.file): \(d.name) is @unchecked Sendable but not a kind DECISIONS.md allows")
            // The reason sits at the declaration, as an `// @unchecked:` note.
            #expect(
                d.context.contains("// @unchecked:"),
                "\(d.file): \(d.name) carries no reason for @unchecked Sendable")
        }
    }

    @Test func theEngineAndItsControlStateAreCheckedByTheCompiler() throws {
        let names = Set(try Self.declarations().map(\.name))
        for checked in ["Engine", "EngineCore", "ControlState", "DiskStreamer", "OSCService"] {
            #expect(!names.contains(checked), "\(checked) is @unchecked Sendable")
        }
    }
}
