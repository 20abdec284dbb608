import AudioGraph
import DSPTestSupport
import Foundation
import Patches
import SoundstageKit
import Testing

@Suite struct PatchApplyTests {
    @Test func applyingAPatchReplacesTheRunningGraph() throws {
        let loaded = try PatchLoader.load(path: Fixtures.patches.appendingPathComponent("hello.yaml").path)
        let engine = loaded.engine
        let renderer = OfflineRenderer(engine: engine)
        _ = renderer.render(frameCount: 4800, hostBlockFrames: 256)
        try PatchLoader.apply(path: Fixtures.patches.appendingPathComponent("submix.yaml").path, to: engine)
        #expect(Set(engine.nodes().map(\.name)) == ["main", "output", "music", "ui", "sub"])
        #expect(Set(engine.buffers().map(\.name)) == ["pad", "blip"])
        _ = renderer.render(frameCount: 4800, hostBlockFrames: 256)
        // The result sounds like the submix patch loaded from scratch (after the 10 ms crossfade).
        let fresh = try PatchLoader.load(path: Fixtures.patches.appendingPathComponent("submix.yaml").path)
        let a = renderer.render(frameCount: 48_000, hostBlockFrames: 256)
        let b = OfflineRenderer(engine: fresh.engine).render(frameCount: 52_800, hostBlockFrames: 256)
        // Both run the looping pad; compare the pad's level rather than sample phase.
        #expect(abs(SignalStats.rms(a[0][24_000...]) - SignalStats.rms(b[0][28_800...])) < 1e-3)
    }

    /// `main` takes the channel count the patch loaded afresh gives it, like its other parameters: a
    /// count changed live does not survive a replace (it stayed 5 where a fresh start gives 2).
    @Test func applyingAPatchResetsMainsChannelCount() throws {
        let path = Fixtures.patches.appendingPathComponent("hello.yaml").path
        let engine = try PatchLoader.load(path: path).engine
        let fresh = try PatchLoader.load(path: path).engine
        let channels = { (e: Engine) in e.nodes().first { $0.name == "main" }?.parameters["channels"] }
        try engine.set("main", "channels", to: .int(5))
        try engine.set("main", "volume", to: .float(0.25))
        try PatchLoader.apply(path: path, to: engine)
        #expect(
            channels(engine) == channels(fresh) && channels(fresh) != nil, "\(String(describing: channels(engine)))")
        #expect(try engine.get("main", "volume") == (try fresh.get("main", "volume")))
    }

    @Test func aBadPatchLeavesTheRunningGraphAlone() throws {
        let loaded = try PatchLoader.load(path: Fixtures.patches.appendingPathComponent("hello.yaml").path)
        let engine = loaded.engine
        let before = (engine.nodes().map(\.name), engine.connections(), engine.buffers().map(\.name))
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let bad = try Fixtures.write(
            """
            version: 1
            nodes: [{ name: a, kind: player, params: { buffer: nothing } }]
            connections: [{ from: a, to: main }]
            """, to: "bad.yaml", in: dir)
        let error = #expect(throws: PatchLoadError.self) { try PatchLoader.apply(path: bad, to: engine) }
        #expect(error?.diagnostics.first?.message.contains("no buffer named 'nothing'") == true)
        #expect(engine.nodes().map(\.name) == before.0)
        #expect(engine.connections() == before.1)
        #expect(engine.buffers().map(\.name) == before.2)
        let wide = try Fixtures.write("version: 1\nengine: { outputs: 4 }\n", to: "wide.yaml", in: dir)
        #expect(throws: PatchLoadError.self) { try PatchLoader.apply(path: wide, to: engine) }
    }

    @Test func snapshotReloadsToTheSameGraph() throws {
        let loaded = try PatchLoader.load(path: Fixtures.patches.appendingPathComponent("submix.yaml").path)
        try loaded.engine.set("music", "pan", to: .float(-0.5))
        let yaml = PatchSnapshot.yaml(of: loaded.engine)
        let reparsed = try PatchParser.parse(text: yaml, names: .engine)
        let rebuilt = try PatchLoader.build(reparsed)
        #expect(rebuilt.engine.connections() == loaded.engine.connections())
        #expect(rebuilt.engine.nodes() == loaded.engine.nodes())
        #expect(rebuilt.engine.buffers().map(\.frameCount) == loaded.engine.buffers().map(\.frameCount))
        let a = OfflineRenderer(engine: loaded.engine).render(frameCount: 9600, hostBlockFrames: 128)
        let b = OfflineRenderer(engine: rebuilt.engine).render(frameCount: 9600, hostBlockFrames: 128)
        // The original glides to its new pan over 20 ms; from then on the two are identical.
        let same = (0..<2).allSatisfy { a[$0][1000...].elementsEqual(b[$0][1000...]) }
        #expect(same)
    }
}

@Suite struct FileAccessPolicyTests {
    @Test func pathsInsideRootsResolveAndOthersAreRefused() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let root = dir.appendingPathComponent("root")
        try FileManager.default.createDirectory(
            at: root.appendingPathComponent("sub"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            atPath: root.appendingPathComponent("escape").path, withDestinationPath: "/etc")
        let policy = FileAccessPolicy(roots: [root.path])
        let resolvedRoot = policy.roots[0]
        #expect(try policy.resolve("sub/a.wav") == resolvedRoot + "/sub/a.wav")
        #expect(try policy.resolve(root.path + "/new.yaml") == resolvedRoot + "/new.yaml")
        for bad in ["../outside.wav", "/etc/passwd", "escape/passwd", "sub/../../x", "", "a\u{0}b"] {
            #expect(throws: FileAccessError.self, "\(bad)") { try policy.resolve(bad) }
        }
        let error = #expect(throws: FileAccessError.self) { try policy.resolve("/etc/passwd") }
        #expect(error?.message.contains("outside the allowed file roots") == true)
    }
}
