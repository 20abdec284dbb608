// /buffer/* and /patch/*: staged loads with /done, file roots, patch round trips.
import AudioGraph
import DSPTestSupport
import Foundation
import Patches
@testable import OSCControl
import SoundstageKit
import Synchronization
import Testing

@Suite struct OSCFileTests {
    @Test func bufferLoadListAndFree() throws {
        let f = try OSCFixture()
        let path = try f.writeWAV(
            "stereo.wav", channels: [Array(repeating: 0.5, count: 2400), Array(repeating: -0.5, count: 2400)],
            rate: 24_000)
        let done = f.client.command("/buffer/load", [.string("s"), .string(path)])
        // Converted to the engine rate: 2400 frames at 24 kHz are 4800 at 48 kHz.
        #expect(done?.arguments == [.string("/buffer/load"), .string("s"), .int32(4800), .int32(2), .float(48_000)])
        f.client.send("/buffer/list")
        f.client.receive(timeout: 2) { $0.address == "/reply" }
        #expect(
            f.client.take("/buffer/info").first?.arguments == [.string("s"), .int32(2), .int32(4800), .float(48_000)])
        #expect(f.client.command("/buffer/free", [.string("s")])?.address == "/done")
        #expect(f.engine.buffers().isEmpty)
        #expect(f.client.command("/buffer/free", [.string("s")])?.errorCode == 40)
    }

    /// `/buffer/free` sent right after a `/buffer/load` of the same name applies after it, as sent: the
    /// free is answered after the load, and no buffer is left (before, the free found nothing or freed the
    /// old buffer, and the load then installed its own).
    @Test func aFreeRightAfterALoadOfThatNameAppliesAfterIt() throws {
        let f = try OSCFixture()
        // Two seconds at 24 kHz: converted to 48 kHz on the worker, so the load is still running when the
        // free arrives.
        let path = try f.writeWAV("slow.wav", channels: [Array(repeating: 0.25, count: 48_000)], rate: 24_000)
        for existing in [false, true] {
            if existing {
                #expect(f.client.command("/buffer/load", [.string("x"), .string(path)])?.address == "/done")
            }
            f.client.send("/buffer/load", [.string("x"), .string(path)])
            f.client.send("/buffer/free", [.string("x")])
            let replies = f.client.receive(timeout: 10) {
                $0.address != "/done" || $0.arguments.first == .string("/buffer/free")
            }
            #expect(
                replies.map(\.arguments.first) == [.string("/buffer/load"), .string("/buffer/free")],
                "\(existing ? "replacing" : "a new name"): \(replies)")
            #expect(replies.allSatisfy { $0.address == "/done" }, "\(replies)")
            #expect(!f.engine.buffers().contains { $0.name == "x" }, "the buffer outlived its free")
            _ = f.client.takeAll()
        }
        // With nothing in flight a free answers at once, and a second one finds no buffer.
        #expect(f.client.command("/buffer/free", [.string("x")])?.errorCode == 40)
    }

    /// `/status/memory` counts what a loaded buffer holds: ten seconds of stereo at 48 kHz are 3.84 MB of
    /// samples, so the heap in use is at least that while the buffer is loaded (other suites running in the
    /// same process only add to it).
    @Test func memoryStatusCountsALoadedBuffer() throws {
        let f = try OSCFixture()
        let frames = 480_000
        let path = try f.writeWAV(
            "long.wav",
            channels: [
                Array(repeating: 0.25, count: frames),
                Array(repeating: -0.25, count: frames)
            ])
        #expect(f.client.command("/buffer/load", [.string("long"), .string(path)])?.address == "/done")
        let reply = try #require(f.client.request("/status/memory", reply: "/status/memory.reply"))
        #expect(reply.typeTags == "hhhhi")
        guard case .int64(let resident) = reply.arguments[0], case .int64(let inUse) = reply.arguments[1],
            case .int64(let free) = reply.arguments[2], case .int64(let mapped) = reply.arguments[3]
        else {
            Issue.record("unexpected arguments \(reply.arguments)")
            return
        }
        if inUse == -1 {
            // The allocator gives no figures (a sanitizer's replaces glibc's): all three say so.
            #expect(free == -1 && mapped == -1)
        } else {
            #expect(inUse >= Int64(frames * 2 * MemoryLayout<Float>.size))
            #expect(mapped <= inUse)
            #expect(free >= 0)
        }
        #expect(resident >= Int64(frames * 2 * MemoryLayout<Float>.size))
        #expect(reply.arguments[4] == .int32(2))  // main and output
        #expect(f.client.command("/status/memory", [.int32(1)])?.errorCode == OSCErrorCode.Layer.badArguments.rawValue)
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

    /// A FIFO nobody reads is not waited for: `/patch/save` waits 5 s for a reader, then refuses, and a
    /// recorder refuses a FIFO at once (both would otherwise hold the worker, and every client's file
    /// requests behind it, until a reader came). The worker is free afterwards.
    @Test func aFIFOWithoutAReaderIsRefusedAndTheWorkerStaysFree() throws {
        let f = try OSCFixture()
        let fifo = f.directory + "/pipe.wav"
        #expect(mkfifo(fifo, 0o600) == 0)
        let start = SystemClock.monotonicSeconds()
        let save = f.client.command("/patch/save", [.string("pipe.wav")], timeout: 10)
        let waited = SystemClock.monotonicSeconds() - start
        #expect(save?.errorCode == 42, "\(String(describing: save))")
        #expect(
            save?.arguments.last == .string("cannot write the FIFO 'pipe.wav': no program read it within 5 s"),
            "\(String(describing: save))")
        #expect(waited > 4.5 && waited < 8, "waited \(waited) s")
        let recorder = f.client.command("/recorder/new", [.string("r"), .string("main"), .string("pipe.wav")])
        #expect(recorder?.errorCode == 42, "\(String(describing: recorder))")
        #expect(f.client.command("/patch/save", [.string("after.yaml")])?.address == "/done")
    }

    @Test func patchSaveThenLoadRestoresTheGraph() throws {
        let f = try OSCFixture(host: MockHost())
        _ = f.client.command("/node/new", [.string("mixer"), .string("sub"), .string("outputVolume"), .float(0.25)])
        _ = f.client.command("/graph/connect", [.string("sub"), .string("main")])
        _ = f.client.command("/graph/connect", [.string("soundstage:out_1"), .string("system:playback_2")])
        #expect(
            f.client.command("/patch/save", [.string("saved.yaml")])?.arguments == [
                .string("/patch/save"), .string("saved.yaml")
            ])
        let text = try String(contentsOfFile: f.directory + "/saved.yaml", encoding: .utf8)
        #expect(text.contains("sub"))
        // The host's JACK connections, our port by its short name.
        let saved = try PatchParser.parse(contentsOf: f.directory + "/saved.yaml", names: .engine)
        #expect(saved.jack.connections.map { "\($0.from)>\($0.to)" } == ["out_1>system:playback_2"])
        _ = f.client.command("/node/free", [.string("sub")])
        #expect(f.client.command("/patch/load", [.string("saved.yaml")])?.address == "/done")
        #expect(try f.engine.get("sub", "outputVolume") == .float(0.25))
    }

    /// A graph built entirely over OSC (a buffer loaded from a file, players, effects, float parameters
    /// sent as OSC floats) is saved, loaded into a new engine, and both are rendered from the start: the
    /// same nodes, parameters and connections, and the same samples.
    @Test func aGraphBuiltOverOSCSavesAndReloadsToTheSameGraphAndSound() throws {
        let f = try OSCFixture(render: false)
        let noise: [Float] = (0..<24_000).map { (i: Int) -> Float in
            let t = Double(i)
            return Float(0.4 * sin(t * 0.731) + 0.3 * sin(t * 0.0919))
        }
        _ = try f.writeWAV("nz.wav", channels: [noise, noise.reversed()])
        #expect(
            f.client.command("/buffer/load", [.string("nz"), .string("nz.wav"), .int32(1_000), .int32(20_000)])?.address
                == "/done")
        let requests: [(String, [OSCArgument])] = [
            (
                "/node/new",
                [
                    .string("player"), .string("p"), .string("buffer"), .string("nz"), .string("loop"), .int32(1),
                    .string("playing"), .int32(1), .string("volume"), .float(0.2), .string("pan"), .float(-0.3)
                ]
            ),
            ("/node/new", [.string("mixer"), .string("sub"), .string("outputVolume"), .float(0.7)]),
            (
                "/node/new",
                [
                    .string("delay"), .string("dl"), .string("delayTime"), .float(0.123), .string("feedback"),
                    .float(35.5),
                    .string("wetDryMix"), .float(40)
                ]
            ),
            (
                "/node/new",
                [
                    .string("eq"), .string("eq"), .string("bands"), .int32(1), .string("band0.frequency"),
                    .float(1234.5),
                    .string("band0.gain"), .float(-6.1), .string("band0.bypass"), .int32(0)
                ]
            ),
            ("/graph/connect", [.string("p"), .string("dl")]),
            ("/graph/connect", [.string("dl"), .string("eq")]),
            ("/graph/connect", [.string("eq"), .string("sub")]),
            ("/graph/connect", [.string("sub"), .string("main")])
        ]
        for (address, arguments) in requests {
            let reply = f.client.command(address, arguments)
            #expect(reply?.address == "/done", "\(address): \(String(describing: reply))")
        }
        #expect(f.client.command("/patch/save", [.string("saved.yaml")])?.address == "/done")
        let text = try String(contentsOfFile: f.directory + "/saved.yaml", encoding: .utf8)
        #expect(
            text.contains("volume: 0.2\n") && text.contains("delayTime: 0.123\n")
                && text.contains("band0.frequency: 1234.5\n"),
            "floats are not in their shortest form:\n\(text)")
        #expect(!text.contains("0000000"), "a float written at double precision:\n\(text)")

        let reloaded = try PatchLoader.load(path: f.directory + "/saved.yaml").engine
        #expect(reloaded.buffers().map(\.name) == ["nz"])
        #expect(reloaded.buffers().first?.frameCount == 20_000)
        #expect(reloaded.connections() == f.engine.connections())
        let original = Dictionary(uniqueKeysWithValues: f.engine.nodes().map { ($0.name, $0) })
        for node in reloaded.nodes() {
            let live = try #require(original[node.name], "\(node.name) was not in the saved graph")
            #expect(node.kind == live.kind && node.outputChannelCount == live.outputChannelCount, "\(node.name)")
            for (key, value) in live.parameters {
                // OSC carried 32-bit floats; the patch holds them exactly to that precision.
                let reloadedValue = node.parameters[key]
                let asFloat: (ParameterValue?) -> Float? = { $0?.doubleValue.map { Float($0) } }
                let same =
                    value == reloadedValue || (value.doubleValue != nil && asFloat(value) == asFloat(reloadedValue))
                #expect(
                    same, "\(node.name).\(key): \(value) live, \(String(describing: node.parameters[key])) reloaded")
            }
        }
        #expect(reloaded.nodes().count == f.engine.nodes().count)

        let a = OfflineRenderer(engine: f.engine).render(frameCount: 48_000, hostBlockFrames: 256)
        let b = OfflineRenderer(engine: reloaded).render(frameCount: 48_000, hostBlockFrames: 256)
        #expect(SignalStats.peak(a[0][24_000...]) > 0.01, "the original graph is silent")
        let difference = zip(a[0] + a[1], b[0] + b[1]).map { abs($0 - $1) }.max() ?? 1
        #expect(difference == 0, "the reloaded graph sounds different: largest sample difference \(difference)")
    }

    /// The mixer the sound pool makes for itself is not part of the user's graph: a saved patch leaves
    /// it out, loads again over OSC, and a sound played afterwards still plays.
    @Test func theSoundPoolIsNotSavedAsAGraphNode() throws {
        let f = try OSCFixture()
        _ = try f.writeWAV("beep.wav", channels: [Array(repeating: 0.25, count: 4_800)])
        #expect(f.client.command("/buffer/load", [.string("beep"), .string("beep.wav")])?.address == "/done")
        #expect(f.client.command("/sound/play", [.string("beep")])?.address == "/done")
        #expect(f.engine.nodes().contains { $0.name == "sounds" })
        #expect(f.client.command("/patch/save", [.string("saved.yaml")])?.address == "/done")
        let text = try String(contentsOfFile: f.directory + "/saved.yaml", encoding: .utf8)
        #expect(!text.contains("sounds"), "the sound pool's mixer was saved:\n\(text)")
        #expect(text.contains("beep"), "the buffer loaded over OSC was not saved:\n\(text)")
        #expect(f.client.command("/patch/load", [.string("saved.yaml")])?.address == "/done")
        #expect(f.client.command("/sound/play", [.string("beep")])?.address == "/done")
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
        try "version: 1\nnodes:\n  - name: x\n    kind: theremin\n".write(
            toFile: f.directory + "/bad.yaml", atomically: true,
            encoding: .utf8)
        let reply = try #require(f.client.command("/patch/load", [.string("bad.yaml")]))
        #expect(reply.errorCode == 67)
        if case .string(let message) = reply.arguments[2] { #expect(message.contains("theremin")) }
        #expect(f.engine.nodes().contains { $0.name == "keep" })
    }
}
