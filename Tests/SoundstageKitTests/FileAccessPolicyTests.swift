// File roots for paths that arrive over OSC: a path must lead, as the kernel would follow it, to a place
// inside a root, including through a symbolic link whose target does not exist yet (a write through it
// creates the target) and through `link/..`.
import Foundation
import SoundstageKit
import Testing

@Suite struct FileAccessPolicyLinkTests {
    @Test func linksAreFollowedAsTheKernelFollowsThem() throws {
        let base = NSTemporaryDirectory() + "roots-\(UUID().uuidString)"
        let root = base + "/root"
        let outside = base + "/outside"
        let fm = FileManager.default
        try fm.createDirectory(atPath: root + "/sub", withIntermediateDirectories: true)
        try fm.createDirectory(atPath: outside, withIntermediateDirectories: true)
        defer { try? fm.removeItem(atPath: base) }
        // Dangling links out of the root (relative and absolute), one into it, one into a folder out of it,
        // a loop.
        try fm.createSymbolicLink(atPath: root + "/dangle.yaml", withDestinationPath: "../outside/new.yaml")
        try fm.createSymbolicLink(atPath: root + "/abs.wav", withDestinationPath: outside + "/new.wav")
        try fm.createSymbolicLink(atPath: root + "/inside.wav", withDestinationPath: "sub/take.wav")
        try fm.createSymbolicLink(atPath: root + "/away", withDestinationPath: outside)
        try fm.createSymbolicLink(atPath: root + "/loop1", withDestinationPath: "loop2")
        try fm.createSymbolicLink(atPath: root + "/loop2", withDestinationPath: "loop1")
        let policy = FileAccessPolicy(roots: [root])
        let realRoot = try #require(policy.roots.first)

        for refused in ["dangle.yaml", "abs.wav", "away/x.wav", "away/../../outside/x.wav", "sub/../away/y.wav"] {
            #expect(throws: FileAccessError.self, "\(refused)") { try policy.resolve(refused) }
        }
        // `away/..` is the target's parent (base), not the root: outside.
        #expect(throws: FileAccessError.self) { try policy.resolve("away/../root/../outside/z.wav") }
        let loop = #expect(throws: FileAccessError.self) { try policy.resolve("loop1") }
        #expect(loop?.message.contains("loop") == true)

        #expect(try policy.resolve("inside.wav") == realRoot + "/sub/take.wav")
        #expect(try policy.resolve("sub/new.wav") == realRoot + "/sub/new.wav")
        #expect(try policy.resolve("./sub/../sub/./n.wav") == realRoot + "/sub/n.wav")
        #expect(try policy.resolve("away/../root/sub/m.wav") == realRoot + "/sub/m.wav")
        #expect(try policy.resolve("new/deeper/file.wav") == realRoot + "/new/deeper/file.wav")
    }
}
