// /buffer/* and /patch/*: staged loads with /done, file roots, patch round trips.
import AudioGraph
import Foundation
@testable import OSCControl
import Synchronization
import Testing

@Suite struct OSCFileTests {
    @Test func bufferLoadListAndFree() throws {
        let f = try OSCFixture()
        let path = try f.writeWAV("stereo.wav", channels: [Array(repeating: 0.5, count: 2400), Array(repeating: -0.5, count: 2400)],
                                  rate: 24_000)
        let done = f.client.command("/buffer/load", [.string("s"), .string(path)])
        // Converted to the engine rate: 2400 frames at 24 kHz are 4800 at 48 kHz.
        #expect(done?.arguments == [.string("/buffer/load"), .string("s"), .int32(4800), .int32(2), .float(48_000)])
        f.client.send("/buffer/list")
        f.client.receive(timeout: 2) { $0.address == "/reply" }
        #expect(f.client.take("/buffer/info").first?.arguments == [.string("s"), .int32(2), .int32(4800), .float(48_000)])
        #expect(f.client.command("/buffer/free", [.string("s")])?.address == "/done")
        #expect(f.engine.buffers().isEmpty)
        #expect(f.client.command("/buffer/free", [.string("s")])?.errorCode == 40)
    }

    @Test func bufferLoadRegionAndRelativePath() throws {
        let f = try OSCFixture()
        _ = try f.writeWAV("mono.wav", channels: [(0..<1000).map { Float($0) / 1000 }])
        let done = f.client.command("/buffer/load", [.string("r"), .string("mono.wav"), .int64(100), .int32(200)])
        #expect(done?.arguments == [.string("/buffer/load"), .string("r"), .int32(200), .int32(1), .float(48_000)])
    }

    @Test func pathsOutsideTheRootsAndMissingFilesAreRefused() throws {
        let f = try OSCFixture()
        #expect(f.client.command("/buffer/load", [.string("x"), .string("/etc/hostname")])?.errorCode == 64)
        #expect(f.client.command("/buffer/load", [.string("x"), .string("../../etc/hostname")])?.errorCode == 64)
        #expect(f.client.command("/buffer/load", [.string("x"), .string("missing.wav")])?.errorCode == 42)
        #expect(f.client.command("/buffer/load", [.string("bad name"), .string("missing.wav")])?.errorCode == 12)
        #expect(f.client.command("/patch/save", [.string("/tmp/outside.yaml")])?.errorCode == 64)
        _ = f.client.command("/node/new", [.string("player"), .string("p")])
        f.client.send("/node/p/file", [.string("/etc/hostname")])
        f.client.receive(timeout: 2) { $0.address == "/error" }
        #expect(f.client.takeErrors().first?.errorCode == 64)
    }

    @Test func patchSaveThenLoadRestoresTheGraph() throws {
        let f = try OSCFixture()
        _ = f.client.command("/node/new", [.string("mixer"), .string("sub"), .string("outputVolume"), .float(0.25)])
        _ = f.client.command("/graph/connect", [.string("sub"), .string("main")])
        #expect(f.client.command("/patch/save", [.string("saved.yaml")])?.arguments == [.string("/patch/save"), .string("saved.yaml")])
        let text = try String(contentsOfFile: f.directory + "/saved.yaml", encoding: .utf8)
        #expect(text.contains("sub"))
        _ = f.client.command("/node/free", [.string("sub")])
        #expect(f.client.command("/patch/load", [.string("saved.yaml")])?.address == "/done")
        #expect(try f.engine.get("sub", "outputVolume") == .float(0.25))
    }

    @Test func patchSaveWritesThroughAFIFOAndLeavesItAFIFO() throws {
        let f = try OSCFixture()
        _ = f.client.command("/node/new", [.string("mixer"), .string("sub")])
        let fifo = f.directory + "/saved.yaml"
        try #require(mkfifo(fifo, 0o666) == 0)
        let received = Mutex("")
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            if let handle = FileHandle(forReadingAtPath: fifo), let data = try? handle.readToEnd() {
                received.withLock { $0 = String(decoding: data, as: UTF8.self) }
            }
            done.signal()
        }
        #expect(f.client.command("/patch/save", [.string("saved.yaml")])?.address == "/done")
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(received.withLock { $0 }.contains("sub"))
        var status = stat()
        lstat(fifo, &status)
        #expect(status.st_mode & S_IFMT == S_IFIFO, "the FIFO was replaced by a file")
    }

    @Test func badPatchesAreReportedAndChangeNothing() throws {
        let f = try OSCFixture()
        _ = f.client.command("/node/new", [.string("mixer"), .string("keep")])
        try "version: 1\nnodes:\n  - name: x\n    kind: theremin\n".write(toFile: f.directory + "/bad.yaml", atomically: true,
                                                                           encoding: .utf8)
        let reply = try #require(f.client.command("/patch/load", [.string("bad.yaml")]))
        #expect(reply.errorCode == 67)
        if case .string(let message) = reply.arguments[2] { #expect(message.contains("theremin")) }
        #expect(f.engine.nodes().contains { $0.name == "keep" })
    }
}
