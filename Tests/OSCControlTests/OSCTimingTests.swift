// Bundles: atomic application, time tags to exact frames, late bundles. These render in real time.
import AudioGraph
import Foundation
@testable import OSCControl
import Testing

@Suite(.serialized) struct OSCTimingTests {
    /// Two players of a constant buffer, one hard left and one hard right, stopped.
    private func twoPlayers(_ f: OSCFixture, frames: Int = 4800, click: Bool = false) throws {
        let samples = click ? OSCFixture.click(frames: frames) : Array(repeating: Float(1), count: frames)
        try f.engine.addBuffer(SampleBuffer(name: "b", channels: [samples], sampleRate: 48_000))
        for (name, pan) in [("left", -1.0), ("right", 1.0)] {
            #expect(
                f.client.command(
                    "/node/new",
                    [
                        .string("player"), .string(name), .string("buffer"), .string("b"),
                        .string("pan"), .double(pan)
                    ])?.address == "/done")
            #expect(f.client.command("/graph/connect", [.string(name), .string("main")])?.address == "/done")
        }
        Thread.sleep(forTimeInterval: 0.1)
    }

    @Test func bundleMessagesLandInTheSameCycle() throws {
        let f = try OSCFixture()
        try twoPlayers(f)
        // Waits (up to 5 s, a loaded machine renders late) for both channels to sound after `from`.
        func onsets(from: Int) -> (left: Int, right: Int)? {
            let deadline = Date().addingTimeInterval(5)
            while Date() < deadline {
                if let left = f.renderer.onset(channel: 0, from: from, threshold: 0.01),
                    let right = f.renderer.onset(channel: 1, from: from, threshold: 0.01)
                {
                    return (left, right)
                }
                Thread.sleep(forTimeInterval: 0.01)
            }
            return nil
        }
        var from = f.renderer.frameCount
        for _ in 0..<10 {
            f.client.sendBundle(.immediate, [OSCMessage("/node/left/play"), OSCMessage("/node/right/play")])
            let onset = try #require(onsets(from: from), "the players never sounded")
            #expect(onset.left == onset.right)
            f.client.sendBundle(.immediate, [OSCMessage("/node/left/stop"), OSCMessage("/node/right/stop")])
            // The next search starts once both have stopped (a full period of silence on both channels).
            func sounding() -> Bool {
                f.renderer.onset(channel: 0, from: max(0, from - 256), threshold: 0.01) != nil
                    || f.renderer.onset(channel: 1, from: max(0, from - 256), threshold: 0.01) != nil
            }
            let deadline = Date().addingTimeInterval(5)
            repeat {
                Thread.sleep(forTimeInterval: 0.01)
                from = f.renderer.frameCount
            } while Date() < deadline && sounding()
            try #require(!sounding(), "the players never stopped")
        }
        #expect(f.client.takeErrors().isEmpty)
    }

    /// A bundle with a bad message changes nothing, whether the bad message names a node that is not there
    /// (or was freed earlier in the bundle) or a value out of range; nodes made earlier in a bundle can be
    /// addressed by the messages after them.
    @Test func aBundleWithABadMessageChangesNothing() throws {
        let f = try OSCFixture()
        func bundle(_ messages: [OSCMessage]) -> OSCMessage? {
            f.client.sendBundle(.immediate, messages)
            #expect(f.client.request("/sync", reply: "/synced") != nil)
            return f.client.takeErrors().first
        }
        let volume = try f.engine.get("main", "outputVolume")
        var error = bundle([
            OSCMessage("/node/main/outputVolume", [.float(0.5)]),
            OSCMessage("/node/ghost/volume", [.float(0.3)])
        ])
        #expect(error?.errorCode == 10)
        #expect(try f.engine.get("main", "outputVolume") == volume, "the good message of a refused bundle applied")

        error = bundle([
            OSCMessage("/node/new", [.string("mixer"), .string("m1")]),
            OSCMessage("/graph/connect", [.string("m1"), .string("main")]),
            OSCMessage("/node/m1/outputVolume", [.float(2)])
        ])
        #expect(error?.errorCode == 22)
        if case .string(let text)? = error?.arguments.last {
            #expect(text.contains("nothing in the bundle was applied"))
        }
        #expect(!f.engine.nodes().contains { $0.name == "m1" }, "a node made by a refused bundle exists")

        error = bundle([
            OSCMessage("/node/new", [.string("mixer"), .string("m2"), .string("outputVolume"), .float(0.25)]),
            OSCMessage("/node/m2/outputVolume", [.float(0.5)]),
            OSCMessage("/node/m2/position", [.float(1), .float(2), .float(3)]),
            OSCMessage("/graph/connect", [.string("m2"), .string("main")])
        ])
        #expect(error == nil, "\(String(describing: error))")
        #expect(try f.engine.get("m2", "outputVolume") == .float(0.5))
        #expect(f.engine.connections().contains { $0.source == "m2" && $0.destination == "main" })

        error = bundle([OSCMessage("/node/free", [.string("m2")]), OSCMessage("/node/m2/outputVolume", [.float(0.1)])])
        #expect(error?.errorCode == 10)
        #expect(try f.engine.get("m2", "outputVolume") == .float(0.5), "a node freed by a refused bundle is gone")

        error = bundle([
            OSCMessage("/node/m2/outputVolume", [.float(0.75)]),
            OSCMessage("/node/m2/position", [.float(1), .float(2e9), .float(3)])
        ])
        #expect(error?.errorCode == 22)
        #expect(try f.engine.get("m2", "outputVolume") == .float(0.5))
    }

    @Test func timetagsHalfASecondApartStart24000FramesApart() throws {
        let f = try OSCFixture()
        try twoPlayers(f, frames: 48, click: true)
        for _ in 0..<5 {
            let from = f.renderer.frameCount
            let t0 = OSCTimetag.now().adding(seconds: 0.3)
            f.client.sendBundle(
                t0, [],
                nested: [
                    (t0, [OSCMessage("/node/left/play")]),
                    (t0.adding(seconds: 0.5), [OSCMessage("/node/right/play")])
                ])
            Thread.sleep(forTimeInterval: 1.0)
            let left = try #require(f.renderer.onset(channel: 0, from: from))
            let right = try #require(f.renderer.onset(channel: 1, from: from))
            #expect(right - left == 24_000)
            f.client.sendBundle(.immediate, [OSCMessage("/node/left/stop"), OSCMessage("/node/right/stop")])
            Thread.sleep(forTimeInterval: 0.05)
        }
        #expect(f.client.take("/late").isEmpty)
        #expect(f.client.takeErrors().isEmpty)
    }

    @Test func parameterSetsLandOnTheirFrame() throws {
        let f = try OSCFixture()
        // A looping ramp 0…1 per second: setting `start` rewinds to the region start, so each channel
        // jumps to 0.5 exactly on the frame where its set landed.
        let ramp = (0..<48_000).map { Float($0) / 48_000 }
        try f.engine.addBuffer(SampleBuffer(name: "ramp", channels: [ramp], sampleRate: 48_000))
        for (name, pan) in [("left", -1.0), ("right", 1.0)] {
            _ = f.client.command(
                "/node/new",
                [
                    .string("player"), .string(name), .string("buffer"), .string("ramp"),
                    .string("pan"), .double(pan), .string("loop"), .bool(true)
                ])
            _ = f.client.command("/graph/connect", [.string(name), .string("main")])
        }
        f.client.sendBundle(.immediate, [OSCMessage("/node/left/play"), OSCMessage("/node/right/play")])
        Thread.sleep(forTimeInterval: 0.1)
        let from = f.renderer.frameCount
        let t0 = OSCTimetag.now().adding(seconds: 0.25)
        f.client.sendBundle(
            t0, [],
            nested: [
                (t0, [OSCMessage("/node/left/start", [.int32(24_000)])]),
                (t0.adding(seconds: 0.1), [OSCMessage("/node/right/start", [.int32(24_000)])])
            ])
        Thread.sleep(forTimeInterval: 0.6)
        func jump(_ c: Int) -> Int? {
            let samples = f.renderer.channel(c)
            var i = from + 1
            while i < samples.count {
                if abs(samples[i] - 0.5) < 1e-4 && abs(samples[i] - samples[i - 1]) > 0.01 { return i }
                i += 1
            }
            return nil
        }
        let left = try #require(jump(0))
        let right = try #require(jump(1))
        #expect(right - left == 4_800)
        #expect(f.client.takeErrors().isEmpty)
    }

    @Test func lateBundlesApplyAtOnceAndAreReported() throws {
        let f = try OSCFixture()
        try twoPlayers(f)
        let from = f.renderer.frameCount
        f.client.sendBundle(OSCTimetag.now().adding(seconds: -0.5), [OSCMessage("/node/left/play")])
        f.client.receive(timeout: 2) { $0.address == "/late" }
        let late = try #require(f.client.take("/late").first)
        #expect(late.arguments.first == .string("/node/left/play"))
        if case .float(let seconds) = late.arguments[1] { #expect(seconds > 0.4 && seconds < 1.5) }
        Thread.sleep(forTimeInterval: 0.1)
        #expect(f.renderer.onset(channel: 0, from: from, threshold: 0.01) != nil)
    }

    /// A bundle that arrives on time but reaches the render thread after its frame, because another
    /// thread held the engine (as a patch swap on the OSC worker does), is answered /late rather than
    /// applied late in silence.
    @Test func aBundleHeldUpByAnotherThreadsBatchIsAnsweredLate() throws {
        let f = try OSCFixture()
        try twoPlayers(f)
        let engine = f.engine
        let holder = Thread {
            try? engine.batch { () throws(EngineError) in Thread.sleep(forTimeInterval: 0.45) }
        }
        holder.start()
        Thread.sleep(forTimeInterval: 0.03)
        let from = f.renderer.frameCount
        f.client.sendBundle(OSCTimetag.now().adding(seconds: 0.15), [OSCMessage("/node/left/play")])
        f.client.receive(timeout: 2) { $0.address == "/late" }
        let late = try #require(f.client.take("/late").first, "a bundle applied past its frame got no /late")
        #expect(late.arguments.first == .string("/node/left/play"))
        if case .float(let seconds) = late.arguments[1] {
            #expect(seconds > 0.1 && seconds < 0.6, "late by \(seconds) s")
        }
        Thread.sleep(forTimeInterval: 0.1)
        #expect(f.renderer.onset(channel: 0, from: from, threshold: 0.01) != nil)
        #expect(f.client.takeErrors().isEmpty)
    }

    @Test func playWithATimetagArgument() throws {
        let f = try OSCFixture()
        try twoPlayers(f, frames: 48, click: true)
        let from = f.renderer.frameCount
        let t0 = OSCTimetag.now().adding(seconds: 0.2)
        f.client.send("/node/left/play", [.timetag(t0)])
        f.client.send("/node/right/play", [.timetag(t0.adding(seconds: 0.25))])
        Thread.sleep(forTimeInterval: 0.8)
        let left = try #require(f.renderer.onset(channel: 0, from: from))
        let right = try #require(f.renderer.onset(channel: 1, from: from))
        // Two separate conversions: each lands within a frame of its tag's exact offset.
        #expect(abs(right - left - 12_000) <= 1)
    }

    @Test func farFutureTimetagsAreRefused() throws {
        let f = try OSCFixture()
        f.client.sendBundle(OSCTimetag.now().adding(seconds: 7200), [OSCMessage("/ping")])
        f.client.receive(timeout: 2) { $0.address == "/error" }
        #expect(f.client.takeErrors().first?.errorCode == 65)
    }
}
