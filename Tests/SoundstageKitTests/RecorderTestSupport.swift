import AudioFiles
import AudioGraph
import DSPTestSupport
import Foundation
import SoundstageKit
import Synchronization

/// Engines, signals and event logs shared by the recorder tests (48 kHz).
enum RecorderFixture {
    static let rate = 48_000.0

    /// Stereo seeded noise, different in each channel, so any misplaced or swapped frame shows.
    static func noise(frames: Int, seed: UInt64 = 7) -> [[Float]] {
        var random = SeededRandom(seed: seed)
        return (0..<2).map { _ in (0..<frames).map { _ in 0.5 * random.nextFloat() } }
    }

    /// An engine whose player `p` loops `channels` into `main`, started before the first frame.
    static func engine(playing channels: [[Float]], inputs: Int = 0) throws -> Engine {
        let engine = Engine(
            configuration: EngineConfiguration(
                sampleRate: rate, blockFrames: 64, outputChannelCount: 2, inputChannelCount: inputs))
        try engine.addBuffer(SampleBuffer(name: "material", channels: channels, sampleRate: rate))
        try engine.attach(
            .player, name: "p",
            parameters: [
                "buffer": .string("material"), "loop": .bool(true), "playing": .bool(true)
            ])
        try engine.connect("p", to: "main")
        return engine
    }

    /// Renders `frames` frames in host blocks of 333 (not a multiple of the tap block), polling every
    /// 1024 frames and at the end, and returns the output.
    static func render(_ engine: Engine, frames: Int, inputs: [[Float]]? = nil) -> [[Float]] {
        OfflineRenderer(engine: engine, pollInterval: 1024)
            .render(frameCount: frames, hostBlockFrames: 333, inputs: inputs)
    }

    /// Joins planar renders end to end.
    static func concatenate(_ parts: [[[Float]]]) -> [[Float]] {
        guard let first = parts.first else { return [] }
        return first.indices.map { c in parts.flatMap { $0[c] } }
    }

    /// Planar frames `range` of `channels`.
    static func slice(_ channels: [[Float]], _ range: Range<Int>) -> [[Float]] {
        channels.map { Array($0[range]) }
    }
}

/// Collects a recorder's events; waits for the one a test expects.
final class RecorderEventLog: Sendable {
    private let events = Mutex<[RecorderEvent]>([])

    init(_ recorder: Recorder) {
        recorder.setEventHandler { [self] event in events.withLock { $0.append(event) } }
    }

    var all: [RecorderEvent] { events.withLock { $0 } }

    /// Frames reported lost for `cause`.
    func lostFrames(_ cause: RecorderFrameLossCause) -> Int {
        all.reduce(0) { sum, event in
            if case .error(.framesLost(_, let frames, let eventCause)) = event, eventCause == cause {
                return sum + frames
            }
            return sum
        }
    }

    /// The reported errors, in order.
    var errors: [RecorderError] {
        all.compactMap { event in
            if case .error(let error) = event { return error }
            return nil
        }
    }

    /// The `finished` flags, in order.
    var finishes: [Bool] {
        all.compactMap { event in
            if case .finished(let successfully) = event { return successfully }
            return nil
        }
    }

    /// Waits up to `timeout` seconds for a `finished` event.
    func waitForFinish(timeout: Double = 10) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while finishes.isEmpty, Date() < deadline { usleep(2_000) }
        return !finishes.isEmpty
    }
}
