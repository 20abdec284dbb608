// `soundstage run` refuses bad arguments before it starts anything: a usage error (exit 64) that names
// the argument and what is wrong with it.
import Foundation
import Testing

@Suite(.enabled(if: SoundstageTool.isAvailable, "soundstage executable not built"))
struct RunArgumentTests {
    @Test func badArgumentsAreRefusedByName() throws {
        let cases: [([String], String)] = [
            (["--http-allow-host", "engine.test:80"], "--http-allow-host 'engine.test:80' is not a host name"),
            (["--http-allow-host", ""], "--http-allow-host '' is not a host name"),
            (["--http-allow-host", "http://engine.test"], "is not a host name"),
            (["--name", String(repeating: "a", count: 64)], "is longer than 63 bytes"),
            (["--name", "a:b"], "must not contain ':'"),
            (["--name", ""], "the client name is empty"),
            (["--http-port", "70000"], "--http-port must be 0…65535")
        ]
        for (arguments, message) in cases {
            let result = try SoundstageTool.run(["run", "--no-start-server", "--duration", "1"] + arguments)
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
        }
    }
}

/// `soundstage graph` takes its format from `--out`'s extension when `--format` is not given, and
/// refuses a format the extension contradicts.
@Suite(.enabled(if: SoundstageTool.isAvailable, "soundstage executable not built"))
struct GraphOutputTests {
    private static let patch = """
        version: 1
        engine: { sampleRate: 48000, outputs: 2 }
        nodes:
          - { name: verb, kind: reverb }
        connections:
          - { from: verb, to: main }

        """

    @Test func theExtensionChoosesTheFormat() throws {
        try withTemporaryDirectory { directory in
            let patch = directory.appendingPathComponent("p.yaml").path
            try Self.patch.write(toFile: patch, atomically: true, encoding: .utf8)
            for name in ["p.dot", "p.gv", "p.txt"] {
                let out = directory.appendingPathComponent(name).path
                let result = try SoundstageTool.run(["graph", patch, "--out", out])
                #expect(result.status == 0, "\(name): \(result.stderr)")
                #expect((try? String(contentsOfFile: out, encoding: .utf8))?.hasPrefix("digraph") == true, "\(name)")
            }
            let svg = directory.appendingPathComponent("p.svg").path
            let refused = try SoundstageTool.run(["graph", patch, "--out", svg, "--format", "dot"])
            #expect(refused.status == 64 && refused.stderr.contains("does not match --out's extension"))
            #expect(!FileManager.default.fileExists(atPath: svg))
            // A picture graph does not draw, or the patch itself, is refused before anything is written
            // (they once got DOT text, the patch replaced by its own picture).
            for name in ["p.png", "p.yaml"] {
                let out = directory.appendingPathComponent(name).path
                let before = try? Data(contentsOf: URL(fileURLWithPath: out))
                let result = try SoundstageTool.run(["graph", patch, "--out", out])
                #expect(result.status == 64 && result.stderr.contains("graph writes DOT"), "\(name): \(result.stderr)")
                #expect((try? Data(contentsOf: URL(fileURLWithPath: out))) == before, "\(name) was written")
            }
            let link = directory.appendingPathComponent("p-link.dot").path
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: patch)
            let itself = try SoundstageTool.run(["graph", patch, "--out", link])
            #expect(itself.status == 64 && itself.stderr.contains("is the patch itself"), "\(itself.stderr)")
            #expect((try? String(contentsOfFile: patch, encoding: .utf8)) == Self.patch)
            // A patch from a pipe is read once.
            let piped = try SoundstageTool.run(["graph", "/dev/stdin"], input: Data(Self.patch.utf8))
            #expect(piped.status == 0 && piped.stdout.hasPrefix("digraph"), "\(piped.stderr)")
            if FileManager.default.isExecutableFile(atPath: "/usr/bin/dot") {
                let drawn = try SoundstageTool.run(["graph", patch, "--out", svg])
                #expect(drawn.status == 0, "\(drawn.stderr)")
                #expect((try? String(contentsOfFile: svg, encoding: .utf8))?.contains("<svg") == true)
            }
        }
    }
}
